#pragma once
// Local energy of a Slater determinant in the harmonic trap, from what a
// determinant strategy maintains (so the strategy's precision shows in it).
//
//   E_L = -1/2 sum_j lap_j Psi / Psi + sum_j w^2 |r_j|^2 / 2.
//
// Derivation and index order. A(i, j) = phi_i(r_j): r_j enters column j
// only, and det A is linear in column j, so expanding along it,
//   lap_j det A = sum_i C(i, j) lap phi_i(r_j),   C the cofactor matrix,
// and C(i, j) = det A * (A^{-1})(j, i). With L(i, j) = lap phi_i(r_j),
//   lap_j Psi / Psi = sum_i Ainv(j, i) L(i, j) = (Ainv L)(j, j),
//   sum_j lap_j Psi / Psi = trace(Ainv L) = sum_{i,j} Ainv(j, i) L(i, j).
// Note the transpose: sum_{i,j} Ainv(i, j) L(i, j) is a different number.
//
// Inverse strategies: trace(Ainv L) with the maintained inverse (exposed in
// double; for float storage the float inverse rounded up exactly), O(N^2).
// QR strategies keep A P = Q R with P e_j = e_{column_of[j]}, so
// A^{-1} = P R^{-1} Q^T and trace(A^{-1} L) = trace(R^{-1} Q^T L P), where
// (L P)(:, j) = L(:, column_of[j]): one GEMM and one triangular solve with
// the strategy's own factors, O(N^3), in double.

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
