#pragma once
// What slaterlab bench's cases measure with: the calling thread's CPU time,
// the best rate of repeated calls, random N(0, 1) matrices of a fixed seed,
// and the update walk's data (a start matrix and its pool of N + 1 new
// columns, bench.cpp's file comment) with how often a walk reads the clock.
// Internal to verify/cli.

#include <time.h>

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "slaterlab/strategies/determinant/linalg.hpp"

namespace slaterlab::bench_detail {

/// CPU time of the calling thread, the clock Google Benchmark reports by default.
inline double thread_seconds() {
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

/// The matrix a walk starts from and its pool of N + 1 new columns.
struct WalkData {
  Eigen::MatrixXd start;
  std::vector<Eigen::VectorXd> pool;
};

/// Data for size n; only the latest size is kept (N = 4096 holds 256 MiB).
const WalkData& walk_data(Eigen::Index n);

/// Windows walked between two reads of the CPU clock: a read costs about a
/// small-N move (a system call), so at small N one read spans about N^2 =
/// 2^16 entries of work (a few tens of µs).
std::int64_t windows_per_clock_read(Eigen::Index n);

}  // namespace slaterlab::bench_detail
