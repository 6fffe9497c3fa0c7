#include "verify/cli/bench.hpp"

// Update cases, updates/<strategy label>/N:<N> (an external kernel's with
// its --kernel-option values, updates/<label>/<key>:<value>/N:<N>): a long walk of accepted
// column replacements (100% acceptance, the DMC-like setting of McDaniel
// et al., J. Chem. Phys. 147, 174107 (2017), Sec. III), electron k = move mod N, each new column iid N(0,1) from a
// pool of N + 1 columns used in turn (two columns of the current matrix are
// then never the same pool column: they were written fewer than N moves
// apart). The strategy is reset once, untimed; the timed part runs whole
// windows (K moves for delayed, one move otherwise, so every GEMM flush is
// inside) until --seconds of CPU time have passed (the clock is read every
// windows_per_clock_read windows: a read costs about a small-N move).
// items_per_second is moves per second. Sizes N = 16, 21, 32, 64, 128 (a
// molecule's) and 256, 1024, 2048, 4096 (--n picks some), float and double:
// sm, splitting, delayed K = 1, 2, 4, ..., 256 (incremental) and 1, 4, 16,
// 64, 256 (naive), qr-givens.
//
// Limits, measured in the same run (best of repeated timings, cached, so a
// filtered run measures what its cases need):
//   limits/gemm-<p>/N:<N>        GEMM C -= A B^T, N x N x 256 (the flush's
//                                shape at the largest K): flop/s;
//   limits/gemv-ger-<p>/N:<N>    sm's kernel, GEMV + GER on an N x N matrix:
//                                bytes/s counting 3 N^2 entries;
//   limits/stream-triad          a = b + s c over 3 x 64 MiB: memory bytes/s;
//   limits/sm-loop-<p>/N:<N>     the textbook Sherman-Morrison loop of a C
//                                kernel (ShermanMorrisonLoop) on the update
//                                cases' walk: moves_per_s, ns_per_move.
// Counters of an update case:
//   bound       moves/s the case's bound allows: delayed (both variants)
//               GEMM flop/s / (4 N^2) (the flush's flops per move; the
//               look-ahead's O(N K) is not counted, so it shows as a
//               shortfall); sm the memory bandwidth / (3 N^2 sizeof(T)) (GEMV
//               reads Ainv, GER reads and writes it). qr-givens has none.
//   of_bound    moves/s / bound.
//   vs_sm       moves/s / sm's moves/s at the same N and precision (when sm
//               ran earlier in the run).
//   vs_probe    moves/s / limits/sm-loop's at the same N and precision (float
//               for mixed): below 1 the strategy is slower than the plain
//               loop, 1/vs_probe times its time per move.
//   N, K        the case's size and, for a windowed strategy, its delay.
//   breakdowns  sanity: a breakdown's refactorisation is in the timing.
//   window      moves per flush of a windowed strategy (its kFlushEvent):
//               below K when the growth guard flushed early, each flush
//               then a GEMM of that smaller width.
//
// References: reference/lu-double/N:<N> (a double LU, the unit of cost),
// reference/certified-log-det/N:1024 (Arb, counters certified_bits and
// cost_vs_lu) and reference/mp-reset/N:512 (the lockstep runner's mp
// reference at reset: 50-digit LU and inverse; cost_vs_lu).
//
// B-spline: bspline/vgl-<p>/N:<N> evaluates value, gradient and Laplacian of
// N harmonic-oscillator orbitals at random positions; counters bytes_per_s
// (64 Npad sizeof(T) stencil bytes per position, the kernel's traffic) and
// of_bandwidth (against limits/stream-triad). The electron gas's B-spline
// orbitals, orbitals/gas-bspline-<p>/vgl/N:<N> (N = 257, 515, 1021, 2007, on
// the gas's own grid), with the same counters (bench_orbitals.hpp).
//
// Where a CUDA device is present, GPU cases are added (otherwise stderr
// says once why not): updates/delayed-cuda-<K>-<p>/N:<N> (K = 64, 256;
// float, double, mixed) at the run's sizes from 1024 on, walked as the CPU
// cases (vs_sm against the CPU's sm), and the orbital cases of
// bench_orbitals.hpp.
//
// BLAS runs single-threaded: run_bench() calls openblas_set_num_threads(1)
// before any benchmark (OPENBLAS_NUM_THREADS set from inside the program is
// too late: OpenBLAS reads it when the library is loaded). The BLAS thread
// count is recorded in the benchmark context.

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "slaterlab/reference/certified.hpp"
#include "slaterlab/reference/mp.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "verify/cli/bench_args.hpp"
#include "verify/cli/bench_csv.hpp"
#include "verify/cli/bench_limits.hpp"
#include "verify/cli/bench_measure.hpp"
#include "verify/cli/bench_orbitals.hpp"
#include "verify/cli/bench_references.hpp"
#include "verify/cli/bench_updates.hpp"

