#pragma once
// `slaterlab fuzz`: the strategy properties (verify/run/strategy_properties.hpp)
// over larger sizes and longer sequences than the unit suite, with shrinking,
// and the kept corpus of counterexamples (data/fuzz-corpus/).
//
// run_fuzz checks the selected (configuration, property) pairs on random
// cases in batches (batch b has seed seed + b), shrinks the first failure of
// each pair within shrink_seconds, reports it with the command that
// reproduces it and saves it to the corpus as a replay file (status "new").
// Deterministic given its arguments and seed, except for how many batches
// --seconds allows and where the shrink budget stops. External kernels run
// each check in a child process, so a crash or a hang fails the property.
// Bad arguments, a corpus directory that is missing or not writable, or a
// kernel library that does not load: std::invalid_argument before any work.
// The batches, shrinking and the corpus entry are described in fuzz.cpp and
// docs/fuzzing.md.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "verify/run/strategy_properties.hpp"

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

/// What one configuration saw in a run.
struct FuzzTally {
  PropertyConfig config;
  int cases = 0;  // cases its properties were checked on
  CheckStats stats;
  int failures = 0;
};

struct FuzzFailure {
  PropertyConfig config;  // options.recompute_every = the counterexample's cadence
  PropertyFailure failure;
  GeneratedCase counterexample;
  std::uint64_t seed = 0;      // the batch seed that reproduces it
  int cases = 0;               // the batch's case count
  int shrink_steps = 0;        // failing shrinks RapidCheck accepted
  bool shrink_cut = false;     // shrinking stopped at shrink_seconds (less shrunk than it could be)
  std::string reproduce;       // the command line
  std::filesystem::path file;  // the corpus entry written
};

struct FuzzReport {
  std::uint64_t seed = 0;
  int batches = 0;
  double seconds = 0;
  std::vector<FuzzTally> tallies;
  std::vector<FuzzFailure> failures;
};

/// Runs the fuzzer (contract above). `progress`, when given, receives a
/// one-line progress display (carriage returns; for a terminal).
FuzzReport run_fuzz(const FuzzArgs& args, std::ostream* progress = nullptr);

/// run_fuzz, then each failure (message, counterexample, reproduction, file)
/// and the summary table on `out`. Returns 0 when nothing failed, 1
/// otherwise; bad input throws std::invalid_argument (exit code 2).
int fuzz_command(const FuzzArgs& args, std::ostream& out, std::ostream* progress);

// ---- the corpus --------------------------------------------------------------------------

struct CorpusEntry {
  Case kase;
  std::string strategy;        // factory name
  UpdaterOptions options;      // precision, recompute_every, breakdown, k, variant
  std::string label;           // the configuration's label (informational)
  std::string property;        // to_string(Property)
  std::string message;         // the failure when it was found
  std::string status = "new";  // "known-finding" | "fixed" | "new" | ...
  std::uint64_t seed = 0;
  std::string workload;   // CaseMode it was generated with (informational)
  std::string reproduce;  // the command that found it (informational)
};

/// Writes the entry as a replay file with its attributes (via a temporary
/// file in the same directory, renamed over `path`). Throws ReplayError on
/// I/O failure.
void write_corpus_entry(const std::filesystem::path& path, const CorpusEntry& entry);

/// Reads an entry; throws ReplayError for a bad replay file and
/// std::invalid_argument naming the file for a missing or malformed
/// attribute (strategy, precision, property and status are required) or a
/// file without moves/accept.
CorpusEntry read_corpus_entry(const std::filesystem::path& path);

/// The *.h5 files of a directory, sorted by name.
std::vector<std::filesystem::path> corpus_files(const std::filesystem::path& dir);

/// Seconds a child process may take over one case of an external kernel of
/// size n with `moves` moves: twice one call's time-out
/// (kernel_call_timeout) plus 1 ms per move, before it is killed.
double kernel_case_timeout(Eigen::Index n, std::size_t moves);

/// "<label>-<property>-<8 hex digits of the case's checksum>.h5".
std::string corpus_file_name(const std::string& label, const std::string& property, const Case& c);

}  // namespace slaterlab
