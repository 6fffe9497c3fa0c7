#include "slaterlab/strategies/sampling/vmc.hpp"

// Per walker w (stream first_stream + w of the caller's random factory;
// spin s > 0 of it on spin_stream(stream, s)):
//   1. place_random(initial_width) (3N normals), in a periodic cell
//      place_uniform(cell length) (3N uniforms), around a molecule's nuclei
//      place_near_nuclei(nuclei, initial_width) (N x (1 uniform, 3 normals));
//   2. equilibration_sweeps sweeps, discarded; with tune_step the step is
//      updated after every block of tuner.block sweeps (step_tuner.hpp) and
//      frozen at the end;
//   3. sweeps measured sweeps at the frozen step, E_L after each.
//
// Lockstep reference (ReferenceSpec): a second walker with its own orbital
// set and strategy and the SAME stream id reads identical variates, so while
// their decisions agree their positions are bit-identical; the first
// differing decision is the divergence point, recorded with the largest ratio
// and energy differences and the flip probabilities while in lockstep
// (details in vmc.cpp).
//

// Lockstep reference (ReferenceSpec): a second walker with its own orbital
// set and strategy (e.g. analytic orbitals, sm-double) and the SAME stream
// id, driven with the subject's step. Both read identical variates (the
// order is decision independent, walker.hpp), so while their decisions agree
// their positions are bit-identical. After every sweep (equilibration
// included) the decision vectors are compared; the first difference is the
// divergence point, after which the reference is dropped (its path is no
// longer comparable). While in lockstep the run also records the largest
// relative ratio difference, the flip probabilities of the decisions (a
// relative ratio error is unbounded near a node, where it cannot flip a
// decision; the flip probability is what moves the divergence point) and, in
// measured sweeps, the largest |E_L - E_L,ref|.

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "slaterlab/strategies/sampling/walker.hpp"