namespace slaterlab {

using namespace bench_detail;

namespace {

// ---- references -------------------------------------------------------------

/// Seconds of one double LU (LAPACK dgetrf) at size n, cached: the unit of
/// the references' cost.
double lu_seconds(Eigen::Index n) {
  static std::map<Eigen::Index, double> cache;
  if (auto it = cache.find(n); it != cache.end()) return it->second;
  const Eigen::MatrixXd a = random_matrix<double>(n, n, 21);
  const double rate = best_rate(1.0, bench_options().seconds, [&] {
    benchmark::DoNotOptimize(lu_factor<double>(a).log_det);
  });
  return cache[n] = 1.0 / rate;
}

void register_references() {
  for (const Eigen::Index n : {512, 1024}) {
    benchmark::RegisterBenchmark(fmt::format("reference/lu-double/N:{}", n).c_str(),
                                 [n](benchmark::State& state) {
                                   const double s = lu_seconds(n);
                                   for (auto _ : state) benchmark::DoNotOptimize(s);
                                   state.counters["seconds"] = s;
                                 })
        ->Iterations(1);
  }
  // Enough Arb precision that N = 1024 keeps >= 100 proven bits of log|det|
  // (128 bits gave 102 at N = 512; the LU's error bound grows with N).
  constexpr long kCertifiedPrecision = 160;
  benchmark::RegisterBenchmark("reference/certified-log-det/N:1024", [](benchmark::State& state) {
    const Eigen::MatrixXd a = random_matrix<double>(1024, 1024, 22);
    const double lu = lu_seconds(1024);
    reference::CertifiedLogDet result;
    double seconds = 0;
    for (auto _ : state) {
      const double t0 = thread_seconds();
      result = reference::certified_log_det(a, kCertifiedPrecision);
      seconds = thread_seconds() - t0;
    }
    state.counters["certified_bits"] = double(result.certified_bits);
    state.counters["precision_bits"] = double(kCertifiedPrecision);
    state.counters["cost_vs_lu"] = seconds / lu;
  })->Iterations(1)->Unit(benchmark::kSecond);
  benchmark::RegisterBenchmark("reference/mp-reset/N:512", [](benchmark::State& state) {
    const Eigen::MatrixXd a = random_matrix<double>(512, 512, 23);
    const double lu = lu_seconds(512);
    double seconds = 0;
    for (auto _ : state) {
      reference::MpReference mp(reference::kDefaultDigits);
      const double t0 = thread_seconds();
      mp.reset(a);
      seconds = thread_seconds() - t0;
      benchmark::DoNotOptimize(mp.log_det());
    }
    state.counters["digits"] = reference::kDefaultDigits;
    state.counters["cost_vs_lu"] = seconds / lu;
  })->Iterations(1)->Unit(benchmark::kSecond);
}

// ---- B-spline orbitals --------------------------------------------------------

template <class T>
void bspline_vgl(benchmark::State& state, Eigen::Index n) {
  const HarmonicOscillatorOrbitals source(n, 1.0);
  BsplineBoxRule rule;
  rule.grid = 32;  // table 32^3 Npad sizeof(T): 32 or 64 MiB at N = 256, beyond the caches
  const BsplineOrbitals<T> orbitals(source, rule);
  const BsplineBox box = orbitals.box();
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> uniform(-box.half_width, box.half_width);
  std::vector<double> positions(3 * 4096);
  for (double& x : positions) x = uniform(rng);
  const std::size_t npad = std::size_t(orbitals.padded_size());
  std::vector<T, detail::Aligned64Allocator<T>> out(5 * npad);
  std::int64_t evaluations = 0;
  for (auto _ : state) {
    const double t0 = thread_seconds();
    do {
      for (std::size_t i = 0; i < positions.size(); i += 3, ++evaluations) {
        orbitals.evaluate_vgl(&positions[i], out.data(), out.data() + npad, out.data() + 2 * npad,
                              out.data() + 3 * npad, out.data() + 4 * npad);
      }
      benchmark::ClobberMemory();
    } while (thread_seconds() - t0 < bench_options().seconds);
  }
  const double bytes = 64.0 * double(npad) * sizeof(T);  // the stencil's rows per position
  state.SetItemsProcessed(evaluations);
  state.counters["bytes_per_s"] =
      benchmark::Counter(double(evaluations) * bytes, benchmark::Counter::kIsRate);
  state.counters["of_bandwidth"] =
      benchmark::Counter(double(evaluations) * bytes / triad_rate(), benchmark::Counter::kIsRate);
  state.counters["table_MiB"] = double(orbitals.table_bytes()) / (1 << 20);
}

void register_bspline() {
  constexpr Eigen::Index n = 256;
  benchmark::RegisterBenchmark("bspline/vgl-float/N:256", bspline_vgl<float>, n)->Iterations(1);
  benchmark::RegisterBenchmark("bspline/vgl-double/N:256", bspline_vgl<double>, n)->Iterations(1);
  benchmark::RegisterBenchmark("limits/stream-triad", [](benchmark::State& state) {
    const double rate = triad_rate();
    for (auto _ : state) benchmark::DoNotOptimize(rate);
    state.counters["bytes_per_s"] = rate;
  })->Iterations(1);
}

/// delayed-cuda (K = 64, 256; float, double, mixed) at the run's sizes from
/// 1024 on, after the CPU cases of the same sizes (so vs_sm compares with
/// the CPU's sm), and the orbital cases of bench_orbitals.hpp; registered
/// only where a device is present, otherwise stderr says once why not.
/// Returns whether they were.
bool register_device_cases() {
  std::vector<std::string> device;
  for (const std::string& strategy : registered_strategies()) {
    if (!strategy_traits(strategy).needs_device) continue;
    if (const auto why = strategy_unavailable(strategy)) {
      std::cerr << "slaterlab bench: GPU cases not registered: " << *why << "\n";
      return false;
    }
    device.push_back(strategy);
  }
  for (const Eigen::Index n : bench_options().sizes) {
    if (n < 1024) continue;
    for (const Precision p : {Precision::double_, Precision::single, Precision::mixed})
      for (const std::string& strategy : device) register_walks(strategy, n, p);
  }
  register_orbital_benchmarks();
  return true;
}

void register_all() {
  register_bspline();  // also the triad probe, first: every bound below uses it
  for (const Eigen::Index n : bench_options().sizes) {
    register_limits<double>(n);
    register_limits<float>(n);
    register_updates(n, Precision::double_);
    register_updates(n, Precision::single);
  }
  register_references();
  register_fast_reference_benchmarks(
      {lu_seconds, sm_move_seconds, thread_seconds, bench_options().seconds});
  const bool on_device = register_device_cases();
  register_gas_orbital_benchmarks(triad_rate, on_device);
  register_registered_orbital_benchmarks();
}

}  // namespace

const char* bench_usage() {
  return "  --n=LIST         sizes of the update and limit cases (default 16,21,32,64,128,256,1024,2048,4096)\n"
         "  --seconds=T      CPU seconds per measured case (default 0.3)\n"
         "  --kernel=PATH    also walk an external kernel (slaterlab/kernel.h; repeatable)\n"
         "  --kernel-option=KEY=V1[,V2...]  an option for the --kernel before it, one case per\n"
         "                   value (repeatable: every combination; cases named .../KEY:V/N:<N>)\n"
         "  --benchmark_filter=REGEX  run only matching cases, e.g. 'updates/delayed-.*-double/N:1024'\n"
         "  --benchmark_format=console|json|csv, --benchmark_out=FILE, --benchmark_out_format=...:\n"
         "                   Google Benchmark's own flags (csv is written when the run ends)\n";
}

int run_bench(int argc, char** argv) {
  std::string error;
  if (!take_bench_options(argc, argv, bench_options(), error)) {
    std::fprintf(stderr, "slaterlab: error: bench: %s\n", error.c_str());
    return 2;
  }
  openblas_set_num_threads(1);
  static const bool registered = (register_all(), true);  // once per process
  (void)registered;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("blas_threads", std::to_string(openblas_get_num_threads()));
  benchmark::AddCustomContext("seconds_per_case", fmt::format("{}", bench_options().seconds));
  const BenchOptions& options = bench_options();
  const auto display = csv_reporter_if(options.display_format == "csv");
  const auto file = csv_reporter_if(options.file_out && options.file_format == "csv");
  benchmark::RunSpecifiedBenchmarks(display.get(), file.get());
  benchmark::Shutdown();
  return 0;
}

}  // namespace slaterlab
