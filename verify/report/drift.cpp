#include "verify/report/drift.hpp"

// The recompute interval's model. A strategy that refactorises every M
// accepted moves restarts its rounding from a fresh factorisation, so its
// error after a recompute is the error of a run of at most M accepted moves
// from a fresh start: the interval for a target T is the largest M for which
// a fresh run stays below T. It is read off the envelope E(m) (the largest
// error over repeats at the checkpoint with m accepted moves, m the fewest
// accepted over the repeats there):
// - measured: E crosses T within the run; M is where the line between the
//   last checkpoint within T and the first beyond it meets T;
// - extrapolated: E stays within T; M solves e0 + d M = T for the
//   least-squares line of E against m. Rounding errors accumulate linearly
//   (systematic) or as a random walk (sqrt m); a line through the run's
//   checkpoints overestimates a concave growth beyond them, so M is
//   conservative for both;
// - none: E exceeds T at the first checkpoint with a value (no interval
//   helps: a fresh factorisation's own error, or the first window's ratios,
//   are above the target);
// - no drift: E stays within T and its slope is not positive.

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <regex>

namespace slaterlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

MeanError mean_error(const std::vector<double>& values) {
  std::vector<double> finite;
  for (double v : values)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty()) return {kNaN, kNaN};
  double mean = 0.0;
  for (double v : finite) mean += v;
  mean /= double(finite.size());
  if (finite.size() < 2) return {mean, kNaN};
  double square = 0.0;
  for (double v : finite) square += (v - mean) * (v - mean);
  const double variance = square / double(finite.size() - 1);
  return {mean, std::sqrt(variance / double(finite.size()))};
}

struct Line {
  double intercept = kNaN;
  double slope = kNaN;
};

/// Least-squares line through the finite (x, y) points; NaN with fewer than
/// two distinct x.
Line fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, count = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(y[i])) continue;
    sx += x[i];
    sy += y[i];
    ++count;
  }
  if (count < 2) return {};
  const double mx = sx / count, my = sy / count;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(y[i])) continue;
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (sxx == 0) return {};
  return {my - sxy / sxx * mx, sxy / sxx};
}

/// A per-checkpoint metric's series, as one repeat ran it.
using Metric = double StrategyCheckpoint::*;

std::vector<double> series(const StrategyResult& s, Metric metric) {
  std::vector<double> out;
  for (const auto& c : s.checkpoints) out.push_back(c.*metric);
  return out;
}

std::vector<double> accepted_series(const StrategyResult& s) {
  std::vector<double> out;
  for (const auto& c : s.checkpoints) out.push_back(double(c.accepted));
  return out;
}

RecomputeInterval recompute_interval(const std::vector<const StrategyResult*>& runs,
                                     Metric metric, double target) {
  if (!(target > 0)) return {};
  // Repeats of one configuration have the same checkpoints (same moves and
  // cadence); a repeat cut short leaves the envelope at its shortest run.
  std::size_t count = std::numeric_limits<std::size_t>::max();
  for (const auto* r : runs) count = std::min(count, r->checkpoints.size());
  std::vector<double> m(count, kNaN), envelope(count, kNaN);
  for (std::size_t c = 0; c < count; ++c) {
    for (const auto* r : runs) {
      const StrategyCheckpoint& point = r->checkpoints[c];
      m[c] = std::fmin(m[c], double(point.accepted));
      envelope[c] = std::fmax(envelope[c], point.*metric);  // fmax skips NaN
    }
  }
  std::optional<std::size_t> last_within;
  for (std::size_t c = 0; c < count; ++c) {
    if (!std::isfinite(envelope[c])) continue;
    if (envelope[c] > target) {
      if (!last_within) return {RecomputeInterval::Kind::none, 0.0};
      // Where the line between the two checkpoints meets the target.
      const std::size_t b = *last_within;
      const double share = (target - envelope[b]) / (envelope[c] - envelope[b]);
      return {RecomputeInterval::Kind::measured, m[b] + share * (m[c] - m[b])};
    }
    last_within = c;
  }
  if (!last_within) return {};
  const Line line = fit_line(m, envelope);
  if (!(line.slope > 0)) return {RecomputeInterval::Kind::no_drift, m[*last_within]};
  const double extrapolated = (target - line.intercept) / line.slope;
  return {RecomputeInterval::Kind::extrapolated, std::fmax(extrapolated, m[*last_within])};
}

