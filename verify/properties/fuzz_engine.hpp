#pragma once
// The fuzz engine behind `slaterlab fuzz`: the strategy properties over
// larger sizes and longer sequences than the unit suite, with shrinking, and
// the kept corpus of counterexamples (data/fuzz-corpus/).
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
// The batches, shrinking and the corpus entry are described in
// fuzz_engine.cpp and docs/fuzzing.md.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "verify/properties/configs.hpp"
#include "verify/properties/fuzz_args.hpp"
#include "verify/properties/generators.hpp"
#include "verify/properties/property.hpp"

namespace slaterlab {

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

}  // namespace slaterlab
