#pragma once
// One strategy of a lockstep experiment (lockstep_experiment.hpp) and what
// the runner keeps of it between checkpoints: its updater, the ratio and
// cycle-ratio errors since the last checkpoint, the CPU time of its calls
// (CpuShare) and the summary its checkpoints fold into (fold_checkpoint). A
// lane fails on an error of its strategy and is suspended while the
// strategy finds the matrix singular to its precision; the others go on.
// Internal to verify/run.

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"
#include "verify/inputs/config.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab::run_detail {

using Clock = std::chrono::steady_clock;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// The thread's share of a CPU since mark(): CPU time over wall time, at
/// most 1. A strategy's calls are timed with the wall clock (a CPU-time read
/// is a system call, as long as a small-N move); on a shared machine that
/// wall time also holds the time other processes ran. Preemptions fall in a
/// call in proportion to the CPU time it takes, so the calls' wall time
/// times the share over the same stretch of moves is, in expectation, their
/// CPU time: the clock `slaterlab bench` reports, and the strategy's cost.
class CpuShare {
 public:
  void mark() {
    wall0_ = Clock::now();
    cpu0_ = thread_cpu_seconds();
  }
  double share() const {
    const double wall = seconds_since(wall0_);
    const double cpu = thread_cpu_seconds() - cpu0_;
    return wall > 0 ? std::clamp(cpu / wall, 0.0, 1.0) : 1.0;
  }

 private:
  Clock::time_point wall0_{};
  double cpu0_ = 0.0;
};

/// Ratio errors of one strategy since its last checkpoint.
struct RatioErrors {
  double max = 0.0;
  double sum_squares = 0.0;
  double normalised_max = 0.0;
  std::int64_t count = 0;
  std::int64_t flips = 0;
  std::vector<double> relative;  // the window's errors, for the median

  void add(double error, double normalised) {
    max = std::max(max, error);
    sum_squares += error * error;
    if (std::isfinite(normalised)) normalised_max = std::max(normalised_max, normalised);
    relative.push_back(error);
    ++count;
  }
  double rms() const { return count ? std::sqrt(sum_squares / double(count)) : 0.0; }
  /// The upper median (NaN for an empty window); reorders `relative`.
  double median() {
    if (relative.empty()) return kNaN;
    const auto middle = relative.begin() + std::ptrdiff_t(relative.size() / 2);
    std::nth_element(relative.begin(), middle, relative.end());
    return *middle;
  }
};

/// Cycle-ratio errors of one strategy since its last checkpoint.
struct CycleErrors {
  double max = kNaN;  // NaN: no cycle measured
  void add(double relative) { max = std::fmax(max, relative); }
};

/// Folds checkpoint c into the strategy's summary s (lane.cpp lists how
/// each field folds).
void fold_checkpoint(StrategySummary& s, const StrategyCheckpoint& c);

UpdaterCounters operator+(UpdaterCounters a, const UpdaterCounters& b);

/// The counts of the events the strategy declares (StrategyTraits::events),
/// in its order, 0 where not counted yet; std::logic_error naming an event
/// it counted without declaring it (the results file would have no column
/// for it).
EventCounts declared_events(const std::string& strategy, const UpdaterCounters& counters);

/// One strategy running in lockstep with the reference.
struct Lane {
  const StrategyConfig* config = nullptr;
  std::unique_ptr<DeterminantUpdater> updater;
  StrategyHandle handle;
  RatioErrors errors;
  CycleErrors cycle_errors;
  StrategySummary summary;
  double elapsed_s = 0.0;  // CPU time in the strategy's calls (CpuShare)
  double wall_s = 0.0;     // wall time in its calls since the last settle_elapsed()
  std::int64_t flips_total = 0;
  bool failed = false;
  // The strategy found the matrix singular to its precision (a
  // SingularMatrixError from accept() or apply_cycle()): it has no state
  // until the runner resets it from the next matrix it can factorise.
  bool suspended = false;
  UpdaterCounters carried;  // counters of the updater's runs before its resets
  std::int64_t cycle_breakdowns = 0;
  std::int64_t singular_restarts = 0;
  // Checkpoints where a metric the strategy was measured on came out NaN or
  // infinite (a summary's fmax skips them): the kernel checks count them.
  std::int64_t nonfinite_log_det = 0;
  std::int64_t nonfinite_inverse = 0;

  Lane() {
    // Maxima of metrics that may not apply (an inverse residual of a QR
    // strategy) or may measure nothing (ratio errors without a defined
    // ratio) start at NaN: fmax keeps NaN only if every value is NaN.
    summary.max_inverse_residual = summary.max_inverse_divergence = kNaN;
    summary.max_qr_residual = summary.max_orthogonality_loss = kNaN;
    summary.max_ratio_error = summary.max_ratio_error_eps = kNaN;
    summary.max_ratio_error_normalised = kNaN;
  }

  void fail(const std::exception& error) {
    failed = true;
    summary.failed = true;
    summary.failure = error.what();
  }

  bool live() const { return !failed && !suspended; }

  UpdaterCounters counters() const {
    return suspended ? carried : carried + updater->counters();
  }

  /// A finding, not an error: the strategy's refactorisation found the
  /// exact matrix singular to its precision (the ratio that led there was
  /// its breakdown, counted by the strategy; the restart is counted below).
  void suspend() {
    carried = carried + updater->counters();
    suspended = true;
  }

  /// Re-establishes a suspended strategy from the exact matrix `a` when it
  /// can factorise it (else it stays suspended); reset() clears the
  /// updater's counters, which `carried` keeps.
  void resume(const Eigen::MatrixXd& a) {
    if (!suspended || failed) return;
    const auto t = Clock::now();
    try {
      updater->reset(a);
      suspended = false;
      ++singular_restarts;
    } catch (const SingularMatrixError&) {
    } catch (const std::exception& error) {
      fail(error);
    }
    wall_s += seconds_since(t);
  }
};

}  // namespace slaterlab::run_detail
