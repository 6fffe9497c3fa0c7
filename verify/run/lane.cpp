#include "verify/run/lane.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab::run_detail {

// How a strategy's summary folds its checkpoints. Summary fields are named
// for their fold (worst_, max_, final_), not after the checkpoint field, so
// the pairs are listed here; record_fields.hpp lists each record alone.
template <class T>
using SummaryFrom = std::pair<T StrategySummary::*, T StrategyCheckpoint::*>;

/// The largest value over checkpoints (fmax: a NaN checkpoint is skipped).
constexpr SummaryFrom<double> kWorstOverCheckpoints[] = {
    {&StrategySummary::worst_log_det_error, &StrategyCheckpoint::log_det_error},
    {&StrategySummary::max_ratio_error, &StrategyCheckpoint::ratio_error_max},
    {&StrategySummary::max_ratio_error_eps, &StrategyCheckpoint::ratio_error_max_eps},
    {&StrategySummary::max_ratio_error_normalised, &StrategyCheckpoint::ratio_error_normalised_max},
    {&StrategySummary::max_inverse_residual, &StrategyCheckpoint::inverse_residual_max},
    {&StrategySummary::max_inverse_divergence, &StrategyCheckpoint::inverse_divergence},
    {&StrategySummary::max_qr_residual, &StrategyCheckpoint::qr_residual},
    {&StrategySummary::max_orthogonality_loss, &StrategyCheckpoint::orthogonality_loss},
    {&StrategySummary::max_cycle_ratio_error, &StrategyCheckpoint::cycle_ratio_error_max},
    {&StrategySummary::max_cycle_ratio_error_eps, &StrategyCheckpoint::cycle_ratio_error_max_eps},
};

/// The last checkpoint's value (the checkpoint's own value is final or cumulative).
constexpr SummaryFrom<double> kLastDouble[] = {
    {&StrategySummary::final_log_det_error, &StrategyCheckpoint::log_det_error},
    {&StrategySummary::final_inverse_divergence, &StrategyCheckpoint::inverse_divergence},
    {&StrategySummary::elapsed_s, &StrategyCheckpoint::elapsed_s},
};
constexpr SummaryFrom<std::int64_t> kLastCount[] = {
    {&StrategySummary::breakdowns, &StrategyCheckpoint::breakdowns},
    {&StrategySummary::recomputes, &StrategyCheckpoint::recomputes},
    {&StrategySummary::cycle_breakdowns, &StrategyCheckpoint::cycle_breakdowns},
    {&StrategySummary::singular_restarts, &StrategyCheckpoint::singular_restarts},
};

void fold_checkpoint(StrategySummary& s, const StrategyCheckpoint& c) {
  for (const auto& [to, from] : kWorstOverCheckpoints) s.*to = std::fmax(s.*to, c.*from);
  for (const auto& [to, from] : kLastDouble) s.*to = c.*from;
  for (const auto& [to, from] : kLastCount) s.*to = c.*from;
  s.events = c.events;  // cumulative
  // Per-checkpoint counts, summed over the run.
  s.sign_disagreements += !c.sign_agrees;
  s.flips += c.flips;
}

UpdaterCounters operator+(UpdaterCounters a, const UpdaterCounters& b) { return a += b; }

EventCounts declared_events(const std::string& strategy, const UpdaterCounters& counters) {
  const std::vector<CounterEvent>& declared = strategy_traits(strategy).events;
  for (const auto& [name, count] : counters.events) {
    const bool known = std::any_of(declared.begin(), declared.end(),
                                   [&](const CounterEvent& e) { return e.name == name; });
    if (!known)
      throw std::logic_error(fmt::format(
          "strategy '{}' counted the event '{}', which its traits do not declare "
          "(StrategyTraits::events)",
          strategy, name));
  }
  EventCounts events;
  for (const CounterEvent& event : declared) events.emplace_back(event.name, counters.event(event.name));
  return events;
}

}  // namespace slaterlab::run_detail