namespace slaterlab {
namespace {

// Spin s > 0 reads stream id stream ^ (s * kSpinStreams): "SPIN" in the high
// bytes, far from the small ids walkers use.
constexpr std::uint64_t kSpinStreams = 0x5350494E00000000ULL;

/// The walkers of one configuration, one per spin, each on its spin's orbitals.
using SpinWalkers = std::vector<std::unique_ptr<Walker>>;

SpinWalkers make_walkers(const VmcConfig& config, const Hamiltonian& hamiltonian,
                         const SpinOrbitals& orbitals, const StrategySpec& strategy,
                         const RandomFactory& random, std::uint64_t stream) {
  SpinWalkers walkers;
  for (int s = 0; s < config.spins; ++s) {
    auto w = std::make_unique<Walker>(*orbitals[std::size_t(s)],
                                      make_updater(strategy.name, strategy.options),
                                      random(spin_stream(stream, s)), config.omega);
    w->set_flush_each_sweep(config.flush_each_sweep);
    w->set_cell(hamiltonian.cell_length());
    walkers.push_back(std::move(w));
  }
  return walkers;
}

void place(SpinWalkers& walkers, const VmcConfig& config, const Hamiltonian& hamiltonian) {
  for (auto& w : walkers) {
    if (hamiltonian.cell_length() > 0.0) {
      w->place_uniform(hamiltonian.cell_length());
    } else if (!hamiltonian.nuclei().empty()) {
      w->place_near_nuclei(hamiltonian.nuclei(), config.initial_width);
    } else {
      w->place_random(config.initial_width);
    }
  }
}

/// Kinetic energy of every spin's determinant, and the local energy K + V.
struct LocalEnergy {
  double kinetic = 0.0;
  double total = 0.0;
};

LocalEnergy local_energy(const SpinWalkers& walkers, const Hamiltonian& hamiltonian) {
  LocalEnergy e;
  if (walkers.size() == 1) {
    e.kinetic = walkers[0]->kinetic_energy();
    e.total = e.kinetic + hamiltonian.potential(walkers[0]->positions());
    return e;
  }
  Eigen::Index electrons = 0;
  for (const auto& w : walkers) electrons += w->size();
  Eigen::Matrix3Xd all(3, electrons);
  Eigen::Index first = 0;
  for (const auto& w : walkers) {
    e.kinetic += w->kinetic_energy();
    all.middleCols(first, w->size()) = w->positions();
    first += w->size();
  }
  e.total = e.kinetic + hamiltonian.potential(all);
  return e;
}

/// Compares one sweep of the subject with its reference (one spin, whose
/// electrons are numbered from first_electron in the configuration). Returns false
/// (and fills the divergence point) at the first electron whose decision
/// differs; ratios are compared up to and including that electron, the ones
/// after it were taken in different configurations (pbp) or no longer matter.
bool same_decisions(const Walker& subject, const Walker& reference, std::int64_t sweep,
                    std::int64_t first_electron, std::int64_t electrons, Divergence& d) {
  const auto& dec = subject.decisions();
  const auto& dec_ref = reference.decisions();
  const auto& rho = subject.ratios();
  const auto& rho_ref = reference.ratios();
  for (std::size_t j = 0; j < dec.size(); ++j) {
    if (rho_ref[j] != 0.0)
      d.max_ratio_rel_difference =
          std::max(d.max_ratio_rel_difference, std::abs(rho[j] - rho_ref[j]) / std::abs(rho_ref[j]));
    const double flip = std::abs(std::min(1.0, rho[j] * rho[j]) - std::min(1.0, rho_ref[j] * rho_ref[j]));
    d.max_flip_probability = std::max(d.max_flip_probability, flip);
    d.expected_flips += flip;
    if (dec[j] != dec_ref[j]) {
      d.sweep = sweep;
      d.electron = first_electron + static_cast<std::int64_t>(j);
      d.move = sweep * electrons + d.electron;
      return false;
    }
  }
  return true;
}

WalkerCounts total_counts(const SpinWalkers& walkers) {
  WalkerCounts c;
  for (const auto& w : walkers) {
    const WalkerCounts& s = w->counts();
    c.proposed += s.proposed;
    c.accepted += s.accepted;
    c.decision_breakdowns += s.decision_breakdowns;
    c.apply_breakdowns += s.apply_breakdowns;
  }
  return c;
}

/// The same set for every spin of the config (validated later).
SpinOrbitals every_spin(const VmcConfig& config, const OrbitalSet& orbitals) {
  return SpinOrbitals(std::size_t(std::max(config.spins, 0)), &orbitals);
}

SpinOrbitals reference_orbitals(const VmcConfig& config, const ReferenceSpec& reference) {
  if (reference.orbitals.size() == 1 && reference.orbitals[0])
    return every_spin(config, *reference.orbitals[0]);
  return reference.orbitals;
}

void require_one_per_spin(const VmcConfig& config, const SpinOrbitals& orbitals,
                          const std::string& whose) {
  const bool complete =
      orbitals.size() == std::size_t(config.spins) &&
      std::none_of(orbitals.begin(), orbitals.end(), [](const OrbitalSet* o) { return !o; });
  if (!complete)
    throw std::invalid_argument("vmc: " + whose + "orbital sets must be one per spin (" +
                                std::to_string(config.spins) + "), got " +
                                std::to_string(orbitals.size()));
}

}  // namespace

std::shared_ptr<const Hamiltonian> hamiltonian_of(const VmcConfig& config) {
  return config.hamiltonian ? config.hamiltonian
                            : std::make_shared<const HarmonicTrapPotential>(config.omega);
}

std::uint64_t spin_stream(std::uint64_t stream, int spin) {
  return stream ^ (std::uint64_t(spin) * kSpinStreams);
}

void VmcConfig::validate() const {
  if (spins != 1 && spins != 2)
    throw std::invalid_argument("vmc: spins must be 1 or 2, got " + std::to_string(spins));
  if (!(std::isfinite(omega) && omega > 0.0))
    throw std::invalid_argument("vmc: omega must be finite and > 0, got " + std::to_string(omega));
  if (walkers < 1) throw std::invalid_argument("vmc: walkers must be >= 1, got " + std::to_string(walkers));
  if (!(std::isfinite(initial_width) && initial_width > 0.0))
    throw std::invalid_argument("vmc: initial_width must be finite and > 0");
  if (equilibration_sweeps < 0) throw std::invalid_argument("vmc: equilibration_sweeps must be >= 0");
  if (sweeps < 0) throw std::invalid_argument("vmc: sweeps must be >= 0");
  if (!(std::isfinite(step) && step >= 0.0))
    throw std::invalid_argument("vmc: step must be finite and >= 0, got " + std::to_string(step));
  // The tuner's options and the initial step within its bounds, as the run
  // will construct it.
  if (tune_step) StepTuner(step, tuner);
}

namespace {

/// One walker (a configuration of every spin) and its optional lockstep
/// shadow, sweep by sweep.
class WalkerRun {
 public:
  WalkerRun(const VmcConfig& config, std::uint64_t stream, const SpinOrbitals& orbitals,
            const StrategySpec& strategy, const RandomFactory& random, const ReferenceSpec* reference,
            WalkerResult& result)
      : config_(config), hamiltonian_(hamiltonian_of(config)), result_(result) {
    walkers_ = make_walkers(config, *hamiltonian_, orbitals, strategy, random, stream);
    if (reference) {
      shadows_ = make_walkers(config, *hamiltonian_, reference_orbitals(config, *reference),
                              reference->strategy, random, stream);
      result_.divergence.compared = true;
    }
    place(walkers_, config, *hamiltonian_);
    place(shadows_, config, *hamiltonian_);
  }

