#include "verify/run/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "slaterlab/reference/certified.hpp"
#include "slaterlab/reference/lockstep_reference.hpp"
#include "slaterlab/reference/mp.hpp"
#include "slaterlab/strategies/determinant/delayed_update.hpp"
#include "slaterlab/strategies/determinant/precision.hpp"
#include "verify/inputs/workload_registry.hpp"
#include "verify/run/kernel_checks.hpp"
#include "verify/run/metrics.hpp"
#include "verify/run/plan.hpp"
#include "verify/run/replay_recorder.hpp"
#include "verify/inputs/rng.hpp"
#include "verify/run/vmc_study.hpp"

namespace slaterlab {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double thread_cpu_seconds() {
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
    {&StrategySummary::splits, &StrategyCheckpoint::splits},
    {&StrategySummary::cycle_breakdowns, &StrategyCheckpoint::cycle_breakdowns},
    {&StrategySummary::singular_restarts, &StrategyCheckpoint::singular_restarts},
    {&StrategySummary::cycles_declined, &StrategyCheckpoint::cycles_declined},
};

void fold_checkpoint(StrategySummary& s, const StrategyCheckpoint& c) {
  for (const auto& [to, from] : kWorstOverCheckpoints) s.*to = std::fmax(s.*to, c.*from);
  for (const auto& [to, from] : kLastDouble) s.*to = c.*from;
  for (const auto& [to, from] : kLastCount) s.*to = c.*from;
  // Per-checkpoint counts, summed over the run.
  s.sign_disagreements += !c.sign_agrees;
  s.flips += c.flips;
}

UpdaterCounters operator+(UpdaterCounters a, const UpdaterCounters& b) {
  a.breakdowns += b.breakdowns;
  a.recomputes += b.recomputes;
  a.flushes += b.flushes;
  a.splits += b.splits;
  a.cycles_declined += b.cycles_declined;
  return a;
}

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

StrategyInfo describe(const StrategyConfig& s) {
  const UpdaterOptions& o = s.options;
  return {s.label, s.name, std::string(to_string(o.precision)), storage_epsilon(o.precision),
          o.recompute_every, o.breakdown, o.k, o.variant, strategy_provenance(s.name, o)};
}

ExperimentInfo describe(const ExperimentConfig& e, const Workload& workload) {
  return {e.name, e.workload.kind, std::int64_t(e.workload.n), e.moves, e.checkpoint_every,
          e.workload.seed, e.acceptance, e.acceptance_rate, workload.parameters()};
}

class LockstepExperiment {
 public:
  LockstepExperiment(const StudyConfig& study, const ExperimentConfig& experiment,
                     std::vector<const StrategyConfig*> strategies, ResultWriter& writer)
      : study_(study),
        experiment_(experiment),
        strategies_(std::move(strategies)),
        writer_(writer),
        workload_(make_workload(workload_to_run(experiment))),
        reference_(reference::choose_reference_engine(study.reference.engine, experiment.workload.n),
                   study.reference.digits, study.reference.recompute_every),
        decisions_(Rng::stream(experiment.workload.seed, 1)) {}

  /// Runs all moves; returns false when interrupted.
  bool run(const RunOptions& options, std::vector<CheckFailure>& failures);

