#pragma once
// Plane-wave orbitals of the homogeneous electron gas (jellium) in a periodic
// cubic cell of side L (Hartree atomic units), and the B-spline box for them.
//
// What: the closed shells of wave vectors k = (2 pi / L) n, n in Z^3, filled
// by |n|^2 (orbital counts per spin 1, 7, 19, 27, 33, 57, 81, 93, 123, ...),
// as real orbitals: orbital 0 is the constant 1; each +-n pair (representative
// n: its first nonzero component positive) gives sqrt(2) cos(k.r) and then
// sqrt(2) sin(k.r). Shells in increasing |n|^2; inside a shell the
// representatives in descending lexicographic order of (nx, ny, nz). Every
// orbital has mean square 1 over the cell, so entries are O(1) at any L.
// Values, gradients and Laplacians are analytic (Laplacian = -|k|^2 phi).
// Preconditions: N per spin a closed shell; L finite and positive. Positions
// may lie anywhere (the orbitals are periodic).
// Guarantees: evaluation is const and thread-safe; each power e^{i 2 pi m x/L}
// is its own sin/cos, so a value's error is about (2 pi |n|_1 (|x/L| + 1) + 8)
// eps, the order of the rounding of x itself propagated (electron_gas.cpp).
// Errors: std::invalid_argument with a one-line message; for an open shell it
// names the nearest closed shells below and above. Model, order and the grid
// rule with its measured errors: docs/electron-gas.md.

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/orbital_set.hpp"

#include <array>
#include <vector>

namespace slaterlab {

/// Every closed-shell orbital count per spin <= up_to, ascending (1, 7, 19, ...).
std::vector<Eigen::Index> gas_closed_shells(Eigen::Index up_to);
/// True when n is one of gas_closed_shells.
bool gas_is_closed_shell(Eigen::Index n);
/// Throws std::invalid_argument unless n is a closed shell, e.g. "electron
/// gas: N = 100 per spin is not a closed shell; the nearest are 93 and 123".
void gas_require_closed_shell(Eigen::Index n);
/// The integer vectors n of the N orbitals per spin, in orbital order (the
/// cos and sin orbitals of a pair share theirs; orbital 0 has n = 0). Throws
/// as gas_require_closed_shell.
std::vector<std::array<int, 3>> gas_wave_numbers(Eigen::Index n_per_spin);

class ElectronGasOrbitals final : public OrbitalSet {
 public:
  /// The closed shell of n_per_spin orbitals in a cell of side box_length.
  /// Throws std::invalid_argument for an open shell or a box_length that is
  /// not finite and positive.
  ElectronGasOrbitals(Eigen::Index n_per_spin, double box_length);

  Eigen::Index size() const override { return static_cast<Eigen::Index>(wave_numbers_.size()); }
  std::string label() const override { return "analytic"; }
  void evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const override;
  void evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const override;

  double box_length() const { return box_length_; }
  /// Integer vector n of orbital i (k = 2 pi n / L).
  const std::array<int, 3>& wave_numbers(Eigen::Index i) const { return wave_numbers_[i]; }
  /// Wave vector k of orbital i.
  Eigen::Vector3d k_vector(Eigen::Index i) const;
  /// Largest |n_d| over the orbitals and directions.
  int max_wave_number() const { return n_max_; }
  /// sum_i |k_i|^2 / 2: the local kinetic energy -1/2 sum_j lap_j D / D of
  /// the determinant at every configuration (lap phi_i = -|k_i|^2 phi_i).
  double kinetic_sum() const;

 private:
  double box_length_;
  int n_max_;
  std::vector<std::array<int, 3>> wave_numbers_;  // per orbital
  // Per +-n pair (orbitals 2p + 1, 2p + 2): where its three powers lie in the
  // per-position table (electron_gas.cpp), and k_x, k_y, k_z, |k|^2.
  std::vector<std::array<int, 3>> pair_powers_;
  std::vector<std::array<double, 4>> pair_k_;
};

/// The B-spline box for these orbitals: half_width = L / 2 (the spline
/// period is the cell) and G = max(4, ceil(points_per_wavelength * n_max)),
/// n_max the largest |n_d| (shortest wavelength along an axis L / n_max), or
/// `grid` when it is > 0. Throws std::invalid_argument for an open shell, a
/// bad box_length or points_per_wavelength, or grid < 0.
inline constexpr double kGasPointsPerWavelength = 7.5;
BsplineBox gas_bspline_box(Eigen::Index n_per_spin, double box_length,
                           double points_per_wavelength = kGasPointsPerWavelength,
                           Eigen::Index grid = 0);

}  // namespace slaterlab
