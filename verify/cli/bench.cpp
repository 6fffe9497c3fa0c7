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
//   breakdowns, guard_flushes  sanity: either puts extra work in the timing.
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

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "slaterlab/reference/certified.hpp"
#include "slaterlab/reference/mp.hpp"
#include "slaterlab/strategies/determinant/linalg.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "verify/cli/bench_orbitals.hpp"
#include "verify/cli/bench_references.hpp"

namespace slaterlab {
namespace {

struct BenchOptions {
  std::vector<Eigen::Index> sizes{16, 21, 32, 64, 128, 256, 1024, 2048, 4096};
  double seconds = 0.3;  // CPU time per measured case
  // External kernel libraries (--kernel), each with the values of the
  // --kernel-option=KEY=V1,V2,... given after it, key by key.
  struct Kernel {
    std::string library;
    std::vector<std::pair<std::string, std::vector<std::string>>> options;
  };
  std::vector<Kernel> kernels;
  // Google Benchmark's --benchmark_format / --benchmark_out_format, peeked
  // at (they stay in argv for the library) so that csv gets our reporter.
  std::string display_format = "console";
  std::string file_format = "json";
  bool file_out = false;  // --benchmark_out given
};

BenchOptions& bench_options() {
  static BenchOptions options;
  return options;
}

/// CPU time of the calling thread, the clock Google Benchmark reports by default.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// Best rate (units per second) of `work`, which does `units` per call, over
/// calls repeated for at least `seconds` (at least 3 calls).
template <class Work>
double best_rate(double units, double seconds, Work&& work) {
  double best = 0;
  const double end = thread_seconds() + seconds;
  for (int calls = 0; calls < 3 || thread_seconds() < end; ++calls) {
    const double t0 = thread_seconds();
    work();
    best = std::max(best, units / std::max(thread_seconds() - t0, 1e-9));
  }
  return best;
}

template <class T>
MatrixX<T> random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  MatrixX<T> m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = T(normal(rng));
  return m;
}

// ---- limits ---------------------------------------------------------------

constexpr Eigen::Index kGemmDepth = 256;  // the flush's inner dimension at the largest K

/// GEMM flop/s, C(N x N) -= A(N x 256) B(N x 256)^T, cached per (N, T).
template <class T>
double gemm_rate(Eigen::Index n) {
  static std::map<Eigen::Index, double> cache;
  if (auto it = cache.find(n); it != cache.end()) return it->second;
  const MatrixX<T> a = random_matrix<T>(n, kGemmDepth, 11);
  const MatrixX<T> b = random_matrix<T>(n, kGemmDepth, 12);
  MatrixX<T> c = random_matrix<T>(n, n, 13);
  const double flops = 2.0 * double(n) * double(n) * double(kGemmDepth);
  const double rate = best_rate(flops, bench_options().seconds, [&] {
    blas::gemm<T>(false, true, n, n, kGemmDepth, T(-1e-3), a.data(), n, b.data(), n, T(1),
                  c.data(), n);
  });
  return cache[n] = rate;
}

/// sm's kernel, GEMV + GER on an N x N matrix, in bytes/s (3 N^2 entries).
template <class T>
double gemv_ger_rate(Eigen::Index n) {
  static std::map<Eigen::Index, double> cache;
  if (auto it = cache.find(n); it != cache.end()) return it->second;
  MatrixX<T> m = random_matrix<T>(n, n, 14);
  const VectorX<T> x = random_matrix<T>(n, 1, 15);
  VectorX<T> y(n), z = random_matrix<T>(n, 1, 16);
  const double bytes = 3.0 * double(n) * double(n) * sizeof(T);
  const double rate = best_rate(bytes, bench_options().seconds, [&] {
    blas::gemv<T>(true, T(1), m, x.data(), T(0), y.data());
    blas::ger<T>(T(-1e-6), z.data(), y.data(), m);
  });
  return cache[n] = rate;
}

/// Memory bandwidth in bytes/s: a = b + s c over three 64 MiB double arrays
/// (far beyond any cache), 24 bytes per element (write-allocate not counted).
double triad_rate() {
  static const double rate = [] {
    const std::size_t count = std::size_t(8) << 20;
    std::vector<double> a(count), b(count, 1.0), c(count, 2.0);
    return best_rate(24.0 * double(count), bench_options().seconds, [&] {
      double* pa = a.data();
      const double* pb = b.data();
      const double* pc = c.data();
      for (std::size_t i = 0; i < count; ++i) pa[i] = pb[i] + 0.5 * pc[i];
      benchmark::DoNotOptimize(pa);
      benchmark::ClobberMemory();
    });
  }();
  return rate;
}

// ---- update cases -----------------------------------------------------------

/// The matrix a walk starts from and its pool of N + 1 new columns.
struct WalkData {
  Eigen::MatrixXd start;
  std::vector<Eigen::VectorXd> pool;
};

/// Data for size n; only the latest size is kept (N = 4096 holds 256 MiB).
const WalkData& walk_data(Eigen::Index n) {
  static Eigen::Index cached_n = -1;
  static WalkData data;
  if (cached_n == n) return data;
  data = {};
  data.start = random_matrix<double>(n, n, std::uint64_t(n) * 7919u + 1u);
  const Eigen::MatrixXd pool = random_matrix<double>(n, n + 1, std::uint64_t(n) * 7919u + 2u);
  for (Eigen::Index j = 0; j <= n; ++j) data.pool.emplace_back(pool.col(j));
  cached_n = n;
  return data;
}

/// Windows walked between two reads of the CPU clock: a read costs about a
/// small-N move (a system call), so at small N one read spans about N^2 =
/// 2^16 entries of work (a few tens of µs).
std::int64_t windows_per_clock_read(Eigen::Index n) {
  return std::max<std::int64_t>(1, (std::int64_t(1) << 16) / (std::int64_t(n) * n));
}

/// The textbook Sherman-Morrison loop of a C kernel (as in QMCkl's and the
/// TREX benchmark harness's): the inverse row-major, the ratio a dot of row
/// k with the new column, the update Ainv u by dots and a rank-1 update of
/// the inverse, in plain loops compiled with the project's flags; no exact
/// matrix, no log-determinant, no breakdown rule. A ratio below 1e-3 in
/// magnitude (QMCkl's breakdown) restarts it from the first inverse instead
/// of applying the move.
template <class T>
class ShermanMorrisonLoop {
 public:
  explicit ShermanMorrisonLoop(const Eigen::MatrixXd& a)
      : n_(a.rows()), first_(first_inverse(a)), ainv_(first_), x_(n_), row_(n_) {}

