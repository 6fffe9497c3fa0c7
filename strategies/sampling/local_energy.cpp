#include "slaterlab/strategies/sampling/local_energy.hpp"

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
