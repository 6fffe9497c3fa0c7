#include "verify/run/plan.hpp"

// Memory model (bytes per entry of an N x N matrix; docs/resources.md):
//  - every strategy keeps the exact current matrix (8) and its own state:
//    an inverse (4 in float or mixed storage, 8 in double), Q and R (2x),
//    recompute's LU copy (its precision); delayed adds O(N K) window arrays;
//  - the runner: its current matrix (8) and, while a checkpoint's residuals
//    are evaluated (verify/run/metrics.cpp), the pivot and its residual (16)
//    and the split's four slices and two products (48): 64;
//  - the mp reference: its inverse (one mp number per entry) kept for the
//    whole run, and two more copies while it factorises (Eigen's LU);
//  - certification (Arb, at the initial and the final matrix): 11 ball
//    matrices (arb_mat_det, arb_mat_det_precond and their work), each entry
//    48 bytes plus the limbs a mantissa of more than 128 bits needs;
//  - a replay experiment holds its moves: moves x N doubles;
//  - the process itself (code, libraries, allocator): its resident size when
//    the plan is made, plus 10 MiB of OpenBLAS buffers and HDF5 state and
//    64 KiB of open store objects per experiment x strategy (measured).
// Persistent parts add up; the transient parts (factorisation, metrics)
// happen one at a time, so the larger counts, and certification, which runs
// on a thread of its own beside the checkpoints, adds to it.
// Experiments and VMC runs run one after another: the study's peak is the
// largest item plus the B-spline tables, which VMC runs build once and share.
// The constants were measured on N = 256 and 512 gaussian studies (peak RSS
// from getrusage) and agree within 15 %.
//
// Time model: the mp factorisation (~1.1e-7 s x N^3 at 50 digits, 1.5e-7 at
// 100), mp Sherman-Morrison per move (~1.3e-7 s x N^2), or the fast
// reference's reset, move and checkpoint inverse (constants below),
// certification (at BLAS speed, about 40 double LUs; Arb's fallback unpriced),
// each strategy's own work: its reset (2 N^3 flops) and per proposal
// recompute's LU (2/3 N^3 flops at 2 GFLOP/s) or a memory-bound rank-1 pass
// over each kept matrix (4.5e-10 s x N^2 in double, half in float storage, a
// quarter of that in windows), VMC sweeps (N^3 flops per sweep and walker),
// and each checkpoint's residuals (metrics.hpp): the shared pivot's split,
// three DGEMMs (6 N^3 flops), then one DGEMM (2 N^3) per inverse strategy
// and two splits (12 N^3) per QR strategy, with their O(N^2) passes at an
// effective 50 GFLOP/s. Constants from CPU times at N = 1024 and 2048 on
// a 2-core machine (docs/resources.md), good to a factor of two there;
// shown to decide whether to wait, never used to decide anything else.

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "slaterlab/reference/lockstep_reference.hpp"
#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"
#include "verify/inputs/molecule_cache.hpp"
#include "verify/inputs/orbital_registry.hpp"
#include "verify/inputs/workload_registry.hpp"
#include "verify/run/vmc_study.hpp"