  T ratio(Eigen::Index k, const T* u) const {
    const T* r = &ainv_[std::size_t(k * n_)];
    T rho = 0;
    for (Eigen::Index j = 0; j < n_; ++j) rho += r[j] * u[j];
    return rho;
  }

  void accept(Eigen::Index k, const T* u, T rho) {
    if (!(std::abs(rho) >= T(1e-3))) {
      ainv_ = first_;
      ++restarts_;
      return;
    }
    for (Eigen::Index i = 0; i < n_; ++i) x_[std::size_t(i)] = ratio(i, u);
    x_[std::size_t(k)] -= T(1);
    std::copy_n(&ainv_[std::size_t(k * n_)], n_, row_.begin());
    for (Eigen::Index i = 0; i < n_; ++i) {
      T* r = &ainv_[std::size_t(i * n_)];
      const T f = x_[std::size_t(i)] / rho;
      for (Eigen::Index j = 0; j < n_; ++j) r[j] -= f * row_[std::size_t(j)];
    }
  }

  std::int64_t restarts() const { return restarts_; }

 private:
  static std::vector<T> first_inverse(const Eigen::MatrixXd& a) {
    const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> inverse =
        invert<double>(a).inverse.cast<T>();
    return {inverse.data(), inverse.data() + inverse.size()};
  }

