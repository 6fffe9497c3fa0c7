#include "slaterlab/strategies/sampling/local_energy.hpp"

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

#include <stdexcept>

namespace slaterlab {
namespace {

double trace_with_inverse(const Eigen::MatrixXd& ainv, const Eigen::MatrixXd& laplacian) {
  if (ainv.rows() != laplacian.rows() || ainv.cols() != laplacian.cols())
    throw std::invalid_argument("laplacian_trace: inverse and Laplacian sizes differ");
  // sum_{i,j} Ainv(j, i) L(i, j): column j of Ainv^T against column j of L.
  double sum = 0.0;
  for (Eigen::Index j = 0; j < laplacian.cols(); ++j)
    sum += ainv.row(j).dot(laplacian.col(j).transpose());
  return sum;
}

double trace_with_qr(const QrFactors& qr, const Eigen::MatrixXd& laplacian) {
  const Eigen::Index n = laplacian.rows();
  if (qr.q.rows() != n || qr.r.rows() != n || laplacian.cols() != n ||
      static_cast<Eigen::Index>(qr.column_of.size()) != n)
    throw std::invalid_argument("laplacian_trace: QR factors and Laplacian sizes differ");
  Eigen::MatrixXd lp(n, n);
  for (Eigen::Index j = 0; j < n; ++j) lp.col(j) = laplacian.col(qr.column_of[std::size_t(j)]);
  Eigen::MatrixXd w = qr.q.transpose() * lp;
  qr.r.triangularView<Eigen::Upper>().solveInPlace(w);
  return w.trace();
}

}  // namespace

double laplacian_trace(const MaintainedState& state, const Eigen::MatrixXd& laplacian) {
  if (state.inverse) return trace_with_inverse(*state.inverse, laplacian);
  if (state.qr) return trace_with_qr(*state.qr, laplacian);
  throw std::invalid_argument("laplacian_trace: the strategy exposes neither an inverse nor QR factors");
}

double trap_potential(const Eigen::Matrix3Xd& positions, double omega) {
  return 0.5 * omega * omega * positions.colwise().squaredNorm().sum();
}

}  // namespace slaterlab
