#pragma once
// A VMC run: several independent walkers, each on its own random stream,
// equilibrated (optionally tuning the step), then measured once per sweep
// (the steps per walker: vmc.cpp). Optionally each walker is shadowed by a
// reference walker in lockstep (same stream, its own orbitals and strategy)
// to find where their accept/reject paths part, as Uejima & Maezono's
// Tables 9-10 compare them: the first differing decision is recorded with
// the largest ratio and energy differences and the flip probabilities.
//
// The energy series is returned whole (one double per sweep) so the caller
// can store it (HDF5) and run blocking statistics on it.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "slaterlab/strategies/orbitals/orbital_set.hpp"
#include "slaterlab/strategies/sampling/hamiltonian.hpp"
#include "slaterlab/strategies/sampling/random_source.hpp"
#include "slaterlab/strategies/sampling/scheme.hpp"
#include "slaterlab/strategies/sampling/step_tuner.hpp"

namespace slaterlab {

/// A determinant strategy by factory name and options (make_updater).
struct StrategySpec {
  std::string name = "sm";
  UpdaterOptions options;
};

/// Builds the random stream with the given id (e.g. wrapping
/// Rng::stream(seed, id) with make_random_source).
using RandomFactory = std::function<std::unique_ptr<RandomSource>(std::uint64_t stream_id)>;

struct VmcConfig {
  Scheme scheme = Scheme::pbp;
  double omega = 1.0;                      ///< trap frequency w (when hamiltonian is null)
  /// The potential and cell (hamiltonian.hpp); null: the trap of omega.
  std::shared_ptr<const Hamiltonian> hamiltonian;
  /// Determinants sampled, one per spin, each of its orbital set's N
  /// electrons: 1 (spin-polarised) or 2 (up and down). Without a Jastrow
  /// factor |D_up D_down|^2 factorises, so each spin is an independent
  /// walker on its own stream; the potential couples them.
  int spins = 1;
  int walkers = 1;
  std::uint64_t first_stream = 0;          ///< walker w reads stream first_stream + w
  double initial_width = 1.0;              ///< initial positions: width * N(0, 1) (around the nuclei, if any)
  std::int64_t equilibration_sweeps = 100; ///< discarded
  std::int64_t sweeps = 1000;              ///< measured, one E_L each
  double step = 1.0;                       ///< initial (tune_step) or fixed step
  bool tune_step = false;
  StepTunerOptions tuner;
  bool flush_each_sweep = true;            ///< see walker.hpp
  /// Throws std::invalid_argument naming the bad field, or an initial step
  /// outside the tuner's bounds when tune_step.
  void validate() const;
};

/// The orbital set of each spin's determinant, spin 0 first: config.spins
/// sets, each of as many orbitals as that spin has electrons. The spins'
/// sets may differ (an open-shell molecule: other sizes, other orbitals);
/// one set for every spin is the overload without SpinOrbitals.
using SpinOrbitals = std::vector<const OrbitalSet*>;

/// The lockstep reference of a run: its orbital sets, one per spin or one
/// for every spin, each of the subject's size. They must outlive the run.
struct ReferenceSpec {
  SpinOrbitals orbitals;
  StrategySpec strategy{"sm", {}};
};

/// Where a walker's path left its reference's.
struct Divergence {
  bool compared = false;          ///< a reference was run
  std::int64_t sweep = -1;        ///< first sweep (0 = first equilibration sweep) with a differing decision; -1 never
  std::int64_t electron = -1;     ///< the first electron whose decision differed in that sweep
  std::int64_t move = -1;         ///< sweep * N + electron; -1 never
  std::int64_t lockstep_sweeps = 0;       ///< sweeps compared (up to and including the divergent one)
  double max_ratio_rel_difference = 0.0;  ///< max |rho - rho_ref| / |rho_ref| over decisions made in lockstep
  /// Per compared move, |min(1, rho^2) - min(1, rho_ref^2)| is the probability
  /// that a uniform u separates the two decisions: the chance of a flip.
  double max_flip_probability = 0.0;      ///< its maximum
  double expected_flips = 0.0;            ///< its sum: the expected number of flips so far
  double max_energy_difference = 0.0;     ///< max |E_L - E_L,ref| over measured sweeps in lockstep
  /// Non-empty when the reference's strategy gave up (SingularMatrixError);
  /// the comparison ended there, the subject ran on.
  std::string reference_failure;
};

struct WalkerResult {
  std::uint64_t stream = 0;
  std::vector<double> energy;        ///< E_L after each measured sweep
  std::vector<double> kinetic;       ///< its kinetic part, -1/2 sum_s trace(A_s^{-1} L_s)
  std::int64_t proposed = 0;         ///< moves proposed in the measured sweeps
  std::int64_t accepted = 0;         ///< moves accepted in the measured sweeps
  double step = 0.0;                 ///< the (frozen) step of the measured sweeps
  std::vector<double> step_history;  ///< step after each tuning block (empty without tuning)
  Divergence divergence;
  UpdaterCounters counters;          ///< the strategy's counters at the end
  std::int64_t decision_breakdowns = 0;  ///< whole run, see WalkerCounts
  std::int64_t apply_breakdowns = 0;
  /// Non-empty when the strategy gave up (SingularMatrixError: a
  /// refactorisation found the matrix singular to its precision). The run
  /// stops there; energy holds the sweeps measured before, and failed_sweep
  /// is the sweep (counted from the first equilibration sweep) that failed.
  std::string failure;
  std::int64_t failed_sweep = -1;
  double acceptance() const {
    return proposed > 0 ? static_cast<double>(accepted) / static_cast<double>(proposed) : 0.0;
  }
};

struct VmcResult {
  VmcConfig config;
  std::string orbitals;  ///< orbital set label
  std::string strategy;  ///< strategy label
  std::vector<WalkerResult> walkers;
};

/// The Hamiltonian a config samples: config.hamiltonian, or the trap of
/// config.omega.
std::shared_ptr<const Hamiltonian> hamiltonian_of(const VmcConfig& config);

/// Stream id of spin `spin` of a walker reading stream `stream`: the stream
/// itself for spin 0, so a polarised run reads what it always read.
std::uint64_t spin_stream(std::uint64_t stream, int spin);

/// Runs walker `index` (0 <= index < config.walkers) alone, so a caller can
/// store walkers one by one or run them concurrently (calls for different
/// indices share only the orbital sets, whose const methods must then be
/// thread safe, as the analytic ones are, and the random factory). Throws
/// std::invalid_argument for a bad config, index or strategy, orbital sets
/// that are not one per spin (or a reference's of other sizes), and
/// SingularMatrixError when the initial configuration is singular; a
/// strategy failing later is reported in WalkerResult::failure.
WalkerResult run_walker(const VmcConfig& config, int index, const SpinOrbitals& orbitals,
                        const StrategySpec& strategy, const RandomFactory& random,
                        const ReferenceSpec* reference = nullptr);
WalkerResult run_walker(const VmcConfig& config, int index, const OrbitalSet& orbitals,
                        const StrategySpec& strategy, const RandomFactory& random,
                        const ReferenceSpec* reference = nullptr);

/// Runs every walker in turn (VmcResult::orbitals is spin 0's label).
VmcResult run_vmc(const VmcConfig& config, const SpinOrbitals& orbitals,
                  const StrategySpec& strategy, const RandomFactory& random,
                  const ReferenceSpec* reference = nullptr);
VmcResult run_vmc(const VmcConfig& config, const OrbitalSet& orbitals, const StrategySpec& strategy,
                  const RandomFactory& random, const ReferenceSpec* reference = nullptr);

}  // namespace slaterlab