 private:
  void start();
  /// A fast engine's fallback to mp resets mp at N^3 mp cost (about two
  /// hours at N = 4096, 50 digits): where that exceeds the plan's estimate
  /// for the whole experiment, one line on stderr (at the first such reset)
  /// says which result was not trusted, so that a study never spends that
  /// time silently.
  void warn_of_costly_fallbacks();
  std::vector<std::pair<std::string, std::string>> replay_metadata() const;
  void step();
  /// One update cycle (workloads with cycles): always applied.
  void step_cycle();
  /// A move with checkpoint-only references: the strategies only.
  void step_without_reference(const Move& move, double u);
  /// A cycle with checkpoint-only references: the strategies only.
  void cycle_without_reference(const std::vector<ColumnUpdate>& updates);
  /// Runs `call` (the strategy's own calls) on every live lane, timing it
  /// alone; a SingularMatrixError suspends the lane, any other exception
  /// fails it. After a call that returned, `measure(lane, result)` runs
  /// untimed (the metrics are not the strategy's cost).
  template <class Call, class Measure>
  void for_live_lanes(const Call& call, const Measure& measure);
  template <class Call>
  void for_live_lanes(const Call& call) {
    for_live_lanes([&](Lane& lane) { return call(lane), true; }, [](Lane&, bool) {});
  }
  /// After the exact matrix changed: resumes suspended lanes on it.
  void resume_lanes();
  bool decide(double rho, double u) const;
  /// The reference's decision: a move from a singular matrix has no ratio;
  /// Metropolis then accepts (|psi'|^2 / 0), forced acceptance draws as usual.
  bool decide(const reference::RatioInfo& ref, double u) const;
  /// Turns the lanes' wall time since the last call into CPU time
  /// (CpuShare) and starts the next stretch.
  void settle_elapsed();
  /// settle_elapsed() and a checkpoint, whose own time is no stretch's.
  void settle_and_checkpoint();
  void checkpoint();
  void certify(const char* which);
  void finish(std::vector<CheckFailure>& failures);
  void check(const Lane& lane, std::vector<CheckFailure>& failures) const;
  template <class Add>
  void check_against_sm(const Lane& lane, const Add& add) const;
  void show_progress(bool force) const;
  /// The exact current matrix (accepted columns applied).
  const Eigen::MatrixXd& current() const { return per_move() ? reference_.matrix() : current_; }
  bool per_move() const { return study_.reference.per_move; }
  /// Checkpoint-only references: a fresh mp LU of the current matrix, unless
  /// the reference already stands at this move.
  void sync_reference();

