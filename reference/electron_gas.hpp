#pragma once
// Exact finite-N Hartree-Fock energy of the homogeneous electron gas
// (jellium) in a periodic cube with the Ewald interaction, Hartree atomic
// units. Derived from the plane waves and the lattice sums alone (nothing
// from strategies/), so that it can judge the orbital, Ewald and sampling
// code.
//
// What: for closed shells of N_up and N_down plane waves k = (2 pi / L) n,
// n in Z^3, filled by |n|^2, the energy of the determinant(s)
//   E = sum_sigma sum_{k occ} k^2 / 2 + N xi / 2 - (2 pi / V) sum_sigma sum_{k != k' occ} 1 / |k - k'|^2,
// N = N_up + N_down, V = L^3 = (4 pi / 3) rs^3 N, xi the Madelung constant of
// the simple cubic lattice with background (madelung_constant, computed here
// by the self-dual Ewald split). The derivation: electron_gas.cpp.
// Preconditions and errors: std::invalid_argument for an open shell (N_up
// must be a closed shell >= 1, N_down a closed shell or 0), for a density
// parameter or box length that is not finite and positive, or N_total < 1.
// Cost: O(N_sigma^2) integer operations per spin (a histogram of |n - n'|^2).

#include <Eigen/Core>

#include <array>
#include <vector>

namespace slaterlab::reference {

/// The parts of the Hartree-Fock energy per cell, in Hartree.
struct GasEnergy {
  double kinetic = 0.0;   ///< sum_sigma sum_k k^2 / 2
  double exchange = 0.0;  ///< -(2 pi / V) sum_sigma sum_{k != k'} 1 / |k - k'|^2
  double madelung = 0.0;  ///< N xi / 2
  double total = 0.0;     ///< the sum of the three
};

/// L = (4 pi N_total / 3)^{1/3} rs.
double gas_box_length(Eigen::Index n_total, double rs);

/// xi = lim_{r->0} (phi(r) - 1/r) of the Ewald potential of a cube of side
/// box_length: -2.8372974794806... / box_length.
double madelung_constant(double box_length);

/// True when n >= 1 plane waves fill whole shells of |n|^2.
bool plane_wave_closed_shell(Eigen::Index n);

/// The n of the lowest `count` plane waves, sorted by |n|^2 (the order inside
/// a shell is unspecified). Throws std::invalid_argument unless
/// plane_wave_closed_shell(count).
std::vector<std::array<int, 3>> plane_wave_shells(Eigen::Index count);

/// sum over the closed shell of |n|^2 (exact integer).
long long plane_wave_norm2_sum(Eigen::Index count);

/// sum_{n != n' in the closed shell} 1 / |n - n'|^2 (ordered pairs).
double plane_wave_exchange_sum(Eigen::Index count);

/// The Hartree-Fock energy of n_up + n_down electrons at density rs.
GasEnergy hartree_fock_energy(Eigen::Index n_up, Eigen::Index n_down, double rs);

}  // namespace slaterlab::reference