  Eigen::Index n_;
  std::vector<T> first_, ainv_, x_, row_;
  std::int64_t restarts_ = 0;
};

/// The loop's moves/s on the update cases' walk at size n (best of repeated
/// timings, cached per (N, T)) and its restarts.
template <class T>
std::pair<double, std::int64_t> sm_loop(Eigen::Index n) {
  static std::map<Eigen::Index, std::pair<double, std::int64_t>> cache;
  if (auto it = cache.find(n); it != cache.end()) return it->second;
  const WalkData& data = walk_data(n);
  std::vector<VectorX<T>> pool;
  for (const Eigen::VectorXd& column : data.pool) pool.emplace_back(column.cast<T>());
  ShermanMorrisonLoop<T> loop(data.start);
  std::int64_t moves = 0;
  const std::int64_t per_call = windows_per_clock_read(n);
  const double rate = best_rate(double(per_call), bench_options().seconds, [&] {
    for (std::int64_t m = 0; m < per_call; ++m, ++moves) {
      const Eigen::Index k = moves % n;
      const T* u = pool[std::size_t(moves) % pool.size()].data();
      const T rho = loop.ratio(k, u);
      benchmark::DoNotOptimize(rho);
      loop.accept(k, u, rho);
    }
  });
  return cache[n] = {rate, loop.restarts()};
}

template <class T>
double sm_loop_rate(Eigen::Index n) {
  return sm_loop<T>(n).first;
}

template <class T>
void register_limits(Eigen::Index n) {
  const char* p = sizeof(T) == 4 ? "float" : "double";
  benchmark::RegisterBenchmark(fmt::format("limits/sm-loop-{}/N:{}", p, n).c_str(),
                               [n](benchmark::State& state) {
                                 const auto [rate, restarts] = sm_loop<T>(n);
                                 for (auto _ : state) benchmark::DoNotOptimize(rate);
                                 state.counters["moves_per_s"] = rate;
                                 state.counters["ns_per_move"] = 1e9 / rate;
                                 state.counters["restarts"] = double(restarts);
                               })
      ->Iterations(1);
  benchmark::RegisterBenchmark(fmt::format("limits/gemm-{}/N:{}", p, n).c_str(),
                               [n](benchmark::State& state) {
                                 const double rate = gemm_rate<T>(n);
                                 for (auto _ : state) benchmark::DoNotOptimize(rate);
                                 state.counters["flops_per_s"] = rate;
                               })
      ->Iterations(1);
  benchmark::RegisterBenchmark(fmt::format("limits/gemv-ger-{}/N:{}", p, n).c_str(),
                               [n](benchmark::State& state) {
                                 const double rate = gemv_ger_rate<T>(n);
                                 for (auto _ : state) benchmark::DoNotOptimize(rate);
                                 state.counters["bytes_per_s"] = rate;
                                 state.counters["of_bandwidth"] = rate / triad_rate();
                               })
      ->Iterations(1);
}

/// The baseline's (sm's) moves/s per (N, precision) in this run, for vs_sm.
std::map<std::pair<Eigen::Index, Precision>, double>& sm_rates() {
  static std::map<std::pair<Eigen::Index, Precision>, double> rates;
  return rates;
}

/// The bound of a strategy's move rate (file comment), 0 when it has none.
double move_bound(const std::string& strategy, Precision p, Eigen::Index n) {
  const double n2 = double(n) * double(n);
  const bool single = p == Precision::single;
  switch (strategy_traits(strategy).move_bound) {
    case StrategyTraits::MoveBound::gemm:
      return (single ? gemm_rate<float>(n) : gemm_rate<double>(n)) / (4 * n2);
    case StrategyTraits::MoveBound::triad: return triad_rate() / (3 * n2 * (single ? 4 : 8));
    case StrategyTraits::MoveBound::none: break;
  }
  return 0;
}

void walk(benchmark::State& state, const std::string& strategy, const UpdaterOptions& options,
          Eigen::Index n) {
  const WalkData& data = walk_data(n);
  const double bound = move_bound(strategy, options.precision, n);
  const std::unique_ptr<DeterminantUpdater> updater = make_updater(strategy, options);
  updater->reset(data.start);
  const bool windowed = strategy_traits(strategy).windowed;
  const bool baseline = strategy_traits(strategy).baseline;
  const Eigen::Index window = windowed ? options.k : 1;
  const std::size_t pool = data.pool.size();
  std::int64_t moves = 0;
  double cpu = 0;
  const std::int64_t block = windows_per_clock_read(n);
  for (auto _ : state) {
    const double t0 = thread_seconds();
    do {
      for (std::int64_t b = 0; b < block; ++b) {
        for (Eigen::Index w = 0; w < window; ++w, ++moves) {
          const Ratio r = updater->ratio(moves % n, data.pool[std::size_t(moves) % pool]);
          benchmark::DoNotOptimize(r);
          updater->accept();
        }
      }
    } while (thread_seconds() - t0 < bench_options().seconds);
    // The moves still in the window pay for their flush inside the timing:
    // a guard-shortened window ends anywhere in the K-move blocks above.
    updater->flush();
    cpu = thread_seconds() - t0;
  }
  state.SetItemsProcessed(moves);
  const double rate = double(moves) / cpu;
  const auto key = std::make_pair(n, options.precision);
  const double probe = options.precision == Precision::double_ ? sm_loop_rate<double>(n)
                                                               : sm_loop_rate<float>(n);
  state.counters["vs_probe"] = rate / probe;
  if (baseline) sm_rates()[key] = rate;
  if (bound > 0) {
    state.counters["bound"] = bound;
    state.counters["of_bound"] = rate / bound;
  }
  if (auto it = sm_rates().find(key); it != sm_rates().end() && !baseline) {
    state.counters["vs_sm"] = rate / it->second;
  }
  state.counters["N"] = double(n);
  if (windowed) state.counters["K"] = double(options.k);
  state.counters["breakdowns"] = double(updater->counters().breakdowns);
  // A delayed window shorter than K on average means the growth guard
  // flushed early (each flush then costs a GEMM of that smaller width).
  const auto flushes = updater->counters().flushes;
  if (windowed && flushes > 0) state.counters["window"] = double(moves) / double(flushes);
}

/// Every combination of a kernel's --kernel-option values, one value per
/// key, in the order given (a single empty set without the option).
std::vector<std::vector<std::pair<std::string, std::string>>> kernel_option_sets(
    const BenchOptions::Kernel& kernel) {
  std::vector<std::vector<std::pair<std::string, std::string>>> sets(1);
  for (const auto& [key, values] : kernel.options) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& set : sets)
      for (const std::string& value : values) {
        next.push_back(set);
        next.back().emplace_back(key, value);
      }
    sets = std::move(next);
  }
  return sets;
}

