#include "verify/report/regress.hpp"

// The judging rules of slaterlab regress (docs/regression.md has their
// justification); for every experiment x strategy of the baseline:
//
// - Deterministic metrics (errors, residuals, divergences) are judged
//   against their error model M, in the metric's unit:
//     limit = max(factor * max(baseline, M), floor),
//   factor 4 by default. M = (1 + m) N eps kappa, m the accepted updates the
//   strategy carries since a refactorisation (0 for LU recompute), eps the
//   baseline strategy's machine epsilon, kappa the largest kappa_1 of the
//   reference (log-det errors, divergences), kappa_1^2 (the residual A X - I),
//   kappa_rho (the ratio error) or 1 (QR residual, orthogonality); the
//   normalised ratio error is already in units of N eps kappa_rho: M = 1 + m.
//   An update cycle's ratio det(A_after) / det(A_before) is a quotient of two
//   determinants, each with the log-det model: M = 2 (1 + m) N eps kappa_1.
//   The kappas are the largest finite ones: a checkpoint or move onto a
//   matrix singular to the reference's precision measures nothing.
//   Another BLAS kernel realises other roundings: a log-det error is one
//   signed sum that may cancel, so its value on two machines can differ by
//   any factor while both stay far inside M; judged against M it is portable.
//   floor = floor_eps (8) eps, scaled to the metric's unit: times max(1,
//   max |log|det|_ref|) for log-det errors, floor_eps / N for the normalised
//   ratio error. A metric that does not apply (NaN) in the baseline must not
//   apply in the new run either, and vice versa. Baselines written before
//   update cycles have NaN cycle errors and zero cycle counts, which an
//   experiment without cycles reproduces.
// - Counts (sign disagreements, decision flips, breakdowns, cycle
//   breakdowns, singular restarts, checkpoints with det 0, and the named
//   events a strategy declares judged, e.g. splits) may not
//   exceed max(factor * baseline, 1): one event near a threshold may go
//   either way on another BLAS. A strategy that finished in the baseline must
//   finish.
// - A strategy outside its error model in the baseline (a matrix singular to
//   its precision, eps kappa_1 >= 1, or a metric above M) has lost the digits
//   the model accounts for: its errors, and the decisions, events and
//   failures they cause, are chaotic functions of every rounding. Its
//   comparisons are reported, not judged, with a note.
// - VMC runs (statistical): the energy must agree with the baseline's,
//   z = |a - b| / sqrt(sa^2 + sb^2) < z_threshold (compare_estimates); failed
//   walkers and breakdowns are counts as above. Orbital-accuracy records:
//   the max relative value, gradient and Laplacian errors are deterministic
//   metrics as above (eps of the orbital set's precision).
// - An experiment, strategy, VMC run or orbital record of the baseline
//   missing from the new run, one whose definition differs (for experiments:
//   workload, N, moves, checkpoint cadence, seed, acceptance, workload
//   parameters; for VMC runs: N, alpha, omega, orbitals, grid, scheme,
//   strategy, step, walkers, sweeps, seed: not comparable), and a baseline
//   of another schema version are failures, named. VMC runs are reported as
//   "vmc / <run>", orbital records as "orbitals / <label>".
// Differences that are not failures (a strategy's options changed under the
// same label, an experiment or strategy that is new) are reported as notes.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "verify/report/table.hpp"
#include "verify/stats/statistics.hpp"
#include "verify/store/record_fields.hpp"

