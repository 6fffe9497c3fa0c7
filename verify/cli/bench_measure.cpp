#include "verify/cli/bench_measure.hpp"

namespace slaterlab::bench_detail {

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

}  // namespace slaterlab::bench_detail
