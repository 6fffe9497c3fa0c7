#pragma once
// Drift over repeats: how each strategy's errors grow with the accepted
// moves, with error bars over experiments that differ only in their seed
// (the `repeats` of an experiment file), and the recompute interval that
// keeps them within a target (docs/large-n.md states the model).
//
// - Repeats: experiments whose description is identical except name and
//   seed form one configuration, named by the first one's name without its
//   "-r<i>" suffix. Strategies are matched by label; a strategy without a
//   summary, or one that failed, is left out of its configuration.
// - Per repeat: the max ratio error, the worst log|det| error, and the
//   least-squares slopes of the median ratio error (per checkpoint window)
//   and of the log|det| error against the accepted moves at the
//   checkpoints; the table gives their mean and standard error. Drift and
//   intervals use the median ratio error: the max (and the rms) is set by
//   the few proposals with tiny |rho|, large at any interval, even right
//   after a recompute.
// - Recompute interval (accepted moves): from the envelope over repeats at
//   each checkpoint. Measured where the envelope crosses the target within
//   the run (interpolated between checkpoints), extrapolated linearly beyond it (conservative for growth that
//   is linear or slower), none where the first checkpoint already exceeds it.

#include <map>
#include <string>
#include <vector>

#include "verify/store/hdf5_store.hpp"

namespace slaterlab {

/// The error target per precision name ("float", "mixed", "double").
using DriftTargets = std::map<std::string, double>;

/// 1e-4 relative for float and mixed, 1e-10 for double.
DriftTargets default_drift_targets();

struct MeanError {
  double mean = 0.0;
  double error = 0.0;  // standard error of the mean; NaN with one repeat
};

struct RecomputeInterval {
  enum class Kind { measured, extrapolated, none, no_drift, no_target };
  Kind kind = Kind::no_target;
  double accepted = 0.0;  // measured / extrapolated: accepted moves between recomputes
};

struct DriftRow {
  std::string configuration;
  std::string strategy;
  std::string precision;
  std::int64_t n = 0;
  int repeats = 0;
  double accepted = 0.0;  // mean accepted moves per repeat
  MeanError max_ratio_error, worst_log_det_error;
  MeanError ratio_drift, log_det_drift;  // median ratio and log|det| errors, per accepted move
  double target = 0.0;                   // NaN where the precision has none
  RecomputeInterval ratio_interval, log_det_interval;
};

/// One row per configuration x strategy, in the file's order.
std::vector<DriftRow> drift_rows(const ResultsFile& results, const DriftTargets& targets);

}  // namespace slaterlab