  const StudyConfig& study_;
  const ExperimentConfig& experiment_;
  std::vector<const StrategyConfig*> strategies_;  // the ones this process runs
  ResultWriter& writer_;
  std::unique_ptr<Workload> workload_;
  reference::LockstepReference reference_;
  Rng decisions_;
  ExperimentHandle handle_;
  std::vector<Lane> lanes_;
  Eigen::MatrixXd current_;  // checkpoint-only references: the exact current matrix
  std::int64_t reference_move_ = 0;  // the move the reference's mp state belongs to
  std::int64_t move_ = 0;
  std::int64_t accepted_ = 0;
  std::int64_t cycles_ = 0;
  std::int64_t last_checkpoint_ = 0;  // the move of the last checkpoint
  double reference_elapsed_s_ = 0.0;
  double ratio_condition_max_ = 0.0;
  double kappa_max_ = 0.0;          // largest finite condition_1 at a checkpoint
  std::int64_t longest_cycle_ = 0;  // updates of the longest cycle applied
  CpuShare cpu_share_;
  mutable Clock::time_point last_progress_{};
  bool progress_ = false;
  std::optional<ReplayRecorder> recorder_;  // --replay-out
};

/// What a replay file of this experiment says of its origin: the study, the
/// experiment and its workload's parameters ("workload.<key>").
std::vector<std::pair<std::string, std::string>> LockstepExperiment::replay_metadata() const {
  std::vector<std::pair<std::string, std::string>> m = {
      {"code", "slaterlab"},
      {"study", study_.name},
      {"experiment", experiment_.name},
      {"acceptance", experiment_.acceptance}};
  for (const auto& [key, value] : workload_->parameters()) m.emplace_back("workload." + key, value);
  return m;
}

void LockstepExperiment::warn_of_costly_fallbacks() {
  if (reference_.engine() != reference::ReferenceEngine::fast) return;
  const double n = double(experiment_.workload.n);
  const double reset = mp_reset_seconds(study_.reference.digits, n);
  const double planned = experiment_seconds(experiment_, study_);
  if (reset <= planned) return;
  reference_.set_mp_reset_notice([this, reset, planned, told = false](const char* quantity,
                                                                      double bound) mutable {
    if (std::exchange(told, true)) return;  // once per experiment: each reset costs the same
    fmt::print(stderr,
               "slaterlab: warning: experiment '{}' at move {}: the fast reference's {} is not "
               "trusted (bound {:.3g}); the {}-digit mp reference takes over, its reset about {} "
               "(the plan allowed {} for the experiment)\n",
               experiment_.name, move_, quantity, bound, study_.reference.digits,
               format_seconds(reset), format_seconds(planned));
  });
}

void LockstepExperiment::start() {
  cpu_share_.mark();
  warn_of_costly_fallbacks();
  const Eigen::MatrixXd a0 = workload_->initial_matrix();
  if (recorder_) recorder_->start(a0, replay_metadata());
  const auto t0 = Clock::now();
  try {
    reference_.reset(a0);
  } catch (const reference::SingularMatrixError& error) {
    throw InputError("experiment '" + experiment_.name + "': the initial matrix is singular (" +
                     error.what() + ")");
  }
  reference_elapsed_s_ += seconds_since(t0);
  if (!per_move()) current_ = a0;
  handle_ = writer_.begin_experiment(describe(experiment_, *workload_));
  for (const StrategyConfig* s : strategies_) {
    Lane lane;
    lane.config = s;
    lane.handle = writer_.begin_strategy(handle_, describe(*s));
    const auto t = Clock::now();
    // Singular to this strategy's precision, or a kernel that crashes,
    // hangs, exits or refuses this N: a finding of the strategy, not bad
    // input (the study was validated), and the others go on.
    try {
      lane.updater = make_updater(s->name, s->options);
      lane.updater->reset(a0);
    } catch (const SingularMatrixError& error) {
      lane.fail(error);
    } catch (const std::exception& error) {
      if (!strategy_traits(s->name).loads_library) throw;  // a built-in's: not a finding
      lane.fail(error);
    }
    lane.wall_s += seconds_since(t);
    lanes_.push_back(std::move(lane));
  }
  certify("initial");
  settle_and_checkpoint();
}

void LockstepExperiment::settle_elapsed() {
  const double share = cpu_share_.share();
  for (Lane& lane : lanes_) {
    lane.elapsed_s += lane.wall_s * share;
    lane.wall_s = 0.0;
  }
  cpu_share_.mark();
}

void LockstepExperiment::settle_and_checkpoint() {
  settle_elapsed();
  checkpoint();
  cpu_share_.mark();
}

bool LockstepExperiment::decide(double rho, double u) const {
  // Forced acceptance accepts a move to a singular matrix too (rho = 0):
  // the reference then stands on it with det 0 until a move leaves it.
  if (experiment_.acceptance == "forced") return u < experiment_.acceptance_rate;
  return u < rho * rho;  // Metropolis on |rho|^2: never onto a node
}

bool LockstepExperiment::decide(const reference::RatioInfo& ref, double u) const {
  if (!ref.defined && experiment_.acceptance != "forced") return true;
  return decide(ref.value, u);
}

template <class Call, class Measure>
void LockstepExperiment::for_live_lanes(const Call& call, const Measure& measure) {
  for (Lane& lane : lanes_) {
    if (!lane.live()) continue;
    std::optional<decltype(call(lane))> result;
    const auto t0 = Clock::now();
    try {
      result.emplace(call(lane));
    } catch (const SingularMatrixError&) {
      lane.suspend();
    } catch (const std::exception& error) {
      lane.fail(error);
    }
    lane.wall_s += seconds_since(t0);
    if (result) measure(lane, *result);
  }
}

void LockstepExperiment::resume_lanes() {
  if (per_move() && reference_.singular()) return;  // nothing to factorise
  for (Lane& lane : lanes_) lane.resume(current());
}

/// The lane's strategy applies the cycle; a breakdown, or a singular matrix
/// (the SingularMatrixError goes on to suspend the lane), is counted.
CycleRatio apply_cycle(Lane& lane, const std::vector<ColumnUpdate>& updates) {
  try {
    const CycleRatio r = lane.updater->apply_cycle(updates);
    lane.cycle_breakdowns += r.breakdown;
    return r;
  } catch (const SingularMatrixError&) {
    ++lane.cycle_breakdowns;
    throw;
  }
}

std::vector<ColumnUpdate> column_updates(const std::vector<Move>& cycle) {
  std::vector<ColumnUpdate> updates;
  for (const Move& move : cycle) updates.push_back({move.k, move.column});
  return updates;
}

void LockstepExperiment::step_cycle() {
  const std::vector<Move> cycle = workload_->next_cycle(current());
  if (recorder_) recorder_->cycle(cycle);
  const std::vector<ColumnUpdate> updates = column_updates(cycle);
  if (!per_move()) {
    cycle_without_reference(updates);
    return;
  }
  std::vector<Eigen::Index> k;
  Eigen::MatrixXd columns(experiment_.workload.n, Eigen::Index(updates.size()));
  for (std::size_t i = 0; i < updates.size(); ++i) {
    k.push_back(updates[i].k);
    columns.col(Eigen::Index(i)) = updates[i].column;
  }
  auto t0 = Clock::now();
  const reference::CycleInfo ref = reference_.apply_cycle(k, columns);
  reference_elapsed_s_ += seconds_since(t0);
  for (const reference::RatioInfo& r : ref.per_update) {
    ratio_condition_max_ = std::fmax(ratio_condition_max_, r.conditioning);
  }
  const double n = double(experiment_.workload.n);
  const auto apply = [&](Lane& lane) { return apply_cycle(lane, updates); };
  for_live_lanes(apply, [&](Lane& lane, const CycleRatio& r) {
    // Relative errors where the exact ratio is defined and nonzero: the
    // cycle's own, and each update's against the matrix just before it. A
    // cycle the strategy declared a breakdown has no value to judge (a
    // placeholder; the breakdown is counted).
    if (!r.breakdown && ref.ratio.defined && ref.ratio.value != 0.0) {
      lane.cycle_errors.add(std::abs(r.value - ref.ratio.value) / std::abs(ref.ratio.value));
    }
    if (r.per_update.size() != ref.per_update.size()) return;
    for (std::size_t i = 0; i < r.per_update.size(); ++i) {
      const reference::RatioInfo& exact = ref.per_update[i];
      if (!exact.defined || exact.value == 0.0) continue;
      const double relative = std::abs(r.per_update[i].value - exact.value) / std::abs(exact.value);
      lane.errors.add(relative, relative / (n * lane.updater->epsilon() * exact.conditioning));
    }
  });
  move_ += std::int64_t(updates.size());
  accepted_ += std::int64_t(updates.size());
  longest_cycle_ = std::max(longest_cycle_, std::int64_t(updates.size()));
  ++cycles_;
  resume_lanes();
}

void LockstepExperiment::cycle_without_reference(const std::vector<ColumnUpdate>& updates) {
  for_live_lanes([&](Lane& lane) { (void)apply_cycle(lane, updates); });
  for (const ColumnUpdate& u : updates) current_.col(u.k) = u.column;
  move_ += std::int64_t(updates.size());
  accepted_ += std::int64_t(updates.size());
  longest_cycle_ = std::max(longest_cycle_, std::int64_t(updates.size()));
  ++cycles_;
  resume_lanes();
}

void LockstepExperiment::step() {
  const Move move = workload_->next_move(current());
  // A replayed run may bring its own uniform and decision; the shared stream
  // is drawn anyway so that its position never depends on the workload.
  double u = decisions_.uniform();
  if (move.uniform) u = *move.uniform;
  if (!per_move()) {
    step_without_reference(move, u);
    return;
  }
  auto t0 = Clock::now();
  const reference::RatioInfo ref = reference_.ratio(move.k, move.column);
  reference_elapsed_s_ += seconds_since(t0);
  ratio_condition_max_ = std::fmax(ratio_condition_max_, ref.conditioning);
  // Flips always compare a strategy with the reference's decision for the same u.
  const bool reference_accept = decide(ref, u);
  const bool accept = move.accept.value_or(reference_accept);
  if (recorder_) recorder_->move(move, accept, u);
  const double n = double(experiment_.workload.n);

  const auto propose = [&](Lane& lane) {
    const Ratio r = lane.updater->ratio(move.k, move.column);
    if (accept) lane.updater->accept(); else lane.updater->reject();
    return r;
  };
  for_live_lanes(propose, [&](Lane& lane, const Ratio& r) {
    // A ratio from a singular matrix is undefined, one onto it is 0: no
    // relative error for either, and no flip from an undefined one.
    if (ref.defined && ref.value != 0.0) {
      const double relative = std::abs(r.value - ref.value) / std::abs(ref.value);
      lane.errors.add(relative, relative / (n * lane.updater->epsilon() * ref.conditioning));
    }
    if (ref.defined && decide(r.value, u) != reference_accept) ++lane.errors.flips;
  });
  t0 = Clock::now();
  if (accept) reference_.accept(); else reference_.reject();
  reference_elapsed_s_ += seconds_since(t0);
  accepted_ += accept;
  ++move_;
  if (accept) resume_lanes();
}

void LockstepExperiment::step_without_reference(const Move& move, double u) {
  // Forced acceptance (the configuration requires it): the decision needs
  // no ratio. A move the workload made exactly singular shows at the next
  // checkpoint's mp LU.
  const bool accept = move.accept.value_or(u < experiment_.acceptance_rate);
  if (recorder_) recorder_->move(move, accept, u);
  for_live_lanes([&](Lane& lane) {
    (void)lane.updater->ratio(move.k, move.column);
    if (accept) lane.updater->accept(); else lane.updater->reject();
  });
  if (accept) current_.col(move.k) = move.column;
  accepted_ += accept;
  ++move_;
  if (accept) resume_lanes();
}

void LockstepExperiment::sync_reference() {
  if (per_move() || reference_move_ == move_) return;
  reference_.assign(current_);  // a singular matrix: the reference's singular state
  reference_move_ = move_;
}

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
    c.flushes = counters.flushes;
    c.splits = counters.splits;
    c.cycles_declined = counters.cycles_declined;
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

void LockstepExperiment::certify(const char* which) {
  if (!study_.reference.certify) return;
  // At BLAS speed first (tens of double LUs instead of Arb's O(N^3) ball
  // arithmetic, docs/fast-reference.md); Arb at the study's precision only
  // where that bound cannot prove the enclosure (about kappa N u > 1e-2).
  auto certified = reference::certified_log_det_blas(reference_.matrix());
  if (!certified.certified)
    certified = reference::certified_log_det(reference_.matrix(), study_.reference.certified_bits);
  CertifiedLogDet c;
  c.certified = certified.certified;
  c.log_abs_mid = certified.log_abs_mid;
  c.log_abs_radius = certified.log_abs_radius;
  c.sign = certified.sign;
  c.precision_bits = certified.precision_bits;
  c.message = certified.message;
  const long double mp = reference_.log_det().log_abs;
  c.mp_log_abs = double(mp);
  // The reference value is not exact: its long double rounding (2 eps_ld |mp|)
  // plus its own error bound (mp: 16 N^2 u_mp kappa_1, the model the
  // reference's tests use; fast: its a-posteriori bound).
  const long double slack = 2 * std::numeric_limits<long double>::epsilon() * std::abs(mp) +
                            reference_.log_det_error_bound();
  c.mp_inside = c.certified && std::abs(mp - (long double)c.log_abs_mid) <=
                                   (long double)c.log_abs_radius + slack;
  writer_.set_certified(handle_, which, c);
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
  for (std::string& what : compare_delayed_with_sm(lane.summary, sm->summary, sm->config->label,
                                                   lane.config->options.k, n_eps)) {
    add(std::move(what));
  }
}

void LockstepExperiment::finish(std::vector<CheckFailure>& failures) {
  certify("final");
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

bool LockstepExperiment::run(const RunOptions& options, std::vector<CheckFailure>& failures) {
  progress_ = options.progress;
  // Every process that runs part of a split experiment walks the same walk;
  // the one running the study's first strategy writes it.
  const bool writes_replay = !options.replay_dir.empty() &&
                             (strategies_.empty() || study_.strategies.empty() ||
                              strategies_.front() == &study_.strategies.front());
  if (writes_replay) recorder_.emplace();
  start();
  const bool cycles = workload_->cycles();
  while (move_ < experiment_.moves) {
    if (options.interrupt && options.interrupt->load()) return false;
    if (cycles) step_cycle(); else step();
    // A cycle of m moves may step over a multiple of checkpoint_every; a
    // run of cycles ends at the first cycle end at or after `moves`.
    const std::int64_t every = experiment_.checkpoint_every;
    if (move_ / every > last_checkpoint_ / every || move_ >= experiment_.moves) {
      settle_and_checkpoint();
    }
    show_progress(false);
  }
  show_progress(true);
  finish(failures);
  if (recorder_) recorder_->write(options.replay_dir / (experiment_.name + ".replay.h5"));
  return true;
}

}  // namespace

std::vector<std::string> compare_delayed_with_sm(const StrategySummary& delayed,
                                                 const StrategySummary& sm,
                                                 const std::string& sm_label, int k, double n_eps) {
  const double f = DelayedUpdate<double, double>::kGrowthFactor * std::sqrt(double(k) + 1);
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
