#pragma once
// What a study will cost before it runs: peak memory and time, per
// experiment and VMC run, from the study alone (a replay file's shape, not
// its data). `slaterlab run` refuses a study that cannot fit in the memory
// this process may use (exit 2, one line naming the experiment, the
// estimate and what is available) and `run --dry-run` prints the plan.
//
// The memory model counts, per N x N entry, every strategy's state, the
// runner's matrices and long-double metric copies, the mp reference and the
// Arb certification, plus the process's resident size; transient parts count
// one at a time (docs/resources.md; the constants, measured, are in
// plan.cpp). The time model, within a factor of two of measured runs on this
// project's machine (docs/resources.md), is only shown,
// never used to decide anything.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "verify/inputs/config.hpp"

namespace slaterlab {

/// A study that does not fit: bad input (exit code 2).
class ResourceError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct PlanItem {
  std::string kind;  // "experiment" or "vmc"
  std::string name;
  std::int64_t n = 0;
  std::int64_t moves = 0;  // proposals (experiments) or sweeps x walkers (VMC)
  std::vector<std::string> strategies;
  double bytes = 0;    // peak bytes of this item alone (the process excluded)
  double seconds = 0;  // estimated run time
};

struct StudyPlan {
  std::vector<PlanItem> items;
  double process_bytes = 0;  // resident size of the process when planned
  double shared_bytes = 0;   // B-spline tables shared by VMC runs, runtime and store overhead
  double peak_bytes = 0;     // process + shared + the largest item
  double seconds = 0;        // sum over items
};

StudyPlan plan_study(const StudyConfig& study);

/// The time model's estimate for one experiment of `study` (its plan item's seconds).
double experiment_seconds(const ExperimentConfig& e, const StudyConfig& study);
/// The time model's mp reference factorisation (a reset) at size n.
double mp_reset_seconds(int digits, double n);

/// Bytes this process may still allocate: the smaller of the kernel's
/// MemAvailable and what the address-space limit (ulimit -v) leaves above
/// the current virtual size. SLATERLAB_MEMORY_LIMIT (bytes) overrides it,
/// for tests and for sharing a machine.
double available_memory_bytes();

/// Throws ResourceError naming the first item that cannot fit in
/// `available` bytes, with its estimate.
void check_fits(const StudyPlan& plan, double available);

/// Everything `run`, `run --dry-run` and `regress` (and every MPI rank) check
/// before any work, after parse_study's validation of every key, in this
/// order: every VMC run's sampler settings (ConfigError naming the run) and
/// B-spline table size; the study fits in `available` bytes (check_fits);
/// then every replay file's data is read and validated (ConfigError naming
/// the experiment), so that a file too large is refused from its shape alone.
void check_before_running(const StudyConfig& study, const StudyPlan& plan, double available);

/// The workload an experiment's run builds: a replay reads only the first
/// e.moves moves of its file, the number plan_study counts.
WorkloadSpec workload_to_run(const ExperimentConfig& e);

/// The plan as a Markdown table with the totals.
std::string format_plan(const StudyPlan& plan, double available);

/// "1.5 GiB", "230 MiB", "12 KiB".
std::string format_bytes(double bytes);
/// "45 s", "12 min", "3.2 h".
std::string format_seconds(double seconds);

}  // namespace slaterlab
