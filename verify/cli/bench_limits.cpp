#include "verify/cli/bench_limits.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "slaterlab/strategies/determinant/linalg.hpp"
#include "verify/cli/bench_args.hpp"
#include "verify/cli/bench_measure.hpp"

namespace slaterlab::bench_detail {
namespace {

constexpr Eigen::Index kGemmDepth = 256;  // the flush's inner dimension at the largest K

}  // namespace

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

namespace {

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

}  // namespace

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

template double gemm_rate<float>(Eigen::Index);
template double gemm_rate<double>(Eigen::Index);
template double sm_loop_rate<float>(Eigen::Index);
template double sm_loop_rate<double>(Eigen::Index);
template void register_limits<float>(Eigen::Index);
template void register_limits<double>(Eigen::Index);

}  // namespace slaterlab::bench_detail