/// The workload parameters but the seed.
std::vector<std::pair<std::string, std::string>> seedless(const ExperimentInfo& e) {
  auto out = e.parameters;
  std::erase_if(out, [](const auto& p) { return p.first == "seed"; });
  return out;
}

/// Everything that defines an experiment but its name and seed.
bool same_configuration(const ExperimentInfo& a, const ExperimentInfo& b) {
  return a.workload == b.workload && a.n == b.n && a.moves == b.moves &&
         a.checkpoint_every == b.checkpoint_every && a.acceptance == b.acceptance &&
         a.acceptance_rate == b.acceptance_rate && seedless(a) == seedless(b);
}

std::string configuration_name(const std::string& name) {
  static const std::regex repeat_suffix("-r[0-9]+$");
  return std::regex_replace(name, repeat_suffix, "");
}

DriftRow drift_row(const std::string& configuration, std::int64_t n,
                   const std::vector<const StrategyResult*>& runs, const DriftTargets& targets) {
  DriftRow row;
  row.configuration = configuration;
  row.strategy = runs.front()->info.label;
  row.precision = runs.front()->info.precision;
  row.n = n;
  row.repeats = int(runs.size());
  std::vector<double> max_ratio, worst_log_det, ratio_slope, log_det_slope, accepted;
  for (const auto* r : runs) {
    max_ratio.push_back(r->summary->max_ratio_error);
    worst_log_det.push_back(r->summary->worst_log_det_error);
    const auto x = accepted_series(*r);
    ratio_slope.push_back(fit_line(x, series(*r, &StrategyCheckpoint::ratio_error_median)).slope);
    log_det_slope.push_back(fit_line(x, series(*r, &StrategyCheckpoint::log_det_error)).slope);
    accepted.push_back(x.empty() ? kNaN : x.back());
  }
  row.accepted = mean_error(accepted).mean;
  row.max_ratio_error = mean_error(max_ratio);
  row.worst_log_det_error = mean_error(worst_log_det);
  row.ratio_drift = mean_error(ratio_slope);
  row.log_det_drift = mean_error(log_det_slope);
  const auto target = targets.find(row.precision);
  row.target = target == targets.end() ? kNaN : target->second;
  row.ratio_interval = recompute_interval(runs, &StrategyCheckpoint::ratio_error_median, row.target);
  row.log_det_interval = recompute_interval(runs, &StrategyCheckpoint::log_det_error, row.target);
  return row;
}

}  // namespace

DriftTargets default_drift_targets() { return {{"float", 1e-4}, {"mixed", 1e-4}, {"double", 1e-10}}; }

std::vector<DriftRow> drift_rows(const ResultsFile& results, const DriftTargets& targets) {
  // Configurations in the order of their first experiment.
  std::vector<std::vector<const ExperimentResult*>> groups;
  for (const auto& e : results.experiments) {
    auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& group) {
      return same_configuration(group.front()->info, e.info);
    });
    if (same == groups.end()) groups.push_back({&e});
    else same->push_back(&e);
  }
  std::vector<DriftRow> rows;
  for (const auto& group : groups) {
    const ExperimentResult& first = *group.front();
    for (const auto& strategy : first.strategies) {
      std::vector<const StrategyResult*> runs;
      for (const auto* e : group) {
        for (const auto& s : e->strategies) {
          if (s.info.label == strategy.info.label && s.summary && !s.summary->failed &&
              !s.checkpoints.empty())
            runs.push_back(&s);
        }
      }
      if (runs.empty()) continue;
      rows.push_back(drift_row(configuration_name(first.info.name), first.info.n, runs, targets));
    }
  }
  return rows;
}

}  // namespace slaterlab
