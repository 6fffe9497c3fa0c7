#pragma once
// The lockstep runner: every strategy of a study sees the same matrices, the
// same move sequence and the same accept/reject decisions, which the mp
// reference takes from its own ratio and one shared stream of uniforms. So
// errors are comparable move for move, and a strategy's "decision flip"
// (its own ratio would have decided otherwise) is measured, not acted on.

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "verify/config.hpp"
#include "verify/hdf5_store.hpp"

namespace slaterlab {

/// Bad input discovered while running (e.g. an exactly singular initial
/// matrix): reported like a configuration error, exit code 2.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Schedule;

struct RunOptions {
  bool progress = false;                           // progress line on stderr
  const std::atomic<bool>* interrupt = nullptr;    // stop between moves when set
  /// What this process runs when a study is spread over processes
  /// (verify/mpi_run.hpp); null: everything.
  const Schedule* schedule = nullptr;
};

struct CheckFailure {
  std::string experiment;
  std::string strategy;
  std::string what;  // names the metric, its value and the limit
};

struct RunReport {
  std::vector<CheckFailure> failures;
  bool interrupted = false;
};

/// Runs every experiment of `study` and streams the results into `writer`
/// (the caller commits). Throws InputError for bad input, IoError from the
/// store.
RunReport run_study(const StudyConfig& study, ResultWriter& writer, const RunOptions& options);

/// The lockstep experiments of run_study only (no VMC runs).
RunReport run_experiments(const StudyConfig& study, ResultWriter& writer, const RunOptions& options);

}  // namespace slaterlab
