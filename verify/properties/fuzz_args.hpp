#pragma once
// What a fuzz run is asked to do: the selection (strategies or kernels,
// precisions, properties, workloads), its size (cases or seconds), the seed,
// the largest N and the corpus directory, and the check of all of it before
// any work.
//
// validate_fuzz_args() throws std::invalid_argument, one line, for --cases
// with --seconds, a count or time out of range, --max-n < 1 or too large for
// the memory available (about kFuzzBytesPerEntry max_n^2 bytes), and a corpus
// directory that is missing, not a directory or not writable. The names
// (strategies, properties, workloads) are checked by the selection
// (fuzz_selection.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace slaterlab {

inline constexpr int kFuzzBatchCases = 5;     // cases per batch with --seconds
inline constexpr int kFuzzDefaultCases = 20;  // without --cases or --seconds

struct FuzzArgs {
  std::vector<std::string> strategies;  // names or labels; empty = every configuration
                                        // (or, with kernels, the kernels alone)
  std::vector<std::string> kernels;     // external kernel libraries (slaterlab/kernel.h)
  std::vector<std::string> precisions;  // empty = all
  std::vector<std::string> properties;  // empty = all_properties()
  std::vector<std::string> workloads;   // empty = randsvd, adversarial, cycles
  std::optional<int> cases;
  std::optional<double> seconds;
  std::optional<std::uint64_t> seed;  // empty = drawn from std::random_device
  int max_n = 64;
  double shrink_seconds = 20;  // per failure
  std::string corpus = "data/fuzz-corpus";
  bool quiet = false;
};

/// Peak bytes of a run per max_n^2, measured: the peak resident size of
/// `fuzz --strategy sm --cases 3 --seed 7` was 1.1e4 max_n^2 bytes at max_n
/// = 150 and 8.2e3 at 300 (the oracle's trace keeps per move the long-double
/// vectors of its error model, for up to 4N moves); twice the larger leaves
/// room for the strategies with more state.
inline constexpr double kFuzzBytesPerEntry = 16384;

void validate_fuzz_args(const FuzzArgs& args);

}  // namespace slaterlab
