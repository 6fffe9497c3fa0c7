// NearSingularIsBreakdown: the check (declared in checks.hpp), its threshold
// derived from the error model after the case's prefix.

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "verify/properties/check_steps.hpp"
#include "verify/properties/checks.hpp"
#include "verify/properties/error_model.hpp"

namespace slaterlab::properties {

// Near-singular and non-finite proposals are reported as breakdown with a
// finite value, never as NaN or inf; an accepted near-singular move leaves a
// finite state (or a SingularMatrixError, the documented outcome for a matrix
// singular to working precision). Runs without periodic recompute.
std::optional<PropertyFailure> check_near_singular(const std::string& name,
                                                   const UpdaterOptions& options, const Case& c,
                                                   const CaseTrace& t, CheckStats& stats) {
  const Property p = Property::near_singular_is_breakdown;
  const Eigen::Index n = c.n();
  const Eigen::Index k = c.probe_column;
  const Eigen::Index j = c.probe_source;

  // Everything the threshold depends on, from the oracle: the final state
  // after the prefix, its worst conditioning, m <= number of accepts.
  ErrorModel model = make_model(name, options, c, t);
  for (std::size_t i = 0; i < c.moves.size(); ++i)
    if (c.moves[i].accept) model.accepted(t.steps[i], t.after[i], false);
  // The rounding propagated through the prefix's updates, as it reaches a
  // copy of column j (the worse of the copies probed below).
  const double propagated =
      n > 1 ? model.propagated_product(k, t.final_matrix.col(j)) : 0.0;
  const double eta = model.eps_m() * model.kappa_max() + propagated;
  if (!(eta < 0.5)) {  // precondition: the threshold below means something
    ++stats.vacuous;
    return std::nullopt;
  }
  ++stats.breakdowns_checked;
  // Noise floor of a ratio whose true value is 0 (a copied column: A' has
  // two equal columns). In the error model the state carries a backward
  // error eps_m ||A|| amplified by at most kappa_max, so the computed rho
  // lies within eps_m / (1 - eta) * norm_max * inv_max * ||A^{-1} a'||,
  // with ||A^{-1} a'|| = ||e_j|| = 1 for a copy and at most sqrt(2) for the
  // other proposals below; i.e. sqrt(2) eps_m kappa_max / (1 - eta), with
  // the rounding the prefix's updates propagated (ErrorModel) added to eta.
  // Twice that is the breakdown threshold.
  const double noise = std::sqrt(2.0) * eta / (1 - eta);
  const double threshold = 2 * noise;
  auto up = make_strategy(name, options, 0, threshold);
  up->reset(c.initial);
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const Ratio r = up->ratio(c.moves[i].electron, c.moves[i].column);
    if (!std::isfinite(r.value)) {
      return failure(p, fmt::format("prefix move {}: ratio {} is not finite", i, r.value));
    }
    c.moves[i].accept ? accept_move(*up, t.after[i], options.precision, n) : up->reject();
  }

  auto expect_breakdown = [&](const Eigen::VectorXd& column,
                              const char* what) -> std::optional<PropertyFailure> {
    const auto before = up->counters().breakdowns;
    const Ratio r = up->ratio(k, column);
    if (!std::isfinite(r.value) || !r.breakdown || up->counters().breakdowns != before + 1) {
      return failure(p, fmt::format("{} for column {}: rho={} breakdown={} (counted {}), "
                                    "threshold={:.3e} (eps_m kappa_max = {:.3e})",
                                    what, k, r.value, r.breakdown,
                                    up->counters().breakdowns - before, threshold, eta));
    }
    return std::nullopt;
  };
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
  if (auto f = expect_breakdown(zero, "zero column")) return f;
  up->reject();
  Eigen::VectorXd bad = t.final_matrix.col(k);
  bad(n / 2) = std::numeric_limits<double>::quiet_NaN();
  if (auto f = expect_breakdown(bad, "NaN entry")) return f;
  up->reject();
  bad(n / 2) = std::numeric_limits<double>::infinity();
  if (auto f = expect_breakdown(bad, "inf entry")) return f;
  up->reject();
  if (n < 2) return std::nullopt;
  if (auto f = expect_breakdown(t.final_matrix.col(j), "copy of another column")) return f;
  up->reject();
  // rho = delta (+ the rounding of a_j + delta a_k, ~eps ||x_k|| ||a_j||):
  // delta = threshold / 4 (>= 7 N eps kappa) keeps A' clear of exact
  // singularity in double while |rho| + noise < threshold.
  const double delta = threshold / 4;
  const Eigen::VectorXd near = t.final_matrix.col(j) + delta * t.final_matrix.col(k);
  if (auto f = expect_breakdown(near, "near-singular column")) return f;
  try {
    up->accept();
  } catch (const SingularMatrixError&) {
    return std::nullopt;
  }
  const LogDet ld = up->log_det();
  const MaintainedState st = up->maintained();
  const bool nan_state = std::isnan(ld.log_abs) || (st.inverse && st.inverse->hasNaN()) ||
                         (st.qr && (st.qr->q.hasNaN() || st.qr->r.hasNaN()));
  if (nan_state) return failure(p, "accepting the near-singular column left NaN in the state");
  const Ratio after = up->ratio(k, t.final_matrix.col(k));
  if (!std::isfinite(after.value)) {
    return failure(p, fmt::format("after the accepted near-singular column, ratio {} is not "
                                  "finite",
                                  after.value));
  }
  up->reject();
  return std::nullopt;
}

}  // namespace slaterlab::properties