namespace slaterlab {

namespace {

std::string number(double x) { return fmt::format("{:.3g}", x); }

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// ---- what is compared ---------------------------------------------------------

/// What the floor of a metric is proportional to (see the header).
enum class Scale { one, log_det, per_n };

/// The error model of a metric, in the metric's own unit (see the header):
/// (1 + m) N eps times kappa_1, kappa_1^2 (the residual A X - I of an
/// inverse that is backward stable row by row), kappa_rho (the largest
/// condition numbers the reference recorded), 1 (orthogonal
/// transformations), or (1 + m) alone for a metric already divided by
/// N eps kappa_rho; twice (1 + m) N eps kappa_1 for a cycle's ratio, a
/// quotient of two determinants det(A_after) / det(A_before) whose
/// log-determinants each have the log-det error's model; none.
/// m = updates_carried.
enum class Model { none, kappa_1, kappa_1_squared, kappa_rho, n_eps, unit, cycle };

struct MetricSpec {
  const char* name;
  double StrategySummary::*member;
  Scale scale;
  Model model;
};

// Every deterministic accuracy summary; elapsed_s is timing, not accuracy,
// and max_ratio_error_eps is max_ratio_error in other units.
const MetricSpec kMetrics[] = {
    {"worst_log_det_error", &StrategySummary::worst_log_det_error, Scale::log_det, Model::kappa_1},
    {"final_log_det_error", &StrategySummary::final_log_det_error, Scale::log_det, Model::kappa_1},
    {"max_ratio_error", &StrategySummary::max_ratio_error, Scale::one, Model::kappa_rho},
    {"max_ratio_error_normalised", &StrategySummary::max_ratio_error_normalised, Scale::per_n,
     Model::unit},
    {"max_inverse_residual", &StrategySummary::max_inverse_residual, Scale::one,
     Model::kappa_1_squared},
    {"max_inverse_divergence", &StrategySummary::max_inverse_divergence, Scale::one,
     Model::kappa_1},
    {"final_inverse_divergence", &StrategySummary::final_inverse_divergence, Scale::one,
     Model::kappa_1},
    {"max_qr_residual", &StrategySummary::max_qr_residual, Scale::one, Model::n_eps},
    {"max_orthogonality_loss", &StrategySummary::max_orthogonality_loss, Scale::one, Model::n_eps},
    // Update cycles (NaN without cycles, as in baselines older than them).
    {"max_cycle_ratio_error", &StrategySummary::max_cycle_ratio_error, Scale::one, Model::cycle},
};

struct CountSpec {
  const char* name;
  std::int64_t StrategySummary::*member;
};

// Events that signal numerical trouble, with the named events a strategy
// declares judged (StrategyTraits::events: a split). Recomputes are left
// out: they follow from the configuration (recompute_every) and from the
// breakdowns.
const CountSpec kCounts[] = {
    {"sign_disagreements", &StrategySummary::sign_disagreements},
    {"flips", &StrategySummary::flips},
    {"breakdowns", &StrategySummary::breakdowns},
    // Update cycles and singular matrices (0 in baselines older than them).
    {"cycle_breakdowns", &StrategySummary::cycle_breakdowns},
    {"singular_restarts", &StrategySummary::singular_restarts},
    {"singular_checkpoints", &StrategySummary::singular_checkpoints},
};

/// value <= limit, NaN meaning "does not apply"; the detail names the
/// model when there is one (model > 0).
Comparison bounded(const std::string& experiment, const std::string& strategy,
                   const std::string& metric, ComparisonKind kind, double value, double baseline,
                   double limit, double model = 0.0) {
  Comparison c{experiment, strategy, metric, kind, value, baseline, limit, true, ""};
  if (std::isnan(value) || std::isnan(baseline)) {
    // NaN means "does not apply": it must not apply in both, or in neither.
    c.passed = std::isnan(value) && std::isnan(baseline);
    c.detail = c.passed ? metric + " does not apply"
                        : fmt::format("{} {} vs baseline {} (applies in only one of them)", metric,
                                      number(value), number(baseline));
    return c;
  }
  c.passed = value <= limit;
  const std::string model_part = model > 0.0 ? "model " + number(model) + ", " : "";
  c.detail = fmt::format("{} {} vs baseline {} ({}limit {})", metric, number(value),
                         number(baseline), model_part, number(limit));
  return c;
}

/// Appends "key value (baseline value)" to `out` when the two differ.
template <class A, class B>
void note_difference(std::vector<std::string>& out, const char* key, const A& now,
                     const B& base) {
  if (now != base) out.push_back(fmt::format("{} {} (baseline {})", key, now, base));
}

/// note_difference for each field of two records, skipping the fields named.
template <class R>
void note_field_differences(std::vector<std::string>& out, const R& now, const R& base,
                            std::initializer_list<std::string_view> skip = {}) {
  visit_field_pairs(now, base, [&](const Field& field, const auto& a, const auto& b) {
    if (std::find(skip.begin(), skip.end(), field.name) == skip.end())
      note_difference(out, field.name, a, b);
  });
}

/// What makes two experiments comparable, as "key value (baseline value)".
std::vector<std::string> definition_differences(const ExperimentInfo& now,
                                                const ExperimentInfo& base) {
  std::vector<std::string> out;
  note_field_differences(out, now, base);
  // Workload parameters (kappa, delta, the electron order, a replay's checksum, ...).
  const std::map<std::string, std::string> a(now.parameters.begin(), now.parameters.end());
  const std::map<std::string, std::string> b(base.parameters.begin(), base.parameters.end());
  std::set<std::string> keys;
  for (const auto* m : {&a, &b}) {
    for (const auto& kv : *m) keys.insert(kv.first);
  }
  const auto value = [](const auto& m, const std::string& key) {
    const auto it = m.find(key);
    return it == m.end() ? std::string("(absent)") : it->second;
  };
  for (const auto& key : keys) {
    if (key == "kind" || key == "n" || key == "seed") continue;  // compared above
    if (key == "file") continue;  // a checkout path; content_fnv1a64 names the data
    note_difference(out, ("param." + key).c_str(), value(a, key), value(b, key));
  }
  return out;
}

/// Options of a strategy that changed under the same label (not a failure:
/// the options are what a regression run is allowed to vary).
std::vector<std::string> option_differences(const StrategyInfo& now, const StrategyInfo& base) {
  std::vector<std::string> out;
  // label is what matched the two; epsilon follows from precision.
  note_field_differences(out, now, base, {"label", "epsilon"});
  return out;
}

template <class T>
const T* find_named(const std::vector<T>& items, const std::string& name) {
  for (const auto& item : items) {
    if constexpr (std::is_same_v<T, ExperimentResult>) {
      if (item.info.name == name) return &item;
    } else {
      if (item.info.label == name) return &item;
    }
  }
  return nullptr;
}

/// The largest finite |field| over the reference's checkpoints, at least 1.
/// A matrix singular to the reference's precision has condition_1 = +inf
/// and log_det = -inf, a move onto one kappa_rho = +inf; no strategy metric
/// is measured there (NaN), so those do not scale the models of the others.
double reference_max(const ExperimentResult& e, double ReferenceCheckpoint::*field) {
  double largest = 1.0;
  for (const auto& r : e.reference)
    if (std::isfinite(r.*field)) largest = std::max(largest, std::abs(r.*field));
  return largest;
}

/// floor_eps in the metric's own unit (see the header).
double metric_floor(Scale scale, const RegressLimits& limits, double eps,
                    const ExperimentResult& experiment) {
  switch (scale) {
    case Scale::log_det:
      return limits.floor_eps * eps * reference_max(experiment, &ReferenceCheckpoint::log_det);
    // A relative ratio error of floor_eps * eps is floor_eps / (N kappa_rho)
    // in units of N eps kappa_rho, and kappa_rho >= 1.
    case Scale::per_n:
      return limits.floor_eps / double(std::max<std::int64_t>(1, experiment.info.n));
    case Scale::one: break;
  }
  return limits.floor_eps * eps;
}

/// The traits of a recorded strategy: an external kernel's own, read from
/// its recorded library while that still loads, else the registered ones.
StrategyTraits recorded_traits(const StrategyInfo& strategy) {
  UpdaterOptions options;
  for (const auto& [key, value] : strategy.provenance)
    if (key == "library") options.library = value;
  try {
    return strategy_traits(strategy.name, options);
  } catch (const std::invalid_argument&) {
    return strategy_traits(strategy.name);
  }
}

/// Accepted updates a strategy may carry since its last refactorisation: 0
/// for one that refactorises every move (StrategyTraits::carries_updates), else every accepted move of the experiment, or at most
/// recompute_every of them.
double updates_carried(const StrategyInfo& strategy, const ExperimentResult& experiment) {
  if (!recorded_traits(strategy).carries_updates) return 0.0;
  const double accepted =
      experiment.reference.empty() ? 0.0 : double(experiment.reference.back().accepted);
  return strategy.recompute_every > 0 ? std::min(accepted, double(strategy.recompute_every))
                                      : accepted;
}

/// The metric's error model in its own unit (see Model); 0 for none.
double metric_model(Model model, const StrategyInfo& strategy, const ExperimentResult& experiment) {
  const double growth = 1.0 + updates_carried(strategy, experiment);
  const double n_eps = double(std::max<std::int64_t>(1, experiment.info.n)) * strategy.epsilon;
  const double kappa_1 = reference_max(experiment, &ReferenceCheckpoint::condition_1);
  switch (model) {
    case Model::kappa_1: return growth * n_eps * kappa_1;
    case Model::cycle: return 2 * growth * n_eps * kappa_1;
    case Model::kappa_1_squared: return growth * n_eps * kappa_1 * kappa_1;
    case Model::kappa_rho:
      return growth * n_eps * reference_max(experiment, &ReferenceCheckpoint::ratio_condition_max);
    case Model::n_eps: return growth * n_eps;
    case Model::unit: return growth;
    case Model::none: break;
  }
  return 0.0;
}

/// Why the baseline shows a strategy outside its error model on an
/// experiment, or "" when it is inside: a matrix of the run is singular to
/// the strategy's precision (eps kappa_1 >= 1: no digit can be promised), or
/// a metric exceeds its model. There every error, and every decision and
/// event it causes, is a chaotic function of each rounding.
std::string outside_model(const ExperimentResult& experiment, const StrategyResult& base) {
  const double singular =
      base.info.epsilon * reference_max(experiment, &ReferenceCheckpoint::condition_1);
  if (singular >= 1.0) return fmt::format("eps kappa_1 = {}", number(singular));
  for (const auto& m : kMetrics) {
    const double value = (*base.summary).*m.member;
    const double model = metric_model(m.model, base.info, experiment);
    if (value > model) {
      return fmt::format("{} {} exceeds its model {}", m.name, number(value), number(model));
    }
  }
  return "";
}

/// A comparison in a cell outside its model: reported, never failing.
Comparison unjudged(Comparison c) {
  c.passed = true;
  c.detail += " (not judged: outside the error model in the baseline)";
  return c;
}

void compare_strategy(const ExperimentResult& base_experiment, const StrategyResult& now,
                      const StrategyResult& base, const RegressLimits& limits,
                      RegressReport& report) {
  const std::string& experiment = base_experiment.info.name;
  const std::string& label = base.info.label;
  const StrategySummary& s = *now.summary;
  const StrategySummary& b = *base.summary;
  std::vector<Comparison> out;
  for (const auto& m : kMetrics) {
    const double baseline = b.*m.member;
    const double floor = metric_floor(m.scale, limits, base.info.epsilon, base_experiment);
    const double model = metric_model(m.model, base.info, base_experiment);
    out.push_back(bounded(experiment, label, m.name, ComparisonKind::metric, s.*m.member, baseline,
                          std::max(limits.factor * std::max(baseline, model), floor), model));
  }
  const auto count = [&](const std::string& name, std::int64_t value, std::int64_t baseline) {
    out.push_back(bounded(experiment, label, name, ComparisonKind::count, double(value),
                          double(baseline), std::max(limits.factor * double(baseline), limits.count_floor)));
  };
  for (const auto& c : kCounts) count(c.name, s.*c.member, b.*c.member);
  for (const CounterEvent& event : recorded_traits(base.info).events)
    if (event.judged) count(event.name, event_count(s.events, event.name), event_count(b.events, event.name));
  const bool finished_ok = !(s.failed && !b.failed);
  out.push_back(structural(
      experiment, label, "finished", finished_ok,
      finished_ok ? (s.failed ? "could not finish, as in the baseline: " + s.failure : "finished")
                  : "could not finish (" + s.failure + "); the baseline finished"));
  const std::string outside = outside_model(base_experiment, base);
  if (!outside.empty()) {
    report.notes.push_back(experiment + " / " + label + ": outside its error model in the " +
                           "baseline (" + outside + "): not judged");
    for (auto& c : out) c = unjudged(std::move(c));
  }
  report.comparisons.insert(report.comparisons.end(), out.begin(), out.end());
}

void compare_experiment(const ExperimentResult& now, const ExperimentResult& base,
                        const RegressLimits& limits, RegressReport& report) {
  const std::string& name = base.info.name;
  const auto differences = definition_differences(now.info, base.info);
  if (!differences.empty()) {
    report.comparisons.push_back(
        structural(name, "", "definition", false,
                   "not comparable with the baseline: " + join(differences, ", ")));
    return;
  }
  for (const auto& base_strategy : base.strategies) {
    const std::string& label = base_strategy.info.label;
    const StrategyResult* strategy = find_named(now.strategies, label);
    if (!strategy) {
      report.comparisons.push_back(
          structural(name, label, "present", false, "missing from the new run"));
    } else if (!strategy->complete() || !base_strategy.complete()) {
      report.comparisons.push_back(structural(
          name, label, "finished", false,
          strategy->complete() ? "incomplete in the baseline" : "incomplete in the new run"));
    } else {
      const auto changed = option_differences(strategy->info, base_strategy.info);
      if (!changed.empty())
        report.notes.push_back(name + " / " + label + ": " + join(changed, ", "));
      compare_strategy(base, *strategy, base_strategy, limits, report);
    }
  }
  for (const auto& s : now.strategies) {
    if (!find_named(base.strategies, s.info.label)) {
      report.notes.push_back(name + " / " + s.info.label + ": not in the baseline (not compared)");
    }
  }
}

// VMC runs are statistical: the same build reproduces them bit for bit, but
// on another machine a walker's path may part at a decision near threshold,
// after which its energy is another sample of the same distribution.
std::vector<std::string> vmc_definition_differences(const VmcRunInfo& now, const VmcRunInfo& base) {
  std::vector<std::string> out;
  // reference_run names another run of the same file, not the definition.
  note_field_differences(out, now, base, {"reference_run"});
  return out;
}

void compare_vmc(const VmcRun& now, const VmcRun& base, const RegressLimits& limits,
                 RegressReport& report) {
  const std::string& name = base.info.name;
  const auto differences = vmc_definition_differences(now.info, base.info);
  if (!differences.empty()) {
    report.comparisons.push_back(
        structural("vmc", name, "definition", false,
                   "not comparable with the baseline: " + join(differences, ", ")));
    return;
  }
  const VmcRunSummary& s = now.summary;
  const VmcRunSummary& b = base.summary;
  report.comparisons.push_back(compare_estimates("vmc", name, "energy", s.energy, s.error,
                                                 b.energy, b.error, limits.z_threshold));
  for (const auto& [metric, value, baseline] :
       {std::tuple{"failed_walkers", s.failed_walkers, b.failed_walkers},
        std::tuple{"breakdowns", s.breakdowns, b.breakdowns}}) {
    report.comparisons.push_back(
        bounded("vmc", name, metric, ComparisonKind::count, double(value), double(baseline),
                std::max(limits.factor * double(baseline), limits.count_floor)));
  }
}

// Orbital-set accuracy is deterministic, like the lockstep metrics.
void compare_orbitals(const OrbitalAccuracyRecord& now, const OrbitalAccuracyRecord& base,
                      const RegressLimits& limits, RegressReport& report) {
  const std::string& label = base.label;
  if (now.orbitals != base.orbitals || now.n != base.n || now.alpha != base.alpha ||
      now.grid != base.grid || now.samples != base.samples) {
    report.comparisons.push_back(structural(
        "orbitals", label, "definition", false,
        fmt::format("not comparable with the baseline: {} n {} alpha {} grid {} samples {} "
                    "(baseline {} n {} alpha {} grid {} samples {})",
                    now.orbitals, now.n, now.alpha, now.grid, now.samples, base.orbitals, base.n,
                    base.alpha, base.grid, base.samples)));
    return;
  }
  const double floor = limits.floor_eps * base.epsilon;
  for (const auto& [metric, value, baseline] :
       {std::tuple{"value_max_rel", now.value_max_rel, base.value_max_rel},
        std::tuple{"gradient_max_rel", now.gradient_max_rel, base.gradient_max_rel},
        std::tuple{"laplacian_max_rel", now.laplacian_max_rel, base.laplacian_max_rel}}) {
    report.comparisons.push_back(bounded("orbitals", label, metric, ComparisonKind::metric, value,
                                         baseline, std::max(limits.factor * baseline, floor)));
  }
}

template <class T, class Key>
const T* find_by(const std::vector<T>& items, const std::string& name, Key key) {
  for (const auto& item : items) {
    if (key(item) == name) return &item;
  }
  return nullptr;
}

/// VMC runs and orbital-accuracy records of the baseline, as "vmc / <run>"
/// and "orbitals / <label>".
void compare_studies(const ResultsFile& current, const ResultsFile& baseline,
                     const RegressLimits& limits, RegressReport& report) {
  const auto run_name = [](const VmcRun& r) -> const std::string& { return r.info.name; };
  const auto label = [](const OrbitalAccuracyRecord& r) -> const std::string& { return r.label; };
  for (const auto& base : baseline.vmc) {
    const VmcRun* now = find_by(current.vmc, base.info.name, run_name);
    if (now) compare_vmc(*now, base, limits, report);
    else report.comparisons.push_back(
        structural("vmc", base.info.name, "present", false, "missing from the new run"));
  }
  for (const auto& base : baseline.orbitals) {
    const OrbitalAccuracyRecord* now = find_by(current.orbitals, base.label, label);
    if (now) compare_orbitals(*now, base, limits, report);
    else report.comparisons.push_back(
        structural("orbitals", base.label, "present", false, "missing from the new run"));
  }
  for (const auto& r : current.vmc) {
    if (!find_by(baseline.vmc, r.info.name, run_name)) {
      report.notes.push_back("vmc / " + r.info.name + ": not in the baseline (not compared)");
    }
  }
}
}  // namespace

// ---- public -------------------------------------------------------------------

RegressReport compare_results(const ResultsFile& current, const ResultsFile& baseline,
                              const RegressLimits& limits) {
  RegressReport report;
  for (const auto& base : baseline.experiments) {
    const ExperimentResult* now = find_named(current.experiments, base.info.name);
    if (now) {
      compare_experiment(*now, base, limits, report);
    } else {
      report.comparisons.push_back(
          structural(base.info.name, "", "present", false, "missing from the new run"));
    }
  }
  for (const auto& e : current.experiments) {
    if (!find_named(baseline.experiments, e.info.name)) {
      report.notes.push_back(e.info.name + ": not in the baseline (not compared)");
    }
  }
  compare_studies(current, baseline, limits, report);
  return report;
}

Comparison compare_estimates(const std::string& experiment, const std::string& strategy,
                             const std::string& metric, double mean, double error,
                             double baseline_mean, double baseline_error, double z_threshold) {
  const Agreement a = agreement(mean, error, baseline_mean, baseline_error, z_threshold);
  // No estimate in either (a run without samples) "does not apply", as for metrics.
  const bool neither = std::isnan(mean) && std::isnan(baseline_mean);
  Comparison c{experiment, strategy, metric, ComparisonKind::statistical, mean, baseline_mean,
               z_threshold, a.agree || neither, ""};
  c.detail = fmt::format("{} {} vs baseline {}: z = {:.2f} (limit {:g})", metric,
                         format_mean_error(mean, error),
                         format_mean_error(baseline_mean, baseline_error), a.z, z_threshold);
  return c;
}

Comparison schema_mismatch(int baseline_version) {
  Comparison c = structural("", "", "schema_version", false,
                            fmt::format("the baseline has schema_version {}, this build writes {}: "
                                        "regenerate it with --update-baseline",
                                        baseline_version, kSchemaVersion));
  c.value = kSchemaVersion;
  c.baseline = baseline_version;
  return c;
}
}  // namespace slaterlab
