// The error model along a replay (contract in error_model.hpp, derivation in
// docs/properties.md).

#include "verify/properties/error_model.hpp"

#include <algorithm>
#include <cmath>

namespace slaterlab::properties {

ErrorModel::Bound ErrorModel::ratio_bound(const OracleStep& o) const {
  const double norm = std::max(norm_max_, o.candidate.norm_f);
  const double inv = std::max({inv_max_, o.sensitivity, o.candidate.inv_norm_f});
  Bound b;
  b.kappa = norm * inv;
  const double e = eps_m() * b.kappa + kLambda * factor_ * propagated_.ratio_error(o);
  b.valid = std::isfinite(e) && e < 0.5;
  b.rel = e / (1 - e) + kC * n_ * kEpsLongDouble * b.kappa;
  return b;
}

void ErrorModel::accepted(const OracleStep& o, const MatrixInfo& now, bool refactorised) {
  const Bound b = ratio_bound(o);
  logdet_valid_ = logdet_valid_ && b.valid;
  logdet_sum_ += b.rel;
  sum_abs_log_ += std::abs(std::log(double(std::abs(o.rho))));
  ++terms_;
  if (refactorised) {
    restart(now);
    return;
  }
  ++m_;
  propagated_.accept(o);
  norm_max_ = std::max({norm_max_, o.candidate.norm_f, now.norm_f});
  inv_max_ = std::max({inv_max_, o.sensitivity, o.candidate.inv_norm_f, now.inv_norm_f});
}

ErrorModel::Bound ErrorModel::logdet_bound() const {
  Bound b;
  const double e = eps_m() * kappa_max();
  b.valid = logdet_valid_ && std::isfinite(e) && e < 0.5;
  b.kappa = kappa_max();
  // Recursive summation in double of `terms_` logs, each below
  // ell = 2 ln(N + 1) + max(|ln ||A||_F|, ln ||A^{-1}||_F) + 1 in magnitude
  // (LU and QR pivots lie within [1 / (N ||A^{-1}||), N ||A||] for these
  // matrices), and of the accepted log|rho| terms.
  const double ell = 2 * std::log(n_ + 1) +
                     std::max(std::abs(std::log(norm_max_)), std::abs(std::log(inv_max_))) + 1;
  const double summation = (terms_ + n_) * kEpsD * (n_ * ell + sum_abs_log_);
  b.rel = logdet_sum_ + e / (1 - e) + summation;
  return b;
}

void ErrorModel::restart(const MatrixInfo& a) {
  m_ = 0;
  growth_ = std::max(1.0, a.lu_growth / kGrowthCovered);
  propagated_.clear();
  if (a.state) propagated_.seed(*a.state);
  norm_max_ = a.norm_f;
  inv_max_ = a.inv_norm_f;
  const double e = eps_m() * kappa_max();
  logdet_valid_ = std::isfinite(e) && e < 0.5;
  logdet_sum_ = e / (1 - e);
}

double model_factor(const std::string& name, const UpdaterOptions& o) {
  return strategy_traits(name).rounding.factor_for(o);
}

ErrorModel make_model(const std::string& name, const UpdaterOptions& o, const Case& c,
                      const CaseTrace& t) {
  return ErrorModel(storage_epsilon(o.precision), c.n(), t.initial, model_factor(name, o));
}

}  // namespace slaterlab::properties
