#pragma once
// `slaterlab fuzz`: the strategy properties (verify/run/strategy_properties.hpp)
// over larger sizes and longer sequences than the unit suite, with shrinking,
// and the kept corpus of counterexamples (data/fuzz-corpus/).
//
// Contract of run_fuzz:
// - Configurations: property_configs() filtered by `strategies` (a factory
//   name selects all its configurations, a label like "delayed-3-double"
//   exactly one) and `precisions`; properties and workloads (CaseMode) as
//   filtered (default: randsvd, adversarial and cycles; CycleRatioMatchesOracle
//   is checked on cycles alone, the other properties on the other two, and a
//   selection with no such pair is bad input). Bad values, --cases with
//   --seconds, N < 1, a corpus directory
//   that is missing or not writable: std::invalid_argument before any work.
// - Work is done in batches b = 0, 1, ...: batch b has seed (seed + b); in it,
//   for each storage class (double; float and mixed) and workload, one
//   RapidCheck run of `cases` cases (fuzz_limits: N <= max_n, sequences up
//   to 4N) checks every selected (configuration, property) on each case,
//   sharing one oracle trace per case. --cases runs one batch; --seconds runs
//   batches of kFuzzBatchCases until the time is up (a case started after the
//   deadline is not checked).
// - The first failing (configuration, property) of a RapidCheck run is shrunk
//   for that pair alone; the last failing case RapidCheck evaluates is the
//   shrunk counterexample. Shrinking stops after shrink_seconds (large cases
//   take one oracle trace per candidate); the report says when it did. The
//   counterexample is reported with the exact command that reproduces it
//   (`--strategy LABEL --property P --workload W --seed S --cases C --max-n
//   M` finds the same failing case and, within the shrink budget, shrinks it
//   to the same counterexample) and written to the corpus directory as a
//   replay file (corpus entry, below), status "new". The run is then repeated
//   without that pair (the cases before the failing one are not checked
//   again), and a reported pair is not checked in later batches either.
// - External kernels (--kernel PATH): one configuration per precision the
//   library declares. Every check of a kernel runs in a child process
//   (child_process.hpp): a kernel that kills its process (the signal is
//   named) or does not finish within kernel_case_timeout() fails the
//   property like any other violation, is shrunk (each candidate in a child
//   too) and saved with the library's path. A library that does not load
//   is std::invalid_argument before any work.
// - Deterministic given its arguments and the seed (generation, checks and
//   shrinking), except that --seconds decides how many batches run and the
//   shrink budget may stop shrinking early (the report says so).
//
// Corpus entry: a replay file (docs/replay.md) with moves/accept, or for a
// case of update cycles moves/cycle (replay_schema_version 2), whose string
// root attributes name the strategy, its
// options, the property, the failure message, the seed and a status
// ("known-finding": a known, unfixed violation the suite expects to still
// fail; anything else: the property must hold). See data/fuzz-corpus/README.md.

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
