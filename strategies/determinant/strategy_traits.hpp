#pragma once
// What the verification code needs to know of a strategy, declared once
// where it registers (factory.cpp, or register_strategy() from outside), so
// that nothing else tests its name.
//
// A small core every consumer reads (precisions, variants, the window, the
// cycles it completes, ...) plus one hook per consumer that prices, walks or
// bounds a strategy: PlanModel (the resource plan, verify/run/plan),
// BenchModel (`slaterlab bench`) and RoundingModel (the property oracle's
// error model and the runner's guard check). Every default describes a
// plain rank-1 inverse update: a strategy declares only where it differs.
// Function members may be empty (the default then applies); none may throw
// but `declared`, whose std::invalid_argument says why a configuration's
// traits cannot be read.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "slaterlab/strategies/determinant/precision.hpp"

namespace slaterlab {

struct UpdaterOptions;

/// The breakdown threshold on |rho| of a strategy that declares none.
inline constexpr double kDefaultBreakdown = 1e-12;

/// An event a strategy counts by name besides breakdowns and recomputes
/// (UpdaterCounters::count): a column of the results file's checkpoint
/// table and a summary attribute, written without knowing the strategy.
struct CounterEvent {
  /// The column's name: lower case letters, digits and '_', starting with a
  /// letter, and none of the results file's own columns.
  std::string name;
  /// Its meaning in one line, stored with the column.
  std::string description;
  /// regress holds it to its baseline as a count of numerical trouble, like
  /// breakdowns (a split); false: it follows from the configuration (a flush).
  bool judged = false;
};

/// The event a windowed strategy counts at every flush of its window (the
/// benchmark's window length is moves per flush).
inline constexpr const char* kFlushEvent = "flushes";

/// How the resource plan prices a strategy (memory and time of a run).
struct PlanModel {
  /// N x N storage-precision matrices kept besides the exact matrix (1: an
  /// inverse or an LU copy; 2: Q and R).
  double matrices = 1;
  /// Bytes kept besides them for size n (a delayed window); may be empty.
  std::function<double(double n, const UpdaterOptions&)> extra_bytes;
  /// A fresh LU (2/3 N^3 flops) for every move, instead of an O(N^2) pass.
  bool factorises_every_move = false;
};

/// What `slaterlab bench` walks, and the bound it holds the move rate to.
struct BenchModel {
  /// None, a stream of 3 N^2 storage words per move (triad), or 4 N^2 GEMM
  /// flops per move (gemm).
  enum class MoveBound { none, triad, gemm } move_bound = MoveBound::none;
  /// The (k, variant) pairs walked, at double and float (and, for a device
  /// strategy, mixed, from N = 1024 on); empty: not benchmarked.
  std::vector<std::pair<int, std::string>> walks;
};

/// The rounding model of the property oracle (and of the runner's check of
/// a guarded strategy against the baseline): how many times more than
/// Sherman-Morrison's a strategy's updates may round.
struct RoundingModel {
  /// The factor for a configuration; empty: 1.
  std::function<double(const UpdaterOptions&)> factor;
  double factor_for(const UpdaterOptions& options) const { return factor ? factor(options) : 1.0; }
};

struct StrategyTraits {
  /// Precisions it supports (at least one).
  std::vector<Precision> precisions;
  /// Values of options.variant besides the default "" (tried by the fuzzer).
  std::vector<std::string> variants;
  /// options.k is a delay: proposals are applied in windows of k, flushed
  /// en bloc and each flush counted as kFlushEvent (the benchmark walks k
  /// moves per flush, the plan prices a window's pass below a move's; the
  /// fuzzer tries K = 16, 1 and 3).
  bool windowed = false;
  /// Which update cycles its apply_cycle() completes through exactly
  /// singular intermediate matrices (the cycle property holds it to the
  /// cycle's exact ratio there): none (per_update, the default: one ratio()
  /// + accept() per update, a breakdown at a singular intermediate), every
  /// cycle (whole), or cycles of at most options.k distinct columns (window).
  enum class Cycles { per_update, whole, window } cycles = Cycles::per_update;
  /// It carries accepted updates across checkpoints (false: it refactorises
  /// from the exact matrix each move), which regress's error models scale with.
  bool carries_updates = true;
  /// The breakdown threshold a study uses when it gives none.
  double default_breakdown = kDefaultBreakdown;
  /// The plain rank-1 update other strategies are compared with (the
  /// benchmark's vs_sm, the delayed guard check, the VMC divergence twin).
  /// Exactly one registered strategy is the baseline.
  bool baseline = false;
  /// `delayed_within_guard_of_sm` compares it with the baseline at its
  /// precision, within its rounding model's factor.
  bool guarded_against_baseline = false;
  /// It runs on a CUDA device (strategy_unavailable() says why not here).
  bool needs_device = false;
  /// It takes single moves (ratio, accept, reject); false: whole update
  /// cycles only (a version 2 kernel without them), refused for single-move
  /// workloads before any work.
  bool single_moves = true;
  /// The named events it counts (a windowed strategy: kFlushEvent first);
  /// each gets a column in the results file, 0 until first counted.
  std::vector<CounterEvent> events;

  PlanModel plan;
  BenchModel bench;
  RoundingModel rounding;

  // ---- a configuration that declares itself (an external kernel) ----------
  /// It loads a shared library (options.library, options.kernel_options)
  /// through the C kernel ABI (slaterlab/kernel.h).
  bool loads_library = false;
  /// The traits a configuration declares itself (an external kernel's own
  /// precisions, carries_updates and default breakdown); may be empty.
  std::function<StrategyTraits(const UpdaterOptions&)> declared;
  /// Why a configuration cannot run at size n, one line naming it and the
  /// sizes it takes ("" when it can: an external kernel's declared sizes);
  /// may be empty (every N).
  std::function<std::string(std::int64_t n, const UpdaterOptions&)> size_refusal;
  /// Text the results file records for a configuration (an external
  /// kernel's library path, SHA-256, name and version); may be empty.
  std::function<std::vector<std::pair<std::string, std::string>>(const UpdaterOptions&)> provenance;
};

}  // namespace slaterlab
