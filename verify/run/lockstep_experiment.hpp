#pragma once
// One experiment of a study run in lockstep (runner.hpp states the scheme):
// every strategy of this process (a lane each, lane.hpp) takes the same
// moves and the reference's accept/reject decisions; checkpoints measure
// each against the reference, stream the rows into the writer and fold
// them into the summaries, and finish() runs the checks on them. run()
// returns false when interrupted. Throws InputError for a workload it
// cannot build and IoError from the store; a strategy's own errors fail
// its lane only. Internal to verify/run (runner.cpp).

#include <Eigen/Core>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "slaterlab/reference/certified.hpp"
#include "slaterlab/reference/lockstep_reference.hpp"
#include "verify/inputs/config.hpp"
#include "verify/inputs/rng.hpp"
#include "verify/inputs/workload_registry.hpp"
#include "verify/run/lane.hpp"
#include "verify/run/plan.hpp"
#include "verify/run/replay_recorder.hpp"
#include "verify/run/run_report.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab::run_detail {

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
  /// Starts certifying the current matrix (the study's `certify`) on a
  /// thread of its own, beside the first or the last checkpoint (untimed
  /// work: no strategy's call runs while it does); the enclosure is the same
  /// computation either way. The reference's value it is compared with is
  /// taken now for "initial", when collected for "final".
  void start_certification(const char* which);
  /// Waits for the certifications started and writes them (finish()).
  void collect_certifications();
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
  struct PendingCertification {
    const char* which;
    std::future<reference::CertifiedLogDet> enclosure;
    std::optional<std::pair<long double, long double>> reference;  // value and slack, if taken
  };
  std::vector<PendingCertification> certifications_;
};

}  // namespace slaterlab::run_detail
