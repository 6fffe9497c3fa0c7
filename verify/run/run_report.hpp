#pragma once
// What every part of a study run shares: its options, the failed checks it
// reports and the error for bad input found while running. A header of its
// own so that the lockstep runner (runner.hpp), which also starts the VMC
// part, and the VMC study (vmc_study.hpp) both use it without including each
// other.

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace slaterlab {

/// Bad input discovered while running (e.g. an exactly singular initial
/// matrix): reported like a configuration error, exit code 2.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct RunOptions {
  bool progress = false;                           // progress line on stderr
  const std::atomic<bool>* interrupt = nullptr;    // stop between moves when set
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

}  // namespace slaterlab
