#pragma once
// The error model along a replay: the bound on each ratio's relative error,
// on the final log|det| and the residual budget, for one strategy on one case
// (derivation: docs/properties.md, "The error model").
//
// - eps_m = c (g + m) N eps: c = kC, g = max(1, growth / kGrowthCovered) of
//   the last factorisation, m the accepted updates since, eps the storage
//   epsilon.
// - A Bound is `valid` only where the first-order regime holds (the bound's
//   b < 1/2); outside it no accuracy is claimed and nothing is compared.
// - accepted() carries each accepted proposal's conditioning and rounding;
//   a strategy's refactorisation restarts the model from the oracle's
//   matrix.
// - model_factor(): how much more than Sherman-Morrison a strategy's updates
//   round (its registered rounding factor, 1 by default).

#include <Eigen/Core>

#include <limits>
#include <string>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/properties/case.hpp"
#include "verify/properties/oracle.hpp"
#include "verify/properties/propagated_rounding.hpp"

namespace slaterlab::properties {

inline constexpr double kC = 10.0;  // backward-error constant (docs/properties.md)
inline constexpr double kEpsD = std::numeric_limits<double>::epsilon();

class ErrorModel {
 public:
  /// `factor` scales the propagated rounding for strategies whose update
  /// rounds more than Sherman-Morrison's (model_factor()).
  ErrorModel(double eps, Eigen::Index n, const MatrixInfo& a0, double factor = 1)
      : eps_(eps), n_(double(n)), factor_(factor), propagated_(eps, n) {
    restart(a0);
  }

  /// Safety factor on the propagated-rounding estimate (docs/properties.md).
  static constexpr double kLambda = 16;

  /// The propagated estimate of |e_k^T (X - A^{-1}) a|, with its factors.
  double propagated_product(Eigen::Index k, const Eigen::VectorXd& a) const {
    return kLambda * factor_ * propagated_.product_error(k, a);
  }

  /// eps_m = c (g + m) N eps, g = max(1, growth / kGrowthCovered) of the
  /// last factorisation.
  double eps_m() const { return kC * (growth_ + m_) * n_ * eps_; }

  /// The LU growth || |L||U| ||_F / ||A||_F that c = 10 covers (docs/properties.md).
  static constexpr double kGrowthCovered = 4;

  struct Bound {
    bool valid = false;  // b < 1/2: the bound is meaningful
    double rel = 0;      // bound on |d rho| / |rho|
    double kappa = 0;
  };

  /// Bound on the relative error of the ratio of proposal `o`.
  Bound ratio_bound(const OracleStep& o) const;

  /// kLambda times the left residual the propagated update roundings leave.
  double propagated_left_residual(const MatrixLongDouble& a) const {
    return kLambda * factor_ * propagated_.left_residual(a);
  }

  /// Records an accepted proposal; `refactorised` when the strategy counted a
  /// recompute on this accept.
  void accepted(const OracleStep& o, const MatrixInfo& now, bool refactorised);

  double kappa_max() const { return norm_max_ * inv_max_; }
  double norm_max() const { return norm_max_; }
  int m() const { return m_; }

  /// Bound on |d log|det|| of the current matrix; `valid` false when some
  /// contribution was outside the first-order regime.
  Bound logdet_bound() const;

 private:
  void restart(const MatrixInfo& a);

  double eps_;
  double n_;
  int m_ = 0;
  double norm_max_ = 0;
  double inv_max_ = 0;
  bool logdet_valid_ = true;
  double logdet_sum_ = 0;
  double sum_abs_log_ = 0;
  int terms_ = 0;
  double growth_ = 1;
  double factor_ = 1;
  PropagatedRounding propagated_;
};

/// How much more than Sherman-Morrison a strategy's updates may round: the
/// rounding factor it registers (StrategyTraits::rounding; delayed
/// updates: their growth guard's), 1 by default.
double model_factor(const std::string& name, const UpdaterOptions& o);

ErrorModel make_model(const std::string& name, const UpdaterOptions& o, const Case& c,
                      const CaseTrace& t);

}  // namespace slaterlab::properties
