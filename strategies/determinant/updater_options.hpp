#pragma once
// Options every strategy understands, and the factory that builds a strategy
// from its name (the names used in TOML, HDF5 and on the command line). What
// the verification code knows of each strategy is its StrategyTraits
// (strategy_traits.hpp), declared where it registers: factory.cpp for the
// built-ins, register_strategy() for a strategy defined elsewhere.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"
#include "slaterlab/strategies/determinant/strategy_traits.hpp"

namespace slaterlab {

struct UpdaterOptions {
  Precision precision = Precision::double_;
  /// Refactorise from the exact (double) matrix every M accepted moves; 0 = never.
  int recompute_every = 0;
  /// |rho| below this (or a non-finite rho) is a breakdown.
  double breakdown = kDefaultBreakdown;
  /// Delay (rank of the window) for delayed updates.
  int k = 16;
  /// Strategy-specific variant ("incremental"/"naive" for delayed, ...); empty = default.
  std::string variant;
  /// An external kernel's shared library (strategies that load one).
  std::string library;
  /// Options passed through to an external kernel, in the order given.
  std::vector<std::pair<std::string, std::string>> kernel_options;
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

/// Adds a strategy defined outside this library (one's own, as
/// tests/extending/toy_strategy.cpp does; a deliberately perturbed update a
/// regression check must catch) to the registry, so that make_updater,
/// known_strategies, the TOML `name` key, fuzz and bench know it, with
/// default traits (or the given ones, whose precisions are then replaced by
/// `precisions`). Call before any other thread builds strategies; a name
/// already registered, an empty name, no precision or an event name that
/// cannot name a column (StrategyTraits::events) is std::invalid_argument.
void register_strategy(std::string name, std::vector<Precision> precisions, UpdaterBuilder build,
                       StrategyTraits traits = {});

}  // namespace slaterlab