void register_walk(const std::string& strategy, const UpdaterOptions& options, Eigen::Index n) {
  // A kernel's options name its case: updates/<label>/<key>:<value>/N:<N>.
  std::string options_part;
  for (const auto& [key, value] : options.kernel_options) options_part += "/" + key + ":" + value;
  const std::string name = "updates/" + make_updater(strategy, options)->label() + options_part +
                           "/N:" + std::to_string(n);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    walk(state, strategy, options, n);
  })->Iterations(1)->Unit(benchmark::kMicrosecond);
}

/// Every (k, variant) a strategy's traits ask the benchmark to walk, at p.
void register_walks(const std::string& strategy, Eigen::Index n, Precision p) {
  const StrategyTraits& traits = strategy_traits(strategy);
  if (std::find(traits.precisions.begin(), traits.precisions.end(), p) == traits.precisions.end())
    return;
  UpdaterOptions o;
  o.precision = p;
  for (const auto& [k, variant] : traits.bench_walks) {
    o.k = k;
    o.variant = variant;
    register_walk(strategy, o, n);
  }
}

/// The CPU strategies at size n and precision p, in registration order (the
/// baseline before the others, for vs_sm).
void register_updates(Eigen::Index n, Precision p) {
  for (const std::string& strategy : known_strategies())
    if (!strategy_traits(strategy).needs_device) register_walks(strategy, n, p);
  // External kernels (--kernel), at the precisions they declare.
  for (const BenchOptions::Kernel& kernel : bench_options().kernels) {
    UpdaterOptions o;
    o.precision = p;
    o.library = kernel.library;
    const StrategyTraits traits = strategy_traits(library_strategy(), o);
    if (std::find(traits.precisions.begin(), traits.precisions.end(), p) == traits.precisions.end())
      continue;
    for (const auto& set : kernel_option_sets(kernel)) {
      o.kernel_options = set;
      register_walk(library_strategy(), o, n);
    }
  }
}

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