  /// Equilibration sweeps, tuning the step if asked; returns the frozen step.
  double equilibrate() {
    double step = config_.step;
    std::optional<StepTuner> tuner;
    if (config_.tune_step) tuner.emplace(config_.step, config_.tuner);
    WalkerCounts block_start = counts();
    for (std::int64_t s = 0; s < config_.equilibration_sweeps; ++s) {
      sweep(s, step);
      if (tuner && (s + 1) % config_.tuner.block == 0) {
        const WalkerCounts now = counts();
        step = tuner->update(now.accepted - block_start.accepted, now.proposed - block_start.proposed);
        block_start = now;
      }
    }
    if (tuner) {
      tuner->freeze();  // measuring with a moving step would break detailed balance
      result_.step_history = tuner->history();
    }
    return step;
  }

  /// Measured sweeps at a fixed step, E_L after each.
  void measure(double step) {
    result_.energy.reserve(static_cast<std::size_t>(config_.sweeps));
    result_.kinetic.reserve(static_cast<std::size_t>(config_.sweeps));
    for (std::int64_t s = 0; s < config_.sweeps; ++s) {
      sweep(config_.equilibration_sweeps + s, step);
      const LocalEnergy e = local_energy(walkers_, *hamiltonian_);
      result_.energy.push_back(e.total);
      result_.kinetic.push_back(e.kinetic);
      if (!shadows_.empty())
        result_.divergence.max_energy_difference =
            std::max(result_.divergence.max_energy_difference,
                     std::abs(e.total - local_energy(shadows_, *hamiltonian_).total));
    }
  }

  WalkerCounts counts() const { return total_counts(walkers_); }
  UpdaterCounters counters() const {
    UpdaterCounters c;
    for (const auto& w : walkers_) c += w->updater().counters();
    return c;
  }
  std::int64_t current_sweep() const { return current_sweep_; }

