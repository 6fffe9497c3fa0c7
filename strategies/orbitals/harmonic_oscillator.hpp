#pragma once
// Analytic orbitals of the 3D isotropic harmonic oscillator (hbar = m = 1).
//
// phi_{nx,ny,nz}(r) = h_nx(x) h_ny(y) h_nz(z), h_n the normalised Hermite
// functions of frequency alpha, evaluated by their three-term recurrence (no
// factorial, no raw Hermite polynomial: no overflow or catastrophic
// cancellation for n up to 20 and beyond) with analytic derivatives, so each
// orbital satisfies -1/2 lap phi + alpha^2 r^2/2 phi = alpha (n + 3/2) phi to
// rounding (the exactness the VMC exact energy relies on). The formulas are
// in harmonic_oscillator.cpp.
//
// Orbital order: the lowest N states by shell n = nx+ny+nz; inside a shell,
// nx descending, then ny descending. Closed shells give N = 1, 4, 10, 20, 35,
// ...; any N >= 1 is accepted (an open shell takes the first states of the
// last shell in that order).

#include "slaterlab/strategies/orbitals/orbital_set.hpp"

#include <array>
#include <vector>

namespace slaterlab {

/// Number of states in shells 0..n_max: (n_max+1)(n_max+2)(n_max+3)/6.
Eigen::Index ho_closed_shell_size(int n_max);
/// True when N fills shells 0..n_max completely for some n_max.
bool ho_is_closed_shell(Eigen::Index n);
/// Shell n = nx+ny+nz of orbital i (0-based) in the order above.
int ho_shell_of(Eigen::Index i);
/// (nx, ny, nz) of the lowest N states, in the order above. Throws
/// std::invalid_argument for N < 1.
std::vector<std::array<int, 3>> ho_quantum_numbers(Eigen::Index n);
/// sum_i (n_i + 3/2) over the lowest N states: the total energy of the Slater
/// determinant is alpha times this, and the variational energy E(alpha) is
/// (alpha/2 + w^2/(2 alpha)) times this.
double ho_energy_sum(Eigen::Index n);

/// Normalised Hermite functions h_0..h_{n_max}(x) for frequency alpha into
/// `h` (size n_max + 1), by the recurrence above.
void hermite_functions(double x, double alpha, int n_max, double* h);

class HarmonicOscillatorOrbitals final : public OrbitalSet {
 public:
  /// The lowest `n` states of frequency `alpha`. Throws std::invalid_argument
  /// for n < 1 or alpha <= 0 (or not finite).
  HarmonicOscillatorOrbitals(Eigen::Index n, double alpha);

  Eigen::Index size() const override { return static_cast<Eigen::Index>(quanta_.size()); }
  std::string label() const override { return "analytic"; }
  void evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const override;
  void evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const override;

  double alpha() const { return alpha_; }
  /// Highest shell occupied.
  int max_shell() const { return n_max_; }
  /// (nx, ny, nz) of orbital i.
  const std::array<int, 3>& quantum_numbers(Eigen::Index i) const { return quanta_[i]; }
  /// Eigenvalue alpha (n_i + 3/2) of orbital i.
  double orbital_energy(Eigen::Index i) const;

 private:
  double alpha_;
  int n_max_;
  std::vector<std::array<int, 3>> quanta_;
};

}  // namespace slaterlab