/// Seconds of one sm-double move (ratio + accept) at n: this run's walk when
/// it ran, otherwise a walk of its own.
double sm_move_seconds(Eigen::Index n) {
  if (auto it = sm_rates().find({n, Precision::double_}); it != sm_rates().end()) {
    return 1.0 / it->second;
  }
  const WalkData& data = walk_data(n);
  const std::unique_ptr<DeterminantUpdater> sm = make_updater(baseline_strategy(), UpdaterOptions{});
  sm->reset(data.start);
  std::int64_t moves = 0;
  const double t0 = thread_seconds();
  do {
    benchmark::DoNotOptimize(sm->ratio(moves % n, data.pool[std::size_t(moves) % data.pool.size()]));
    sm->accept();
  } while (++moves < 3 || thread_seconds() - t0 < bench_options().seconds);
  const double seconds = (thread_seconds() - t0) / double(moves);
  sm_rates()[{n, Precision::double_}] = 1.0 / seconds;
  return seconds;
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
}

/// Whether every --kernel takes every combination of its --kernel-option
/// values at every precision it declares (each checked by the kernel's own
/// create(), before any case runs); false with the kernel's message
/// otherwise, a kernel that crashes or hangs in create() included.
bool kernel_options_valid(const BenchOptions& options, std::string& error) {
  for (const BenchOptions::Kernel& kernel : options.kernels) {
    UpdaterOptions o;
    o.library = kernel.library;
    for (const Precision p : strategy_traits(library_strategy(), o).precisions) {
      o.precision = p;
      for (const auto& set : kernel_option_sets(kernel)) {
        o.kernel_options = set;
        try {
          make_updater(library_strategy(), o);
        } catch (const std::exception& bad) {
          return error = bad.what(), false;
        }
      }
    }
  }
  return true;
}

/// One --kernel-option=KEY=V1[,V2...] for the --kernel before it; false
/// with a message when malformed, when that kernel has KEY already, or when
/// a value repeats (two cases of one name).
bool take_kernel_option(const std::string& text, BenchOptions& options, std::string& error) {
  if (options.kernels.empty())
    return error = "--kernel-option '" + text + "' needs a --kernel before it", false;
  const auto split = text.find('=');
  std::vector<std::string> values;
  if (split != std::string::npos) {
    std::stringstream list(text.substr(split + 1));
    for (std::string item; std::getline(list, item, ',');) values.push_back(item);
  }
  // getline drops a last, empty item: "k=2," is caught by its comma.
  const bool empty_value = values.empty() || text.back() == ',' ||
                           std::find(values.begin(), values.end(), "") != values.end();
  if (split == 0 || split == std::string::npos || empty_value)
    return error = "--kernel-option takes KEY=VALUE[,VALUE...], got '" + text + "'", false;
  const std::string key = text.substr(0, split);
  if (text.find('/') != std::string::npos)
    return error = "--kernel-option '" + text + "': no '/' in a key or value (it names the case)",
           false;
  auto& kernel_options = options.kernels.back().options;
  for (const auto& [known, unused] : kernel_options)
    if (known == key) return error = "--kernel-option: '" + key + "' given twice for one --kernel", false;
  std::vector<std::string> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return error = "--kernel-option: a value of '" + key + "' repeats in '" + text + "'", false;
  kernel_options.emplace_back(key, std::move(values));
  return true;
}

