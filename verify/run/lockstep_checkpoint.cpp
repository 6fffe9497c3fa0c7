// LockstepExperiment's checkpoints (lockstep_experiment.hpp): the lanes
// measured against the reference, the rows written and folded, the
// certified values, and the checks run when the experiment finishes.
#include "verify/run/lockstep_experiment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string_view>

#include "slaterlab/reference/certified.hpp"
#include "verify/run/kernel_checks.hpp"
#include "verify/run/metrics.hpp"
#include "verify/run/runner.hpp"

namespace slaterlab::run_detail {

void LockstepExperiment::checkpoint() {
  const auto t0 = Clock::now();
  sync_reference();
  // A matrix singular to the reference's precision has det 0 (log|det| =
  // -inf, sign 0) and no inverse: the metrics that compare with them are
  // not measured there (NaN), and no sign is judged.
  const bool singular = reference_.singular();
  const auto ref_log_det = reference_.log_det();
  reference::LockstepReference::InverseWithPivot ref_inverses;
  if (!singular) ref_inverses = reference_.inverse_with_pivot();
  const Eigen::MatrixXd& ref_inverse = ref_inverses.inverse;
  const Eigen::MatrixXd& a = reference_.matrix();
  ReferenceCheckpoint reference_row{move_, accepted_, double(ref_log_det.log_abs),
                                    ref_log_det.sign, reference_.condition_1(),
                                    per_move() ? ratio_condition_max_ : kNaN,
                                    reference_elapsed_s_};
  reference_row.cycles = cycles_;
  if (std::isfinite(reference_row.condition_1)) {
    kappa_max_ = std::fmax(kappa_max_, reference_row.condition_1);
  }
  writer_.append(handle_, reference_row);
  reference_elapsed_s_ += seconds_since(t0);
  ratio_condition_max_ = 0.0;
  last_checkpoint_ = move_;
  // A pivot serves every strategy's residual (one DGEMM each): the fast
  // reference's unrefined inverse with the residual its refinement already
  // evaluated, or else the reference's inverse, its residual evaluated once,
  // at the first inverse.
  std::optional<InverseResiduals> residuals;

  for (Lane& lane : lanes_) {
    if (lane.failed) continue;
    StrategyCheckpoint c;
    c.move = move_;
    c.accepted = accepted_;
    const double eps = lane.updater->epsilon();
    c.log_det_error = c.log_det_error_eps = kNaN;
    std::optional<LogDet> ld;
    MaintainedState state;
    try {  // the strategy's calls: a kernel may crash or hang in them too
      if (!singular && !lane.suspended) {
        ld = lane.updater->log_det();
        state = lane.updater->maintained();
      }
    } catch (const std::exception& error) {
      if (!strategy_traits(lane.config->name).loads_library) throw;  // a built-in's: not a finding
      lane.fail(error);
      continue;
    }
    if (ld) {
      c.log_det_error = double(std::abs((long double)ld->log_abs - ref_log_det.log_abs));
      c.log_det_error_eps = c.log_det_error / eps;
      c.sign_agrees = ld->sign == ref_log_det.sign;
      lane.nonfinite_log_det += !std::isfinite(c.log_det_error);
    }
    // NaN: not measured (checkpoint-only references, the initial
    // checkpoint, or moves since the last checkpoint none of whose ratios
    // was defined and nonzero: from or onto singular matrices, or cycles
    // without per-update ratios).
    const double measured = per_move() && lane.errors.count > 0 ? 1.0 : kNaN;
    c.ratio_error_max = measured * lane.errors.max;
    c.ratio_error_max_eps = measured * lane.errors.max / eps;
    c.ratio_error_rms = measured * lane.errors.rms();
    c.ratio_error_normalised_max = measured * lane.errors.normalised_max;
    c.ratio_error_median = measured * lane.errors.median();
    c.flips = lane.errors.flips;
    c.inverse_residual_max = c.inverse_residual_fro = c.inverse_divergence = kNaN;
    c.condition_estimate = c.qr_residual = c.orthogonality_loss = kNaN;
    if (state.inverse) {
      if (!residuals && ref_inverses.pivot.size() > 0) {
        residuals.emplace(a, std::move(ref_inverses.pivot), std::move(ref_inverses.pivot_residual),
                          ref_inverses.pivot_residual_bound);
      } else if (!residuals) {
        residuals.emplace(a, ref_inverse);
      }
      const InverseResidual r = (*residuals)(*state.inverse);
      c.inverse_residual_max = r.max_abs;
      c.inverse_residual_fro = r.frobenius_rms;
      c.inverse_divergence = relative_divergence(*state.inverse, ref_inverse);
      c.condition_estimate = condition_1(a, *state.inverse);
      lane.nonfinite_inverse += !std::isfinite(r.max_abs) || !std::isfinite(c.inverse_divergence);
    }
    if (state.qr) {
      c.qr_residual = qr_residual(*state.qr, a);
      c.orthogonality_loss = orthogonality_loss(state.qr->q);
    }
    const UpdaterCounters counters = lane.counters();
    c.breakdowns = counters.breakdowns;
    c.recomputes = counters.recomputes;
    c.events = declared_events(lane.config->name, counters);
    c.elapsed_s = lane.elapsed_s;
    c.cycle_ratio_error_max = lane.cycle_errors.max;
    c.cycle_ratio_error_max_eps = lane.cycle_errors.max / eps;
    c.cycle_breakdowns = lane.cycle_breakdowns;
    c.singular_restarts = lane.singular_restarts;
    writer_.append(lane.handle, c);

    StrategySummary& s = lane.summary;
    fold_checkpoint(s, c);
    // Not folds of the checkpoint: the experiment's and the reference's counts.
    s.cycles = cycles_;
    s.singular_checkpoints += singular;
    lane.errors = {};
    lane.cycle_errors = {};
  }
}

// The reference's log|det| and how far from the exact value it may be: its
// long double rounding (2 eps_ld |mp|) plus its own error bound (mp: 16 N^2
// u_mp kappa_1, the model the reference's tests use; fast: its a-posteriori
// bound).
namespace {
std::pair<long double, long double> reference_value(const reference::LockstepReference& r) {
  const long double mp = r.log_det().log_abs;
  return {mp, 2 * std::numeric_limits<long double>::epsilon() * std::abs(mp) + r.log_det_error_bound()};
}
}  // namespace

void LockstepExperiment::start_certification(const char* which) {
  if (!study_.reference.certify) return;
  PendingCertification pending{which, {}, std::nullopt};
  if (std::string_view(which) == "initial") pending.reference = reference_value(reference_);
  // At BLAS speed first (tens of double LUs instead of Arb's O(N^3) ball
  // arithmetic, docs/fast-reference.md); Arb at the study's precision only
  // where that bound cannot prove the enclosure (about kappa N u > 1e-2).
  pending.enclosure = std::async(std::launch::async, [a = current(), bits = study_.reference.certified_bits] {
    auto certified = reference::certified_log_det_blas(a);
    if (!certified.certified) certified = reference::certified_log_det(a, bits);
    return certified;
  });
  certifications_.push_back(std::move(pending));
}

void LockstepExperiment::collect_certifications() {
  for (PendingCertification& pending : certifications_) {
    const reference::CertifiedLogDet certified = pending.enclosure.get();
    const auto [mp, slack] = pending.reference ? *pending.reference : reference_value(reference_);
    CertifiedLogDet c;
    c.certified = certified.certified;
    c.log_abs_mid = certified.log_abs_mid;
    c.log_abs_radius = certified.log_abs_radius;
    c.sign = certified.sign;
    c.precision_bits = certified.precision_bits;
    c.message = certified.message;
    c.mp_log_abs = double(mp);
    c.mp_inside = c.certified && std::abs(mp - (long double)c.log_abs_mid) <=
                                     (long double)c.log_abs_radius + slack;
    writer_.set_certified(handle_, pending.which, c);
  }
  certifications_.clear();
}

void LockstepExperiment::check(const Lane& lane, std::vector<CheckFailure>& failures) const {
  const ChecksConfig& checks = study_.checks;
  const std::string precision(to_string(lane.config->options.precision));
  if (!checks.precisions.empty() &&
      std::find(checks.precisions.begin(), checks.precisions.end(), precision) ==
          checks.precisions.end()) {
    return;
  }
  const auto add = [&](std::string what) {
    failures.push_back({experiment_.name, lane.config->label, std::move(what)});
  };
  const StrategySummary& s = lane.summary;
  // An external kernel is held to these by default: a user's kernel must
  // not pass a nightly run with a wrong answer (kernel_checks.hpp).
  const bool kernel = strategy_traits(lane.config->name).loads_library;
  if (lane.failed && (checks.strategy_must_finish || kernel)) add("could not finish: " + s.failure);
  if (kernel) {
    if (lane.updater) for (std::string& what : lane.updater->findings()) add(std::move(what));
    const UpdaterOptions& o = lane.config->options;
    const std::int64_t carried =
        o.recompute_every > 0 ? std::min<std::int64_t>(o.recompute_every, accepted_) : accepted_;
    const KernelModelInputs model{double(experiment_.workload.n), storage_epsilon(o.precision),
                                  kappa_max_, carried, accepted_, longest_cycle_,
                                  lane.nonfinite_log_det, lane.nonfinite_inverse};
    for (std::string& what : kernel_model_failures(s, model)) add(std::move(what));
  }
  if (checks.sign_agreement && s.sign_disagreements > 0) {
    add(fmt::format("sign of det disagreed with the reference at {} checkpoint(s)",
                    s.sign_disagreements));
  }
  if (checks.max_ratio_error_normalised &&
      s.max_ratio_error_normalised > *checks.max_ratio_error_normalised) {
    add(fmt::format("ratio error {:.3g} N eps kappa_rho exceeds the limit {:.3g}",
                    s.max_ratio_error_normalised, *checks.max_ratio_error_normalised));
  }
  if (checks.delayed_within_guard_of_sm && strategy_traits(lane.config->name).guarded_against_baseline) {
    check_against_sm(lane, add);
  }
}

template <class Add>
void LockstepExperiment::check_against_sm(const Lane& lane, const Add& add) const {
  const auto sm = std::find_if(lanes_.begin(), lanes_.end(), [&](const Lane& other) {
    return strategy_traits(other.config->name).baseline &&
           other.config->options.precision == lane.config->options.precision;
  });
  if (sm == lanes_.end()) {
    add("delayed_within_guard_of_sm: no sm strategy at this precision to compare with");
    return;
  }
  if (lane.failed || sm->failed) return;  // strategy_must_finish judges these
  const double n_eps =
      double(experiment_.workload.n) * storage_epsilon(lane.config->options.precision);
  // The strategy's own rounding model says how far above sm's rounding it may go.
  const UpdaterOptions& options = lane.config->options;
  const double factor = strategy_traits(lane.config->name, options).rounding.factor_for(options);
  for (std::string& what :
       compare_delayed_with_sm(lane.summary, sm->summary, sm->config->label, factor, n_eps)) {
    add(std::move(what));
  }
}

void LockstepExperiment::finish(std::vector<CheckFailure>& failures) {
  // A run without moves certifies its final matrix here (run() starts it
  // before the last checkpoint otherwise).
  const bool final_started =
      std::any_of(certifications_.begin(), certifications_.end(),
                  [](const PendingCertification& p) { return std::string_view(p.which) == "final"; });
  if (!final_started) start_certification("final");
  collect_certifications();
  writer_.set_reference_engine(
      handle_, {reference::to_string(reference_.engine()), reference_.fallbacks()});
  for (Lane& lane : lanes_) {
    writer_.finish_strategy(lane.handle, lane.summary);
    check(lane, failures);
  }
}

void LockstepExperiment::show_progress(bool force) const {
  if (!progress_) return;
  const auto now = Clock::now();
  if (!force && now - last_progress_ < std::chrono::milliseconds(200)) return;
  last_progress_ = now;
  fmt::print(stderr, "\r  {:<40} move {:>7}/{}", experiment_.name, move_, experiment_.moves);
  if (force) fmt::print(stderr, "\n");
}

}  // namespace slaterlab::run_detail
