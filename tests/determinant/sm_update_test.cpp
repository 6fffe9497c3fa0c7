// The Sherman-Morrison kernel shared by sm, splitting and delayed's windows
// of one move (sm_update), on its three paths (GEMV and GER as plain loops
// up to kSmUpdateSmallN, BLAS up to kSmUpdateBlockedN, blocks of four
// columns from there, with a remainder when 4 does not divide N), against
// the same formula evaluated in long double.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "slaterlab/strategies/determinant/linalg.hpp"

namespace slaterlab {
namespace {

using Long = long double;

template <class T>
void check_sm_update(std::uint64_t seed) {
  // Sizes on both sides of the small-N crossover, and a few from the
  // blocked one on (each a few hundred microseconds in long double).
  const Eigen::Index n = *rc::gen::weightedOneOf<Eigen::Index>(
      {{4, rc::gen::inRange<Eigen::Index>(2, 2 * kSmUpdateSmallN + 8)},
       {1, rc::gen::inRange<Eigen::Index>(kSmUpdateBlockedN, kSmUpdateBlockedN + 8)}});
  // k at the ends as often as inside: the last, partial block of four
  // columns has its own branch for it.
  const Eigen::Index last = n - 1, before_last = std::max<Eigen::Index>(n - 2, 0);
  const Eigen::Index k =
      *rc::gen::oneOf(rc::gen::just(Eigen::Index(0)), rc::gen::just(last),
                      rc::gen::just(before_last), rc::gen::inRange<Eigen::Index>(0, n));
  const T scale = *rc::gen::element(T(1), T(0.5));
  const double den = *rc::gen::element(-3.0, -0.2, 0.01, 0.7, 5.0);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  MatrixX<T> ainvt(n, n);
  VectorX<T> u(n);
  for (Eigen::Index i = 0; i < n * n; ++i) ainvt.data()[i] = T(normal(rng));
  for (Eigen::Index i = 0; i < n; ++i) u(i) = T(normal(rng));
  const MatrixX<T> before = ainvt;
  VectorX<T> x, row;
  sm_update<T>(ainvt, k, u.data(), scale, den, x, row);

  // x_j = scale (sum_m A_mj u_m - delta_jk), then A_ij += alpha x_j A_ik with
  // alpha = -1/den (A = Ainv^T). Rounding, per entry: gamma_N = N eps for the
  // dot product of length N, one eps each for the subtraction of 1, alpha,
  // the two products and the sum (scale is a power of 2: exact), so
  //   |computed - exact| <= (N + 5) eps B_ij,
  //   B_ij = |A_ij| + |alpha| |A_ik| (sum_m |A_mj| |u_m| + 1),
  // to first order in eps; the test allows twice that.
  const Long alpha = Long(-1) / Long(den);
  const Long eps = std::numeric_limits<T>::epsilon();
  for (Eigen::Index j = 0; j < n; ++j) {
    Long dot = 0, magnitude = 0;
    for (Eigen::Index m = 0; m < n; ++m) {
      dot += Long(before(m, j)) * Long(u(m));
      magnitude += std::abs(Long(before(m, j)) * Long(u(m)));
    }
    const Long xj = Long(scale) * (dot - (j == k ? 1 : 0));
    for (Eigen::Index i = 0; i < n; ++i) {
      const Long exact = Long(before(i, j)) + alpha * xj * Long(before(i, k));
      const Long bound = std::abs(Long(before(i, j))) +
                         std::abs(alpha * Long(before(i, k))) * (magnitude + 1);
      RC_ASSERT(std::abs(Long(ainvt(i, j)) - exact) <= 2 * Long(n + 5) * eps * bound);
    }
  }
}

RC_GTEST_PROP(SmUpdate, DoubleMatchesTheFormulaOnEachPath, (std::uint64_t seed)) {
  check_sm_update<double>(seed);
}

RC_GTEST_PROP(SmUpdate, FloatMatchesTheFormulaOnEachPath, (std::uint64_t seed)) {
  check_sm_update<float>(seed);
}

}  // namespace
}  // namespace slaterlab