/// Takes --n=LIST, --seconds=T, --kernel=PATH and --kernel-option=KEY=LIST
/// (also as two arguments) out of argv; false with a message for a bad value.
bool take_bench_options(int& argc, char** argv, BenchOptions& options, std::string& error) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string name = arg, value;
    const auto eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    if (name == "--benchmark_format" || name == "--benchmark_out_format") {
      if (value != "console" && value != "json" && value != "csv")
        return error = name + " takes console, json or csv, got '" + value + "'", false;
      (name == "--benchmark_format" ? options.display_format : options.file_format) = value;
    }
    if (name == "--benchmark_out" && !value.empty()) options.file_out = true;
    if (name != "--n" && name != "--seconds" && name != "--kernel" && name != "--kernel-option") {
      argv[out++] = argv[i];
      continue;
    }
    if (eq == std::string::npos) {
      if (i + 1 >= argc) return error = name + " needs a value", false;
      value = argv[++i];
    }
    if (name == "--kernel") {
      UpdaterOptions o;
      o.library = value;
      try {
        strategy_traits(library_strategy(), o);  // loads and validates the library
      } catch (const std::invalid_argument& bad) {
        return error = bad.what(), false;
      }
      options.kernels.push_back({value, {}});
      continue;
    }
    if (name == "--kernel-option") {
      if (!take_kernel_option(value, options, error)) return false;
      continue;
    }
    try {
      if (name == "--seconds") {
        std::size_t used = 0;
        options.seconds = std::stod(value, &used);
        if (used != value.size() || !(options.seconds > 0) || options.seconds > 60)
          throw std::invalid_argument("range");
      } else {
        options.sizes.clear();
        std::stringstream list(value);
        for (std::string item; std::getline(list, item, ',');) {
          std::size_t used = 0;
          const long long n = std::stoll(item, &used);
          if (used != item.size() || n < 2 || n > 16384) throw std::invalid_argument("range");
          options.sizes.push_back(Eigen::Index(n));
        }
        if (options.sizes.empty()) throw std::invalid_argument("empty");
      }
    } catch (const std::exception&) {
      error = name == "--n" ? "--n takes sizes 2..16384 separated by commas, got '" + value + "'"
                            : "--seconds takes a number in (0, 60], got '" + value + "'";
      return false;
    }
  }
  argc = out;
  return kernel_options_valid(options, error);
}

// Google Benchmark's CSV reporter (deprecated, to be removed) writes its
// header from the first case it sees and aborts ("All counters must be
// present in each run") when a later case carries a counter the header
// lacks; our cases carry different ones (bytes for the triad, flops for GEMM
// and the updates). This one holds every run back and writes them when the
// run ends, under one header: the library's columns, then the union of the
// counters (items_per_second and bytes_per_second among them), a case
// without one leaving its field empty. Names and texts are quoted as the
// library quotes them; numbers are written to round-trip.
class UnionCsvReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context& context) override {
    PrintBasicContext(&GetErrorStream(), context);
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    runs_.insert(runs_.end(), runs.begin(), runs.end());
  }
  void Finalize() override {
    std::set<std::string> counters;
    for (const Run& run : runs_)
      for (const auto& counter : run.counters) counters.insert(counter.first);
    std::ostream& out = GetOutputStream();
    out << "name,iterations,real_time,cpu_time,time_unit,label,error_occurred,error_message";
    for (const std::string& name : counters) out << ',' << quoted(name);
    out << '\n';
    for (const Run& run : runs_) {
      out << quoted(run.benchmark_name()) << ',';
      if (run.error_occurred) {
        out << ",,,,";
      } else {
        out << fmt::format("{},{},{},{},", run.iterations, run.GetAdjustedRealTime(),
                           run.GetAdjustedCPUTime(), benchmark::GetTimeUnitString(run.time_unit));
      }
      out << quoted(run.report_label) << ',' << (run.error_occurred ? "true" : "false") << ','
          << quoted(run.error_message);
      for (const std::string& name : counters) {
        out << ',';
        const auto it = run.counters.find(name);
        if (it != run.counters.end()) out << fmt::format("{}", double(it->second.value));
      }
      out << '\n';
    }
    out.flush();
  }

 private:
  /// "text", an inner " doubled (RFC 4180).
  static std::string quoted(const std::string& text) {
    std::string q = "\"";
    for (const char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + '"';
  }

  std::vector<Run> runs_;
};

/// Our reporter where csv is asked for; nullptr lets the library build its own.
std::unique_ptr<benchmark::BenchmarkReporter> csv_reporter_if(bool csv) {
  return csv ? std::make_unique<UnionCsvReporter>() : nullptr;
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
