// Rounding propagated through inverse updates (contract in
// propagated_rounding.hpp).

#include "verify/properties/propagated_rounding.hpp"

#include <cmath>

namespace slaterlab::properties {

void PropagatedRounding::seed(const InverseState& s) {
  const double scale = eps_ * std::sqrt(double(n_));
  samples_.assign(kSamples, Eigen::MatrixXd());
  for (Eigen::MatrixXd& e : samples_) {
    Eigen::MatrixXd r(n_, n_);
    for (Eigen::Index j = 0; j < n_; ++j)
      for (Eigen::Index i = 0; i < n_; ++i) r(i, j) = sign() * scale * s.residual_size(i, j);
    e.noalias() = r * s.inverse;
  }
}

void PropagatedRounding::accept(const OracleStep& o) {
  const StepVectors& v = *o.vectors;
  if (samples_.empty()) samples_.assign(kSamples, Eigen::MatrixXd::Zero(n_, n_));
  const double rho = double(o.rho);
  const Eigen::VectorXd a = v.column.cast<double>();
  const Eigen::VectorXd r = v.row.cast<double>();
  const Eigen::VectorXd y = v.update.cast<double>();
  const Eigen::VectorXd row_norms = v.row_norms.cast<double>();
  const double root_n = std::sqrt(double(n_));
  const double a_norm = a.norm();
  const Eigen::VectorXd dy_size = eps_ * root_n * a_norm * row_norms;
  const double drho_size = eps_ * root_n * r.norm() * a_norm;
  const Eigen::VectorXd entry_rows = eps_ * row_norms / root_n;
  const Eigen::VectorXd abs_y = eps_ * y.cwiseAbs() / std::abs(rho);
  const Eigen::VectorXd abs_r = r.cwiseAbs();
  for (Eigen::MatrixXd& e : samples_) {
    const Eigen::VectorXd ea = e * a;
    const Eigen::VectorXd ek = e.row(v.k).transpose();
    const double drho = sign() * drho_size;
    const double c = (ek.dot(a) + drho) / (rho * rho);
    const Eigen::VectorXd dy = signs().cwiseProduct(dy_size);
    e.noalias() -= (ea + dy) * (r.transpose() / rho);
    e.noalias() -= y * (ek.transpose() / rho);
    e.noalias() += y * (c * r.transpose());
    const Eigen::VectorXd sigma = signs();
    const Eigen::VectorXd tau = signs();
    e.noalias() += sigma.cwiseProduct(entry_rows) * tau.transpose();
    e.noalias() += sigma.cwiseProduct(abs_y) * tau.cwiseProduct(abs_r).transpose();
  }
}

double PropagatedRounding::product_error(Eigen::Index k, const Eigen::VectorXd& a) const {
  if (samples_.empty()) return 0;
  double sum = 0;
  for (const Eigen::MatrixXd& e : samples_) {
    const double d = e.row(k).dot(a.transpose());
    sum += d * d;
  }
  return std::sqrt(sum / kSamples);
}

double PropagatedRounding::ratio_error(const OracleStep& o) const {
  const StepVectors& v = *o.vectors;
  return product_error(v.k, v.column.cast<double>()) / double(std::abs(o.rho));
}

double PropagatedRounding::left_residual(const MatrixLongDouble& a) const {
  if (samples_.empty()) return 0;
  const Eigen::MatrixXd ad = a.cast<double>();
  double sum = 0;
  for (const Eigen::MatrixXd& e : samples_) sum += (e * ad).squaredNorm();
  return std::sqrt(sum / kSamples);
}

Eigen::VectorXd PropagatedRounding::signs() {
  Eigen::VectorXd s(n_);
  for (Eigen::Index i = 0; i < n_; ++i) s(i) = sign();
  return s;
}

}  // namespace slaterlab::properties
