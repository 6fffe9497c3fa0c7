#include "verify/run/metrics.hpp"

#include <cmath>
#include <limits>

namespace slaterlab {
namespace {
using MatrixL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
}

InverseResidual inverse_residual(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x) {
  MatrixL r = a.cast<long double>() * x.cast<long double>();
  r.diagonal().array() -= 1.0L;
  return {double(r.cwiseAbs().maxCoeff()), double(r.norm() / std::sqrt((long double)a.rows()))};
}

double relative_divergence(const Eigen::MatrixXd& x, const Eigen::MatrixXd& x_ref) {
  return double((x.cast<long double>() - x_ref.cast<long double>()).norm() /
                x_ref.cast<long double>().norm());
}

double condition_1(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x) {
  const auto norm_1 = [](const Eigen::MatrixXd& m) { return m.cwiseAbs().colwise().sum().maxCoeff(); };
  return norm_1(a) * norm_1(x);
}

double qr_residual(const QrFactors& qr, const Eigen::MatrixXd& a) {
  MatrixL ap(a.rows(), a.cols());
  for (Eigen::Index j = 0; j < a.cols(); ++j) ap.col(j) = a.col(qr.column_of[j]).cast<long double>();
  const MatrixL product = qr.q.cast<long double>() * qr.r.cast<long double>();
  return double((product - ap).norm() / ap.norm());
}

double orthogonality_loss(const Eigen::MatrixXd& q) {
  MatrixL g = q.cast<long double>().transpose() * q.cast<long double>();
  g.diagonal().array() -= 1.0L;
  return double(g.norm());
}

}  // namespace slaterlab