namespace slaterlab {
namespace {

// Constants of the models in plan.hpp (measured; see there).
constexpr double kArbBallBytes = 48;       // sizeof(arb_struct), mantissa inline up to 128 bits
constexpr double kArbMatrices = 11;        // ball matrices alive while certifying
constexpr double kMetricsBytes = 64;       // the residuals' pivot, slices and products
// DGEMM-bound work (checkpoint residuals, a strategy's LU and inverse at its
// reset): slaterlab bench's checkpoint-metrics, CPU time, 12 N^3 flops per
// checkpoint in 0.26 s at N = 1024 and 2.0 s at 2048 for three strategies.
constexpr double kBlasFlopsPerSecond = 5e10;
// Not per matrix entry: OpenBLAS's buffers and the HDF5 library's state
// (a 4 x 4 single-strategy run peaks 9 MiB above the planning process), and
// the store's open groups and datasets per experiment x strategy (the
// nightly study at N = 4: 12 MiB more for 208 of them).
constexpr double kRuntimeBytes = 10.0 * 1024 * 1024;
constexpr double kRecordBytes = 64.0 * 1024;
constexpr double kMpFactorCopies = 2;      // LU and inverse next to the kept inverse
constexpr double kMpFactorSeconds50 = 1.1e-7;   // x N^3
constexpr double kMpFactorSeconds100 = 1.5e-7;  // x N^3
constexpr double kMpUpdateSeconds = 1.3e-7;     // x N^2 per move
// A certification at BLAS speed (the runner's first try): about 40 double
// LUs, slaterlab bench's reference/certified-log-det-blas/N:1024 in CPU time
// (0.65 s, 6.1e-10 N^3). Arb's fallback (~2.7e-8 s x N^3 at 128 bits), where
// that bound cannot prove the enclosure (about kappa N u > 1e-2), is not
// foreseen: the matrix's conditioning is unknown before the run.
constexpr double kCertifyBlasSeconds = 6e-10;   // x N^3 per certification
constexpr double kFlopsPerSecond = 2e9;
// One pair of the Ewald sum's real-space part (an erfc and a minimum image):
// x N_total^2 per measured sweep (docs/electron-gas.md).
constexpr double kEwaldPairSeconds = 2e-8;
// A molecule's AO at one position: an exponential per primitive and the
// angular factor, about as many flops as this (a few primitives per shell).
constexpr double kAoFlops = 50;
// A double rank-1 update per proposal, x N^2 (sm-double's time column,
// gaussian, one sweep: 3.7e-10 at N = 1024, 5.0e-10 at 2048), and how much
// less a windowed strategy spends (delayed-64-double: 3 to 5.3x less).
constexpr double kRankOneSeconds = 4.5e-10;
constexpr double kWindowSpeedup = 4;
// The fast reference (slaterlab bench, CPU time): a reset of about 20 double
// LUs (3.5e-10 N^3 at N = 1024), a Metropolis proposal 0.9e-9 N^2 at 1024
// and 1.4e-9 at 2048 (one Dot2 residual and one dgemv, a second dgemv and a
// dger when accepted, once a checkpoint has measured the contraction), the
// checkpoint inverse 13 LUs (2.0e-10 N^3 at 1024, from the preconditioner);
// its own matrices (A, X) plus about 12 N^2 doubles while factorising, 15
// where its log|det| needs the measured solve residual (log_det_bound.hpp:
// three DGEMMs more, about 1.2e-10 N^3, within the factor two of the reset's
// time; whether a matrix needs it is not known before the run).
constexpr double kFastFactorSeconds = 4e-10;   // x N^3
constexpr double kFastUpdateSeconds = 1.1e-9;  // x N^2 per move
constexpr double kFastInverseSeconds = 2e-10;  // x N^3 per checkpoint
constexpr double kFastPersistentDoubles = 2;   // x N^2
constexpr double kFastFactorDoubles = 15;      // x N^2

double storage_bytes(Precision p) { return p == Precision::double_ ? 8.0 : 4.0; }

/// A strategy's own time per proposal: an LU where it factorises every move,
/// else a rank-1 pass over each kept matrix, memory-bound (so in proportion
/// to its storage bytes), and a fifth of that in windows (their flushes are
/// DGEMMs).
double strategy_move_seconds(const StrategyConfig& s, double n) {
  const StrategyTraits& traits = strategy_traits(s.name);
  if (traits.plan.factorises_every_move) return (2.0 / 3.0) * n * n * n / kFlopsPerSecond;
  const double pass = kRankOneSeconds * n * n * traits.plan.matrices * storage_bytes(s.options.precision) / 8;
  return traits.windowed ? pass / kWindowSpeedup : pass;
}

/// Bytes per mp number: cpp_bin_float_50 is 64 bytes, _100 is 80.
double mp_bytes(int digits) { return digits > 50 ? 80.0 : 64.0; }

/// Bytes one strategy keeps per matrix entry, and its O(N K) extras.
double strategy_bytes(const StrategyConfig& s, double n) {
  const double entries = n * n;
  const double own = storage_bytes(s.options.precision);
  const StrategyTraits& traits = strategy_traits(s.name);
  // The exact current matrix (UpdaterBase), and an inverse, an LU copy or Q and R.
  const double per_entry = 8 + traits.plan.matrices * own;
  const double extra = traits.plan.extra_bytes ? traits.plan.extra_bytes(n, s.options) : 0.0;
  return per_entry * entries + extra;
}

bool is_cycle_workload(const std::string& kind) {
  const auto kinds = known_cycle_workloads();
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

/// The reference's refactorisations after cycles through exactly singular
/// intermediate matrices (an mp LU each, as the first): excitation-cycles
/// draws the rank m uniform in 1..rank (mean (rank + 1) / 2 moves a cycle)
/// and shifts, making every intermediate singular, with probability `shift`
/// when m >= 2 ((rank - 1) / rank of the cycles).
double singular_cycle_restarts(const ExperimentConfig& e) {
  if (e.workload.kind != "excitation-cycles") return 0.0;
  const double rank = double(e.workload.rank);
  const double cycles = double(e.moves) / ((rank + 1) / 2);
  return cycles * e.workload.shift * (rank - 1) / rank;
}

PlanItem plan_experiment(const ExperimentConfig& e, const StudyConfig& study) {
  PlanItem item{"experiment", e.name, std::int64_t(e.workload.n), e.moves, {}, 0, 0};
  const double n = double(e.workload.n);
  const double entries = n * n;
  double persistent = 8 * entries;  // the runner's current matrix
  double metrics_flops = 0;  // per checkpoint, in units of N^3
  bool any_inverse = false;
  for (const StrategyConfig& s : study.strategies) {
    item.strategies.push_back(s.label);
    persistent += strategy_bytes(s, n);
    const StrategyTraits& traits = strategy_traits(s.name);
    // Its reset (an LU and an inverse, 2 N^3 flops), then its moves.
    item.seconds += 2 * n * n * n / kBlasFlopsPerSecond + double(e.moves) * strategy_move_seconds(s, n);
    const bool qr = traits.plan.matrices >= 2;  // Q and R
    any_inverse = any_inverse || !qr;
    metrics_flops += qr ? 12 : 2;
  }
  if (any_inverse) metrics_flops += 6;
  // Update cycles are the mp reference's alone (LockstepReference hands the
  // fast one over at the first cycle): price them at mp's cost throughout.
  // (A qs walk hands over its sweeps as cycles too; a replay file's cycles
  // are not known from its shape.)
  const bool cycles = is_cycle_workload(e.workload.kind) || e.workload.scheme == "qs";
  const bool fast = !cycles && reference::choose_reference_engine(study.reference.engine,
                                                                 Eigen::Index(e.workload.n)) ==
                                   reference::ReferenceEngine::fast;
  const double mp = mp_bytes(study.reference.digits);
  // The mp reference's inverse, or the fast reference's matrices.
  persistent += (fast ? 8 * kFastPersistentDoubles : mp) * entries;
  if (e.workload.kind == "replay") persistent += double(e.moves) * n * 8 + entries * 8;

  const double bits = double(study.reference.certified_bits);
  const double ball = kArbBallBytes + 2 * std::max(0.0, bits - 128) / 8;  // mid and radius limbs
  const double certify = study.reference.certify ? kArbMatrices * ball * entries : 0;
  const double factor_bytes = fast ? 8 * kFastFactorDoubles : kMpFactorCopies * mp;
  // Certification runs beside the first and the last checkpoint (a thread of
  // its own, lockstep_experiment.hpp): it adds to whichever part is larger.
  const double transient = std::max(factor_bytes * entries, kMetricsBytes * entries);
  item.bytes = persistent + transient + certify;

  // Per-move references factorise at reset and on the recompute cadence
  // and update every move; checkpoint-only ones factorise at each
  // checkpoint (the first included) and do nothing between.
  const double checkpoints = 1 + std::ceil(double(e.moves) / double(e.checkpoint_every));
  const double factorisations =
      !study.reference.per_move ? checkpoints
                                : 1 + (study.reference.recompute_every > 0
                                           ? double(e.moves) / double(study.reference.recompute_every)
                                           : 0.0) +
                                      singular_cycle_restarts(e);
  item.seconds += factorisations * (fast ? kFastFactorSeconds * n * n * n
                                         : mp_reset_seconds(study.reference.digits, n));
  if (study.reference.per_move) {
    item.seconds += double(e.moves) * (fast ? kFastUpdateSeconds : kMpUpdateSeconds) * entries;
  }
  if (fast) item.seconds += checkpoints * kFastInverseSeconds * n * n * n;
  item.seconds += checkpoints * metrics_flops * n * n * n / kBlasFlopsPerSecond;
  if (study.reference.certify) item.seconds += 2 * kCertifyBlasSeconds * n * n * n;
  return item;
}

/// The table of a VMC run's orbital set (0 for a set that builds none: its
/// registry kind's build_bytes, and a molecule's orbitals), and the key under
/// which runs share it.
std::pair<std::string, double> spline_table(const VmcRunConfig& v) {
  if (v.molecule()) return {"", 0.0};
  const OrbitalSetKind& kind = orbital_set_kind(v.orbitals);
  if (!kind.build_bytes) return {"", 0.0};
  BsplineBoxRule rule;
  rule.grid = v.grid;
  const Eigen::Index grid = v.electron_gas() ? gas_bspline_box(v.n, v.cell_length(), kGasPointsPerWavelength, v.grid).grid
                                             : ho_bspline_box(v.n, v.alpha, rule).grid;
  const double bytes = kind.build_bytes(grid, v.n);
  return {fmt::format("{}/{}/{}/{:.17g}/{:.17g}/{}", v.system, v.orbitals, v.n, v.alpha,
                      v.cell_length(), grid),
          bytes};
}

PlanItem plan_vmc(const VmcRunConfig& v) {
  const double n = double(v.n);
  const double spins = double(v.spins());  // one determinant per spin
  PlanItem item{"vmc", v.name, std::int64_t(v.n),
                (v.sweeps + v.equilibration) * std::int64_t(v.walkers), {v.strategy.label}, 0, 0};
  const double twins = v.divergence ? 2.0 : 1.0;  // the analytic sm-double shadow
  item.bytes = double(v.walkers) * twins * spins * (strategy_bytes(v.strategy, n) + 8 * n * n) +
               double(v.walkers) * double(v.sweeps) * 16;  // the energy and kinetic series
  item.seconds = twins * spins * double(item.moves) * n * n * n / kFlopsPerSecond;
  // A molecule's orbitals at every trial position: the AOs and their product
  // with each spin's occupied MO columns.
  if (v.molecule()) {
    const double aos = double(load_molecule(v.file)->ao_count());
    const double electrons = n + double(v.n_down);
    item.seconds += twins * double(item.moves) * electrons * aos * (2 * n + kAoFlops) / kFlopsPerSecond;
  }
  // The Ewald energy once per measured sweep: its real-space pairs dominate.
  if (v.electron_gas() && v.interacting) {
    const double electrons = n * spins;
    item.seconds += twins * double(v.walkers) * double(v.sweeps) * kEwaldPairSeconds *
                    electrons * electrons;
  }
  return item;
}

double process_resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  double pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * double(sysconf(_SC_PAGESIZE));
}

double process_virtual_bytes() {
  std::ifstream statm("/proc/self/statm");
  double pages = 0;
  if (!(statm >> pages)) return 0;
  return pages * double(sysconf(_SC_PAGESIZE));
}

double mem_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace

double mp_reset_seconds(int digits, double n) {
  return (digits > 50 ? kMpFactorSeconds100 : kMpFactorSeconds50) * n * n * n;
}

double experiment_seconds(const ExperimentConfig& e, const StudyConfig& study) {
  return plan_experiment(e, study).seconds;
}

StudyPlan plan_study(const StudyConfig& study) {
  StudyPlan plan;
  plan.process_bytes = process_resident_bytes();
  double largest = 0;
  for (const ExperimentConfig& e : study.experiments) {
    plan.items.push_back(plan_experiment(e, study));
  }
  std::map<std::string, double> tables;
  for (const VmcRunConfig& v : study.vmc) {
    plan.items.push_back(plan_vmc(v));
    const auto [key, bytes] = spline_table(v);
    if (!key.empty()) tables[key] = bytes;
  }
  for (const auto& [key, bytes] : tables) plan.shared_bytes += bytes;
  plan.shared_bytes += kRuntimeBytes +
                       kRecordBytes * double(study.experiments.size() * study.strategies.size() +
                                             study.vmc.size());
  for (const PlanItem& item : plan.items) {
    largest = std::max(largest, item.bytes);
    plan.seconds += item.seconds;
  }
  plan.peak_bytes = plan.process_bytes + plan.shared_bytes + largest;
  return plan;
}

double available_memory_bytes() {
  if (const char* limit = std::getenv("SLATERLAB_MEMORY_LIMIT")) {
    char* end = nullptr;
    const double bytes = std::strtod(limit, &end);
    if (end != limit && *end == '\0' && bytes > 0) return bytes;
    throw ResourceError(fmt::format("SLATERLAB_MEMORY_LIMIT='{}' is not a positive number of bytes",
                                    limit));
  }
  double available = mem_available_bytes();
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    available = std::min(available, double(as.rlim_cur) - process_virtual_bytes());
  }
  return std::max(0.0, available);
}

void check_fits(const StudyPlan& plan, double available) {
  // What the process already holds is not available again; the item needs
  // its own estimate on top of the tables shared by VMC runs.
  for (const PlanItem& item : plan.items) {
    const double need = item.bytes + plan.shared_bytes;
    if (need > available) {
      throw ResourceError(fmt::format(
          "{} '{}' (N = {}) needs about {} of memory (estimate), but only {} is available; "
          "reduce n or the strategies, or run it on a larger machine (slaterlab run --dry-run "
          "shows the plan)",
          item.kind, item.name, item.n, format_bytes(need), format_bytes(available)));
    }
  }
}

void check_before_running(const StudyConfig& study, const StudyPlan& plan, double available) {
  for (const VmcRunConfig& v : study.vmc) {
    try {
      sampler_config(v).validate();
    } catch (const std::invalid_argument& error) {
      throw ConfigError("VMC run '" + v.name + "': " + error.what());
    }
    const double table = spline_table(v).second;
    if (table > double(kBsplineDefaultMemoryCap)) {
      throw ResourceError(fmt::format(
          "VMC run '{}': its B-spline table of {} orbitals needs about {} to build, above the "
          "orbital sets' cap of {}; use a coarser 'grid'",
          v.name, v.n, format_bytes(table), format_bytes(double(kBsplineDefaultMemoryCap))));
    }
  }
  check_fits(plan, available);
  for (const ExperimentConfig& e : study.experiments) {
    if (e.workload.kind != "replay") continue;
    try {
      make_workload(workload_to_run(e));
    } catch (const std::invalid_argument& error) {
      throw ConfigError("experiment '" + e.name + "': " + error.what());
    }
  }
}

WorkloadSpec workload_to_run(const ExperimentConfig& e) {
  WorkloadSpec spec = e.workload;
  if (spec.kind == "replay") spec.replay_moves = e.moves;
  return spec;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes)
                : fmt::format("{:.{}f} {}", bytes, bytes < 10 ? 1 : 0, units[u]);
}

std::string format_seconds(double seconds) {
  if (seconds < 60) return fmt::format("{:.{}f} s", seconds, seconds < 10 ? 1 : 0);
  if (seconds < 3600) return fmt::format("{:.0f} min", seconds / 60);
  if (seconds < 86400 * 2) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} days", seconds / 86400);
}

std::string format_plan(const StudyPlan& plan, double available) {
  std::ostringstream os;
  os << "| kind | name | N | moves | strategies | memory | time |\n"
        "|---|---|--:|--:|---|--:|--:|\n";
  for (const PlanItem& item : plan.items) {
    std::string strategies;
    for (const std::string& s : item.strategies) strategies += (strategies.empty() ? "" : ", ") + s;
    os << fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", item.kind, item.name, item.n,
                      item.moves, strategies, format_bytes(item.bytes),
                      format_seconds(item.seconds));
  }
  os << fmt::format(
      "\npeak memory about {} (process {}, shared tables, buffers and store {}, largest item on top); "
      "{} available; time about {}\n",
      format_bytes(plan.peak_bytes), format_bytes(plan.process_bytes),
      format_bytes(plan.shared_bytes), format_bytes(available), format_seconds(plan.seconds));
  return os.str();
}

}  // namespace slaterlab
