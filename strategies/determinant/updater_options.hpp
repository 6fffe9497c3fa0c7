#pragma once
// Options every strategy understands, and the factory that builds a strategy
// from its name (the names used in TOML, HDF5 and on the command line).

#include <functional>
#include <memory>
#include <optional>
#include <string>
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
};

/// Every strategy name the factory knows, for help texts and suggestions.
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
/// names the bad value (and the closest known name) for an unknown strategy,
/// an unsupported precision or an invalid option.
std::unique_ptr<DeterminantUpdater> make_updater(const std::string& name,
                                                 const UpdaterOptions& options);

/// Builds a strategy from already validated options (precision supported,
/// recompute_every >= 0, breakdown >= 0, k >= 1).
using UpdaterBuilder = std::function<std::unique_ptr<DeterminantUpdater>(const UpdaterOptions&)>;

/// Adds a strategy to the registry, so that make_updater, known_strategies
/// and the TOML `name` key know it. For tests that need a strategy the
/// library does not ship (a deliberately perturbed update that a regression
/// check must catch). Call before any other thread builds strategies; a name
/// already registered, an empty name or no precision is std::invalid_argument.
void register_strategy(std::string name, std::vector<Precision> precisions, UpdaterBuilder build);

}  // namespace slaterlab
