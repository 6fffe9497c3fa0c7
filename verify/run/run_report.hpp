#pragma once
// What every part of a study run shares: its options, the failed checks it
// reports and the error for bad input found while running. A header of its
// own so that the lockstep runner (runner.hpp), which also starts the VMC
// part, and the VMC study (vmc_study.hpp) both use it without including each
// other.

#include <atomic>
#include <filesystem>
#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/strategies/sampling/vmc.hpp"

namespace slaterlab {

/// Bad input discovered while running (e.g. an exactly singular initial
/// matrix): reported like a configuration error, exit code 2.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// What this process runs of a study spread over processes
/// (verify/run/mpi_run.hpp implements it with MPI).
class Schedule {
 public:
  using WalkerRunner = std::function<VmcResult(const VmcConfig&)>;
  virtual ~Schedule() = default;
  /// Indices into study.strategies this process runs for experiment e, in
  /// study order (empty: none).
  virtual std::vector<std::size_t> strategies_of(std::size_t experiment) const = 0;
  /// Runs this process's share of config's walkers with `run`; returns the
  /// whole run's result on the process that writes it, nothing elsewhere.
  virtual std::optional<VmcResult> run_walkers(const VmcConfig& config,
                                               const WalkerRunner& run) const = 0;
};

struct RunOptions {
  bool progress = false;                           // progress line on stderr
  const std::atomic<bool>* interrupt = nullptr;    // stop between moves when set
  /// What this process runs when a study is spread over processes
  /// (verify/run/mpi_run.hpp); null: everything.
  const Schedule* schedule = nullptr;
  /// Where each experiment's walk is written as a replay file,
  /// <replay_dir>/<experiment>.replay.h5 (replay_recorder.hpp); empty: none.
  std::filesystem::path replay_dir;
};

struct CheckFailure {
  std::string experiment;
  std::string strategy;
  std::string what;  // names the metric, its value and the limit
};

struct RunReport {
  std::vector<CheckFailure> failures;
  bool interrupted = false;
  std::string partial_file;  // where an interrupted run kept its work ("" none)
};

}  // namespace slaterlab
