#pragma once
// Local energy of a Slater determinant in the harmonic trap, from what a
// determinant strategy maintains (so the strategy's precision shows in it):
//   E_L = -1/2 sum_j lap_j Psi / Psi + sum_j w^2 |r_j|^2 / 2,
// with sum_j lap_j Psi / Psi = trace(Ainv L), L(i, j) = lap phi_i(r_j) (note
// the transpose: the derivation is in local_energy.cpp). Inverse strategies
// use their maintained inverse, O(N^2); QR strategies their own factors,
// O(N^3), in double.

#include <Eigen/Core>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"

namespace slaterlab {

/// sum_j lap_j Psi / Psi = trace(A^{-1} L) from the maintained state, with
/// laplacian(i, j) = lap phi_i(r_j). Throws std::invalid_argument when the
/// state holds neither an inverse nor QR factors, or on a size mismatch.
double laplacian_trace(const MaintainedState& state, const Eigen::MatrixXd& laplacian);

/// Kinetic energy -1/2 trace(A^{-1} L).
inline double kinetic_energy(const MaintainedState& state, const Eigen::MatrixXd& laplacian) {
  return -0.5 * laplacian_trace(state, laplacian);
}

/// Trap potential sum_j w^2 |r_j|^2 / 2 of positions (3 x N).
double trap_potential(const Eigen::Matrix3Xd& positions, double omega);

}  // namespace slaterlab
