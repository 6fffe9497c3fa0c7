// LockstepExperiment's start and its moves and cycles (lockstep_experiment.hpp);
// its checkpoints are in lockstep_checkpoint.cpp.
#include "verify/run/lockstep_experiment.hpp"

#include <fmt/format.h>

namespace slaterlab::run_detail {
namespace {

StrategyInfo describe(const StrategyConfig& s) {
  const UpdaterOptions& o = s.options;
  StrategyInfo info{s.label, s.name, std::string(to_string(o.precision)), storage_epsilon(o.precision),
                    o.recompute_every, o.breakdown, o.k, o.variant, strategy_provenance(s.name, o),
                    {}};
  for (const CounterEvent& event : strategy_traits(s.name).events)
    info.events.push_back({event.name, event.description});
  return info;
}

ExperimentInfo describe(const ExperimentConfig& e, const Workload& workload) {
  return {e.name, e.workload.kind, std::int64_t(e.workload.n), e.moves, e.checkpoint_every,
          e.workload.seed, e.acceptance, e.acceptance_rate, workload.parameters()};
}

}  // namespace

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
  // The initial matrix is certified beside the first checkpoint, and waited
  // for before the walk: the strategies' timed calls never share the machine
  // with it.
  start_certification("initial");
  settle_and_checkpoint();
  for (const PendingCertification& c : certifications_) c.enclosure.wait();
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
    if (move_ >= experiment_.moves) start_certification("final");
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

}  // namespace slaterlab::run_detail