 private:
  // One sweep of every spin of both; drops the shadow at the first differing
  // decision.
  void sweep(std::int64_t index, double step) {
    current_sweep_ = index;
    for (auto& w : walkers_) w->sweep(config_.scheme, step);
    if (shadows_.empty()) return;
    try {
      for (auto& w : shadows_) w->sweep(config_.scheme, step);
    } catch (const SingularMatrixError& e) {
      result_.divergence.reference_failure = e.what();
      shadows_.clear();
      return;
    }
    ++result_.divergence.lockstep_sweeps;
    std::int64_t electrons = 0;
    for (const auto& w : walkers_) electrons += w->size();
    std::int64_t first = 0;
    for (std::size_t s = 0; s < walkers_.size(); ++s) {
      if (!same_decisions(*walkers_[s], *shadows_[s], index, first, electrons,
                          result_.divergence)) {
        shadows_.clear();
        return;
      }
      first += walkers_[s]->size();
    }
  }

  const VmcConfig& config_;
  std::shared_ptr<const Hamiltonian> hamiltonian_;
  WalkerResult& result_;
  SpinWalkers walkers_;
  SpinWalkers shadows_;
  std::int64_t current_sweep_ = -1;
};

}  // namespace

WalkerResult run_walker(const VmcConfig& config, int index, const SpinOrbitals& orbitals,
                        const StrategySpec& strategy, const RandomFactory& random,
                        const ReferenceSpec* reference) {
  config.validate();
  if (index < 0 || index >= config.walkers)
    throw std::invalid_argument("vmc: walker index " + std::to_string(index) + " out of range");
  if (!random) throw std::invalid_argument("vmc: no random factory");
  require_one_per_spin(config, orbitals, "");
  if (reference) {
    const SpinOrbitals twin = reference_orbitals(config, *reference);
    require_one_per_spin(config, twin, "the reference's ");
    for (std::size_t s = 0; s < twin.size(); ++s)
      if (twin[s]->size() != orbitals[s]->size())
        throw std::invalid_argument("vmc: the reference needs orbital sets of the same sizes");
  }

  WalkerResult result;
  result.stream = config.first_stream + static_cast<std::uint64_t>(index);
  WalkerRun run(config, result.stream, orbitals, strategy, random, reference, result);
  WalkerCounts measure_start;
  bool measuring = false;
  result.step = config.step;
  try {
    result.step = run.equilibrate();
    measure_start = run.counts();
    measuring = true;
    run.measure(result.step);
  } catch (const SingularMatrixError& e) {
    // A strategy giving up is a result of an accuracy study, not a crash.
    result.failure = e.what();
    result.failed_sweep = run.current_sweep();
  }
  const WalkerCounts end = run.counts();
  if (measuring) {
    result.proposed = end.proposed - measure_start.proposed;
    result.accepted = end.accepted - measure_start.accepted;
  }
  result.decision_breakdowns = end.decision_breakdowns;
  result.apply_breakdowns = end.apply_breakdowns;
  result.counters = run.counters();
  return result;
}

WalkerResult run_walker(const VmcConfig& config, int index, const OrbitalSet& orbitals,
                        const StrategySpec& strategy, const RandomFactory& random,
                        const ReferenceSpec* reference) {
  return run_walker(config, index, every_spin(config, orbitals), strategy, random, reference);
}

VmcResult run_vmc(const VmcConfig& config, const OrbitalSet& orbitals, const StrategySpec& strategy,
                  const RandomFactory& random, const ReferenceSpec* reference) {
  return run_vmc(config, every_spin(config, orbitals), strategy, random, reference);
}

VmcResult run_vmc(const VmcConfig& config, const SpinOrbitals& orbitals,
                  const StrategySpec& strategy, const RandomFactory& random,
                  const ReferenceSpec* reference) {
  config.validate();
  require_one_per_spin(config, orbitals, "");
  VmcResult result;
  result.config = config;
  result.orbitals = orbitals.front()->label();
  result.strategy = make_updater(strategy.name, strategy.options)->label();
  for (int w = 0; w < config.walkers; ++w)
    result.walkers.push_back(run_walker(config, w, orbitals, strategy, random, reference));
  return result;
}

}  // namespace slaterlab
