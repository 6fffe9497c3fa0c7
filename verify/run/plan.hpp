#pragma once
// What a study will cost before it runs: peak memory and time, per
// experiment and VMC run, from the study alone (a replay file's shape, not
// its data). `slaterlab run` refuses a study that cannot fit in the memory
// this process may use (exit 2, one line naming the experiment, the
// estimate and what is available) and `run --dry-run` prints the plan.
//
// Memory model (bytes per entry of an N x N matrix; docs/resources.md):
//  - every strategy keeps the exact current matrix (8) and its own state:
//    an inverse (4 in float or mixed storage, 8 in double), Q and R (2x),
//    recompute's LU copy (its precision); delayed adds O(N K) window arrays;
//  - the runner: its current matrix (8) and, while a checkpoint's metrics are
//    evaluated in long double, the long-double copies, products and
//    differences of the residual and divergence (112);
//  - the mp reference: its inverse (one mp number per entry) kept for the
//    whole run, and two more copies while it factorises (Eigen's LU);
//  - certification (Arb, at the initial and the final matrix): 11 ball
//    matrices (arb_mat_det, arb_mat_det_precond and their work), each entry
//    48 bytes plus the limbs a mantissa of more than 128 bits needs;
//  - a replay experiment holds its moves: moves x N doubles;
//  - the process itself (code, libraries, allocator): its resident size when
//    the plan is made, plus 10 MiB of OpenBLAS buffers and HDF5 state and
//    64 KiB of open store objects per experiment x strategy (measured).
// Persistent parts add up; the transient parts (factorisation, metrics,
// certification) happen one at a time, so the largest of them counts.
// Experiments and VMC runs run one after another: the study's peak is the
// largest item plus the B-spline tables, which VMC runs build once and share.
// The constants were measured on N = 256 and 512 gaussian studies (peak RSS
// from getrusage) and agree within 15 %.
//
// Time model: the mp factorisation (~1.1e-7 s x N^3 at 50 digits, 1.5e-7 at
// 100), mp Sherman-Morrison per move (~1.3e-7 s x N^2), certification
// (~2.7e-8 s x N^3 at 128 bits, linear in the bits above), recompute's LU per
// proposal (2/3 N^3 flops at 2 GFLOP/s) and VMC sweeps (N^3 flops per sweep
// and walker). Good to a factor of a few on this project's machine; it is
// shown to decide whether to wait, never used to decide anything else.

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
