// The study runner (runner.hpp): its lockstep experiments one after the
// other (lockstep_experiment.hpp), then its VMC runs.
#include "verify/run/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "verify/run/lockstep_experiment.hpp"
#include "verify/run/vmc_study.hpp"

namespace slaterlab {

using run_detail::LockstepExperiment;

std::vector<std::string> compare_delayed_with_sm(const StrategySummary& delayed,
                                                 const StrategySummary& sm,
                                                 const std::string& sm_label, double factor,
                                                 double n_eps) {
  const double f = factor;
  std::vector<std::string> failures;
  if (delayed.max_ratio_error_normalised > f * sm.max_ratio_error_normalised) {
    failures.push_back(fmt::format("ratio error {:.3g} N eps kappa_rho exceeds {:.3g} times {}'s {:.3g}",
                                   delayed.max_ratio_error_normalised, f, sm_label,
                                   sm.max_ratio_error_normalised));
  }
  if (delayed.worst_log_det_error > f * std::max(sm.worst_log_det_error, n_eps)) {
    failures.push_back(fmt::format("log-det error {:.3g} exceeds {:.3g} times max({}'s {:.3g}, N eps {:.3g})",
                                   delayed.worst_log_det_error, f, sm_label,
                                   sm.worst_log_det_error, n_eps));
  }
  return failures;
}

RunReport run_experiments(const StudyConfig& study, ResultWriter& writer, const RunOptions& options) {
  RunReport report;
  for (std::size_t i = 0; i < study.experiments.size(); ++i) {
    std::vector<const StrategyConfig*> strategies;
    if (options.schedule) {
      for (const std::size_t s : options.schedule->strategies_of(i)) strategies.push_back(&study.strategies[s]);
      if (strategies.empty()) continue;  // another process runs this experiment
    } else {
      for (const auto& s : study.strategies) strategies.push_back(&s);
    }
    if (options.progress) {
      fmt::print(stderr, "[{}/{}] {}\n", i + 1, study.experiments.size(), study.experiments[i].name);
    }
    LockstepExperiment experiment(study, study.experiments[i], std::move(strategies), writer);
    if (!experiment.run(options, report.failures)) {
      report.interrupted = true;
      return report;
    }
  }
  return report;
}

RunReport run_study(const StudyConfig& study, ResultWriter& writer, const RunOptions& options) {
  RunReport report = run_experiments(study, writer, options);
  if (!report.interrupted) run_vmc_study(study, &writer, options, report);
  return report;
}

}  // namespace slaterlab
