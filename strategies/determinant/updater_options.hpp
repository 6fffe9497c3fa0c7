#pragma once
// Options every strategy understands, and the factory that builds a strategy
// from its name (the names used in TOML, HDF5 and on the command line).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"

namespace slaterlab {

struct UpdaterOptions {
  Precision precision = Precision::double_;
  /// Refactorise from the exact (double) matrix every M accepted moves; 0 = never.
  int recompute_every = 0;
  /// |rho| below this (or a non-finite rho) is a breakdown.
  double breakdown = 1e-12;
  /// Delay (rank of the window) for delayed updates.
  int k = 16;
  /// Strategy-specific variant ("incremental"/"naive" for delayed, ...); empty = default.
  std::string variant;
  /// An external kernel's shared library (strategies that load one).
  std::string library;
  /// Options passed through to an external kernel, in the order given.
  std::vector<std::pair<std::string, std::string>> kernel_options;
};

/// What the verification code needs to know of a strategy, declared once
/// where it registers (factory.cpp), so that nothing else tests its name.
/// Defaults describe a plain rank-1 inverse update.
struct StrategyTraits {
  /// Precisions it supports (at least one).
  std::vector<Precision> precisions;
  /// Values of options.variant besides the default "" (tried by the fuzzer).
  std::vector<std::string> variants;
  /// options.k is a delay: proposals are applied in windows of k, flushed
  /// en bloc (the benchmark walks k moves per flush; the fuzzer tries
  /// K = 16, 1 and 3).
  bool windowed = false;
  /// Memory model of the plan: N x N storage-precision matrices kept
  /// besides the exact matrix (1: an inverse or an LU copy; 2: Q and R).
  double matrices = 1;
  /// ... and bytes kept besides them for size n (a delayed window); may be empty.
  std::function<double(double n, const UpdaterOptions&)> extra_bytes;
  /// The plan's time model: a fresh LU (2/3 N^3 flops) for every move.
  bool factorises_every_move = false;
  /// The rounding model of the property oracle: how many times more than
  /// Sherman-Morrison's a strategy's updates may round (1); may be empty.
  std::function<double(const UpdaterOptions&)> rounding_factor;
  /// Which update cycles its apply_cycle() completes through exactly
  /// singular intermediate matrices (the cycle property holds it to the
  /// cycle's exact ratio there): none (per_update, the default: one ratio()
  /// + accept() per update, a breakdown at a singular intermediate), every
  /// cycle (whole), or cycles of at most options.k distinct columns (window).
  enum class Cycles { per_update, whole, window } cycles = Cycles::per_update;
  /// It carries accepted updates across checkpoints (false: it refactorises
  /// from the exact matrix each move), which regress's error models scale with.
  bool carries_updates = true;
  /// The breakdown threshold a study uses when it gives none.
  double default_breakdown = UpdaterOptions{}.breakdown;
  /// The plain rank-1 update other strategies are compared with (the
  /// benchmark's vs_sm, the delayed guard check, the VMC divergence twin).
  /// Exactly one registered strategy is the baseline.
  bool baseline = false;
  /// `delayed_within_guard_of_sm` compares it with the baseline at its precision.
  bool guarded_against_baseline = false;
  /// The benchmark's bound on its move rate: none, a stream of 3 N^2
  /// storage words per move (triad), or 4 N^2 GEMM flops per move (gemm).
  enum class MoveBound { none, triad, gemm } move_bound = MoveBound::none;
  /// The (k, variant) pairs `slaterlab bench` walks, at double and float
  /// (and, for a device strategy, mixed, from N = 1024 on); empty: not benchmarked.
  std::vector<std::pair<int, std::string>> bench_walks;
  /// It runs on a CUDA device (strategy_unavailable() says why not here).
  bool needs_device = false;
  /// It loads a shared library (options.library, options.kernel_options)
  /// through the C kernel ABI (slaterlab/kernel.h).
  bool loads_library = false;
  /// It takes single moves (ratio, accept, reject); false: whole update
  /// cycles only (a version 2 kernel without them), refused for single-move
  /// workloads before any work.
  bool single_moves = true;
  /// The traits a configuration declares itself (an external kernel's own
  /// precisions, carries_updates and default breakdown); may be empty.
  std::function<StrategyTraits(const UpdaterOptions&)> declared;
  /// Why a configuration cannot run at size n, one line naming it and the
  /// sizes it takes ("" when it can: an external kernel's declared sizes);
  /// may be empty (every N).
  std::function<std::string(std::int64_t n, const UpdaterOptions&)> size_refusal;
  /// Text the results file records for a configuration (an external
  /// kernel's library path, SHA-256, name and version); may be empty.
  std::function<std::vector<std::pair<std::string, std::string>>(const UpdaterOptions&)> provenance;
};

/// The traits of a registered strategy (also of a device strategy this build
/// cannot run); a default StrategyTraits for a name not registered (a
/// strategy a results file names that this build does not have).
const StrategyTraits& strategy_traits(const std::string& name);

/// The traits of a configuration: strategy_traits(name) refined by what it
/// declares itself (StrategyTraits::declared). Throws std::invalid_argument
/// where that cannot be read (an external kernel's library does not load).
StrategyTraits strategy_traits(const std::string& name, const UpdaterOptions& options);

/// StrategyTraits::provenance of a configuration (empty for built-ins).
std::vector<std::pair<std::string, std::string>> strategy_provenance(const std::string& name,
                                                                     const UpdaterOptions& options);

/// The name of the strategy that loads external kernels
/// (StrategyTraits::loads_library).
const std::string& library_strategy();

/// The name of the baseline strategy (StrategyTraits::baseline).
const std::string& baseline_strategy();

/// Every registered name, also of strategies that cannot run here.
std::vector<std::string> registered_strategies();

/// Every strategy name the factory knows (and can run here), for help texts
/// and suggestions.
std::vector<std::string> known_strategies();

/// Why the named strategy cannot run here, or nullopt. For a strategy that
/// needs a CUDA device ("delayed-cuda") where this build has no CUDA or no
/// device is present: "<name>: not built with CUDA (...)" or "<name>: no
/// CUDA device available (...)". Such a strategy is then absent from
/// known_strategies() and make_updater throws std::invalid_argument with
/// this message.
std::optional<std::string> strategy_unavailable(const std::string& name);

/// Which precisions a named strategy supports.
std::vector<Precision> supported_precisions(const std::string& name);

/// Builds the named strategy. Throws std::invalid_argument with a message that
/// names the bad value for an unknown strategy, an unsupported precision or
/// an invalid option. It suggests no name: strategies/ knows nothing of the
/// command line's "did you mean"; the study-file reader checks names against
/// known_strategies() first and suggests the closest one there.
std::unique_ptr<DeterminantUpdater> make_updater(const std::string& name,
                                                 const UpdaterOptions& options);

/// Builds a strategy from already validated options (precision supported,
/// recompute_every >= 0, breakdown >= 0, k >= 1).
using UpdaterBuilder = std::function<std::unique_ptr<DeterminantUpdater>(const UpdaterOptions&)>;

/// Adds a strategy to the registry, so that make_updater, known_strategies
/// and the TOML `name` key know it, with default traits (or the given ones,
/// whose precisions are then replaced by `precisions`). For tests that need a strategy the
/// library does not ship (a deliberately perturbed update that a regression
/// check must catch). Call before any other thread builds strategies; a name
/// already registered, an empty name or no precision is std::invalid_argument.
void register_strategy(std::string name, std::vector<Precision> precisions, UpdaterBuilder build,
                       StrategyTraits traits = {});

}  // namespace slaterlab
