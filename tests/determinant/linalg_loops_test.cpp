// The plain loops (Kernels::loops) against BLAS and LAPACK (Kernels::blas)
// for each operation of blocks::, at sizes on both sides of the crossovers
// where Kernels::by_size switches (blocks::kLoopLevel2, kLoopTrmm,
// kLoopFactor): the two
// agree within twice one path's first-order rounding bound, derived next to
// each property (u the unit roundoff, gamma_n = n u to first order,
// magnitudes and exact values in long double). Entries an operation must
// not read hold NaN, and entries it must not write are checked unchanged.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "slaterlab/strategies/determinant/linalg.hpp"

namespace slaterlab {
namespace {

using Index = Eigen::Index;
using Long = long double;

template <class T>
Long unit_roundoff() {
  return Long(std::numeric_limits<T>::epsilon()) / 2;
}

template <class T>
std::vector<T> gaussian(Index count, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<T> v(std::size_t(count), T(0));
  for (T& e : v) e = T(normal(rng));
  return v;
}

/// A matrix dimension in 1 .. largest, uniform (RapidCheck would scale
/// inRange by its size, leaving most cases far below the crossovers).
Index dimension(Index largest) {
  return *rc::gen::resize(100, rc::gen::inRange<Index>(1, largest + 1));
}

/// An extra row or two in the leading dimension, so that strides are tested.
Index leading(Index rows) { return rows + *rc::gen::inRange<Index>(0, 3); }

template <class T>
void check_gemv(std::uint64_t seed) {
  // rows cols up to 40^2, above and below kLoopLevel2 = 16^2.
  const bool trans = *rc::gen::arbitrary<bool>();
  const Index rows = dimension(40);
  const Index cols = dimension(40);
  const T alpha = *rc::gen::element(T(1), T(-1), T(0.75));
  const T beta = *rc::gen::element(T(0), T(1), T(-0.5));
  RC_CLASSIFY(rows * cols > blocks::kLoopLevel2, "above the crossover");
  const Index lda = leading(rows);
  std::mt19937_64 rng(seed);
  const std::vector<T> a = gaussian<T>(lda * cols, rng);
  const Index len = trans ? rows : cols, out = trans ? cols : rows;
  const std::vector<T> x = gaussian<T>(len, rng);
  const std::vector<T> y = gaussian<T>(out, rng);
  std::vector<T> by_loops = y, by_blas = y;
  blocks::gemv<T, Kernels::loops>(trans, rows, cols, alpha, a.data(), lda, x.data(), beta, by_loops.data());
  blocks::gemv<T, Kernels::blas>(trans, rows, cols, alpha, a.data(), lda, x.data(), beta, by_blas.data());
  // y_i = alpha sum_l op(A)_il x_l + beta y_i: len products summed, alpha,
  // beta y_i and the last sum, so |computed - exact| <= gamma_{len+3} M_i,
  // M_i = |alpha| sum_l |op(A)_il x_l| + |beta y_i|, for each path; the two
  // differ by twice that, and the test allows twice the difference.
  for (Index i = 0; i < out; ++i) {
    Long magnitude = std::abs(Long(beta) * Long(y[std::size_t(i)]));
    for (Index l = 0; l < len; ++l) {
      const T entry = trans ? a[std::size_t(l + i * lda)] : a[std::size_t(i + l * lda)];
      magnitude += std::abs(Long(alpha) * Long(entry) * Long(x[std::size_t(l)]));
    }
    const Long bound = 4 * Long(len + 3) * unit_roundoff<T>() * magnitude;
    RC_ASSERT(std::abs(Long(by_loops[std::size_t(i)]) - Long(by_blas[std::size_t(i)])) <= bound);
  }
}

template <class T>
void check_ger(std::uint64_t seed) {
  const Index rows = dimension(40);
  const Index cols = dimension(40);
  const T alpha = *rc::gen::element(T(1), T(-1), T(0.75));
  RC_CLASSIFY(rows * cols > blocks::kLoopLevel2, "above the crossover");
  const Index lda = leading(rows);
  std::mt19937_64 rng(seed);
  const std::vector<T> a = gaussian<T>(lda * cols, rng);
  const std::vector<T> x = gaussian<T>(rows, rng);
  const std::vector<T> y = gaussian<T>(cols, rng);
  std::vector<T> by_loops = a, by_blas = a;
  blocks::ger<T, Kernels::loops>(rows, cols, alpha, x.data(), y.data(), by_loops.data(), lda);
  blocks::ger<T, Kernels::blas>(rows, cols, alpha, x.data(), y.data(), by_blas.data(), lda);
  // A_ij + alpha x_i y_j: a product, a product and a sum, gamma_3 (|A_ij| +
  // |alpha x_i y_j|) per path; twice the two paths' difference allowed.
  // Rows beyond `rows` (the leading dimension's padding) stay as they were.
  for (Index j = 0; j < cols; ++j) {
    for (Index i = 0; i < lda; ++i) {
      const std::size_t e = std::size_t(i + j * lda);
      if (i >= rows) {
        RC_ASSERT(by_loops[e] == a[e]);
        continue;
      }
      const Long magnitude = std::abs(Long(a[e])) + std::abs(Long(alpha) * Long(x[std::size_t(i)]) *
                                                            Long(y[std::size_t(j)]));
      RC_ASSERT(std::abs(Long(by_loops[e]) - Long(by_blas[e])) <=
                4 * 3 * unit_roundoff<T>() * magnitude);
    }
  }
}

/// For an LU with partial pivoting (LAPACK's ipiv) of a, n x n with leading
/// dimension lda, in lu: true when |P A - L U| <= 2 gamma_n |L| |U| entry by
/// entry (Higham, Accuracy and Stability, Thm 9.3: gamma_n per entry; twice
/// allowed) and every |L_ij| <= 1 (partial pivoting).
template <class T>
bool is_pivoted_lu(const std::vector<T>& a, const std::vector<T>& lu, const std::vector<int>& ipiv,
                   Index n, Index lda) {
  std::vector<Long> pa(std::size_t(n * n));
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < n; ++i) pa[std::size_t(i + j * n)] = Long(a[std::size_t(i + j * lda)]);
  for (Index i = 0; i < n; ++i) {
    const Index p = ipiv[std::size_t(i)] - 1;
    if (p < i || p >= n) return false;
    for (Index j = 0; j < n; ++j) std::swap(pa[std::size_t(i + j * n)], pa[std::size_t(p + j * n)]);
  }
  const auto l = [&](Index i, Index k) {
    return i == k ? Long(1) : i > k ? Long(lu[std::size_t(i + k * lda)]) : Long(0);
  };
  const auto u = [&](Index k, Index j) { return k <= j ? Long(lu[std::size_t(k + j * lda)]) : Long(0); };
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < n; ++i) {
      if (std::abs(l(i, j)) > 1) return false;
      Long product = 0, magnitude = 0;
      for (Index k = 0; k <= std::min(i, j); ++k) {
        product += l(i, k) * u(k, j);
        magnitude += std::abs(l(i, k) * u(k, j));
      }
      if (std::abs(product - pa[std::size_t(i + j * n)]) > 2 * Long(n) * unit_roundoff<T>() * magnitude)
        return false;
    }
  }
  return true;
}

template <class T>
void check_getrf(std::uint64_t seed) {
  // n^3 / 3 up to 48^3 / 3, above and below kLoopFactor (n = 32).
  const Index n = dimension(48);
  RC_CLASSIFY(n * n * n / 3 > blocks::kLoopFactor, "above the crossover");
  const Index lda = leading(n);
  std::mt19937_64 rng(seed);
  const std::vector<T> a = gaussian<T>(lda * n, rng);
  std::vector<T> by_loops = a, by_blas = a;
  std::vector<int> pivots_loops(static_cast<std::size_t>(n)), pivots_blas = pivots_loops;
  // Gaussian matrices are regular with probability 1: no zero pivot.
  const int info_loops = blocks::getrf<T, Kernels::loops>(n, by_loops.data(), lda, pivots_loops.data());
  const int info_blas = blocks::getrf<T, Kernels::blas>(n, by_blas.data(), lda, pivots_blas.data());
  RC_ASSERT(info_loops == 0);
  RC_ASSERT(info_blas == 0);
  // Both backward stable with partial pivoting. (Their pivots may differ
  // where two candidates tie to rounding, so the factors are not compared.)
  RC_ASSERT(is_pivoted_lu(a, by_loops, pivots_loops, n, lda));
  RC_ASSERT(is_pivoted_lu(a, by_blas, pivots_blas, n, lda));
}

/// A triangle for trtri and trmm: off-diagonal entries N(0, 1) / n (a
/// moderately conditioned triangle), diagonal +-(1 + |N(0, 1)|), or NaN
/// where unit; the other triangle NaN (never read).
template <class T>
std::vector<T> triangle(bool lower, bool unit, Index n, Index ld, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<T> t(std::size_t(ld * n), std::numeric_limits<T>::quiet_NaN());
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < n; ++i) {
      const double g = normal(rng);
      if (i == j && !unit) t[std::size_t(i + j * ld)] = T(g < 0 ? g - 1 : g + 1);
      if (lower ? i > j : i < j) t[std::size_t(i + j * ld)] = T(g / double(n));
    }
  }
  return t;
}

/// Entry (i, j) of the triangle t as trtri and trmm read it.
template <class T>
Long triangle_entry(const std::vector<T>& t, bool lower, bool unit, Index ld, Index i, Index j) {
  if (i == j) return unit ? Long(1) : Long(t[std::size_t(i + j * ld)]);
  return (lower ? i > j : i < j) ? Long(t[std::size_t(i + j * ld)]) : Long(0);
}

template <class T>
void check_trtri(std::uint64_t seed) {
  // n^3 / 6 up to 56^3 / 6, above and below kLoopFactor (n = 40).
  const bool lower = *rc::gen::arbitrary<bool>();
  const bool unit = *rc::gen::arbitrary<bool>();
  const Index n = dimension(56);
  RC_CLASSIFY(n * n * n / 6 > blocks::kLoopFactor, "above the crossover");
  const Index ld = leading(n);
  std::mt19937_64 rng(seed);
  const std::vector<T> t = triangle<T>(lower, unit, n, ld, rng);
  std::vector<T> by_loops = t, by_blas = t;
  const bool inverted_by_loops = blocks::trtri<T, Kernels::loops>(lower, unit, n, by_loops.data(), ld);
  const bool inverted_by_blas = blocks::trtri<T, Kernels::blas>(lower, unit, n, by_blas.data(), ld);
  RC_ASSERT(inverted_by_loops);
  RC_ASSERT(inverted_by_blas);
  // Each path's X satisfies |X T - I| <= c_n u |X| |T| (Du Croz and Higham,
  // docs/references.md; c_n = n + 2 for the column method: a triangular
  // product of at most n terms, the reciprocal and the scaling), so
  // X - T^{-1} = (X T - I) T^{-1} gives |X - T^{-1}| <= c_n u |X| |T| |X|
  // to first order; the paths differ by twice that, twice allowed.
  std::vector<Long> xt(std::size_t(n * n), 0), bound(std::size_t(n * n), 0);
  for (Index j = 0; j < n; ++j)
    for (Index l = 0; l < n; ++l)
      for (Index i = 0; i < n; ++i)
        xt[std::size_t(i + j * n)] += std::abs(triangle_entry(by_blas, lower, unit, ld, i, l) *
                                               triangle_entry(t, lower, unit, ld, l, j));
  for (Index j = 0; j < n; ++j)
    for (Index l = 0; l < n; ++l)
      for (Index i = 0; i < n; ++i)
        bound[std::size_t(i + j * n)] +=
            xt[std::size_t(i + l * n)] * std::abs(triangle_entry(by_blas, lower, unit, ld, l, j));
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < ld; ++i) {
      const std::size_t e = std::size_t(i + j * ld);
      const bool inside = i < n && (i == j ? !unit : lower ? i > j : i < j);
      if (!inside) {  // untouched: the other triangle, a unit diagonal, the padding
        RC_ASSERT(std::isnan(by_loops[e]) == std::isnan(t[e]));
        continue;
      }
      RC_ASSERT(std::abs(Long(by_loops[e]) - Long(by_blas[e])) <=
                4 * Long(n + 2) * unit_roundoff<T>() * bound[std::size_t(i + j * n)]);
    }
  }
}

template <class T>
void check_trmm(std::uint64_t seed) {
  // side^2 other / 2 up to 24^3 / 2, above and below kLoopTrmm = 16 8^2 / 2.
  const bool left = *rc::gen::arbitrary<bool>();
  const bool lower = *rc::gen::arbitrary<bool>();
  const bool trans = *rc::gen::arbitrary<bool>();
  const bool unit = *rc::gen::arbitrary<bool>();
  const Index rows = dimension(24);
  const Index cols = dimension(24);
  const T alpha = *rc::gen::element(T(1), T(-1), T(0.75));
  const Index side = left ? rows : cols;
  RC_CLASSIFY(side * side * (left ? cols : rows) / 2 > blocks::kLoopTrmm, "above the crossover");
  const Index ldt = leading(side), ldx = leading(rows);
  std::mt19937_64 rng(seed);
  const std::vector<T> t = triangle<T>(lower, unit, side, ldt, rng);
  const std::vector<T> x = gaussian<T>(ldx * cols, rng);
  std::vector<T> by_loops = x, by_blas = x;
  blocks::trmm<T, Kernels::loops>(left, lower, trans, unit, rows, cols, alpha, t.data(), ldt, by_loops.data(), ldx);
  blocks::trmm<T, Kernels::blas>(left, lower, trans, unit, rows, cols, alpha, t.data(), ldt, by_blas.data(), ldx);
  const auto op = [&](Index i, Index l) {
    return trans ? triangle_entry(t, lower, unit, ldt, l, i) : triangle_entry(t, lower, unit, ldt, i, l);
  };
  // A product of at most `side` terms and alpha: gamma_{side+2} (|alpha|
  // |op(T)| |X| or |X| |op(T)|) per path; the difference twice, twice allowed.
  for (Index j = 0; j < cols; ++j) {
    for (Index i = 0; i < rows; ++i) {
      Long magnitude = 0;
      for (Index l = 0; l < side; ++l) {
        magnitude += left ? std::abs(op(i, l) * Long(x[std::size_t(l + j * ldx)]))
                          : std::abs(Long(x[std::size_t(i + l * ldx)]) * op(l, j));
      }
      magnitude *= std::abs(Long(alpha));
      const std::size_t e = std::size_t(i + j * ldx);
      RC_ASSERT(std::abs(Long(by_loops[e]) - Long(by_blas[e])) <=
                4 * Long(side + 2) * unit_roundoff<T>() * magnitude);
    }
  }
}

RC_GTEST_PROP(LinalgLoops, GemvDoubleAgreesWithBlas, (std::uint64_t seed)) { check_gemv<double>(seed); }
RC_GTEST_PROP(LinalgLoops, GemvFloatAgreesWithBlas, (std::uint64_t seed)) { check_gemv<float>(seed); }
RC_GTEST_PROP(LinalgLoops, GerDoubleAgreesWithBlas, (std::uint64_t seed)) { check_ger<double>(seed); }
RC_GTEST_PROP(LinalgLoops, GerFloatAgreesWithBlas, (std::uint64_t seed)) { check_ger<float>(seed); }
RC_GTEST_PROP(LinalgLoops, GetrfDoubleIsAPivotedLuAsLapacks, (std::uint64_t seed)) {
  check_getrf<double>(seed);
}
RC_GTEST_PROP(LinalgLoops, GetrfFloatIsAPivotedLuAsLapacks, (std::uint64_t seed)) {
  check_getrf<float>(seed);
}
RC_GTEST_PROP(LinalgLoops, TrtriDoubleAgreesWithLapack, (std::uint64_t seed)) { check_trtri<double>(seed); }
RC_GTEST_PROP(LinalgLoops, TrtriFloatAgreesWithLapack, (std::uint64_t seed)) { check_trtri<float>(seed); }
RC_GTEST_PROP(LinalgLoops, TrmmDoubleAgreesWithBlas, (std::uint64_t seed)) { check_trmm<double>(seed); }
RC_GTEST_PROP(LinalgLoops, TrmmFloatAgreesWithBlas, (std::uint64_t seed)) { check_trmm<float>(seed); }

// transposed: the tiled copy is Eigen's transpose (and its cast) bit for
// bit, for shapes on both sides of the 32 x 32 tile, square or not; a
// conversion to a wider type is exact, so there is nothing to tolerate.
template <class To, class From>
void check_transposed() {
  const Index rows = *rc::gen::inRange<Index>(1, 100);
  const Index cols = *rc::gen::inRange<Index>(1, 100);
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  const std::vector<From> entries = gaussian<From>(rows * cols, rng);
  const MatrixX<From> a = Eigen::Map<const MatrixX<From>>(entries.data(), rows, cols);
  const MatrixX<To> expected = a.transpose().template cast<To>();
  const MatrixX<To> t = transposed<To>(a);
  RC_ASSERT(t.rows() == cols);
  RC_ASSERT(t.cols() == rows);
  RC_ASSERT(std::equal(t.data(), t.data() + t.size(), expected.data()));
}

template <class T>
void check_skinny_product(std::uint64_t seed) {
  // C = P^T A against BLAS's GEMM: m up to 70 covers the register tiles of
  // 4, 2 and 1 vectors of rows and their remainders (8 doubles or 16 floats
  // a vector), cols up to 30 the blocks of 12 columns and the single ones.
  // Now and then an empty inner dimension (C = 0, as GEMM gives).
  const Index n = *rc::gen::weightedOneOf<Index>(
      {{1, rc::gen::just<Index>(0)}, {19, rc::gen::resize(100, rc::gen::inRange<Index>(1, 151))}});
  const Index m = dimension(70);
  const Index cols = dimension(30);
  RC_CLASSIFY(n == 0, "empty inner dimension");
  const Index ldp = leading(std::max<Index>(n, 1)), lda = leading(std::max<Index>(n, 1)),
              ldc = leading(m);
  std::mt19937_64 rng(seed);
  const std::vector<T> p = gaussian<T>(ldp * m, rng);
  const std::vector<T> a = gaussian<T>(lda * cols, rng);
  const std::vector<T> c0 = gaussian<T>(ldc * cols, rng);  // C is written, never read
  std::vector<T> by_kernel = c0, by_blas = c0, packed;
  blocks::skinny_transposed_product<T>(n, cols, m, p.data(), ldp, a.data(), lda, by_kernel.data(),
                                       ldc, packed);
  blas::gemm<T>(true, false, m, cols, n, T(1), p.data(), ldp, a.data(), lda, T(0), by_blas.data(),
                ldc);
  // C_ij = sum_l P_li A_lj, n products summed: gamma_n sum_l |P_li A_lj| per
  // path; twice the two paths' difference allowed. The leading dimension's
  // padding rows stay as they were.
  for (Index j = 0; j < cols; ++j) {
    for (Index i = 0; i < ldc; ++i) {
      const std::size_t e = std::size_t(i + j * ldc);
      if (i >= m) {
        RC_ASSERT(by_kernel[e] == c0[e]);
        continue;
      }
      Long magnitude = 0;
      for (Index l = 0; l < n; ++l)
        magnitude += std::abs(Long(p[std::size_t(l + i * ldp)]) * Long(a[std::size_t(l + j * lda)]));
      const Long bound = 4 * Long(n) * unit_roundoff<T>() * magnitude;
      RC_ASSERT(std::abs(Long(by_kernel[e]) - Long(by_blas[e])) <= bound);
    }
  }
}

RC_GTEST_PROP(LinalgLoops, SkinnyTransposedProductIsGemmDouble, (std::uint64_t seed)) {
  check_skinny_product<double>(seed);
}
RC_GTEST_PROP(LinalgLoops, SkinnyTransposedProductIsGemmFloat, (std::uint64_t seed)) {
  check_skinny_product<float>(seed);
}

RC_GTEST_PROP(LinalgLoops, TransposedIsEigensTransposeDouble, ()) { check_transposed<double, double>(); }
RC_GTEST_PROP(LinalgLoops, TransposedIsEigensTransposeFloat, ()) { check_transposed<float, float>(); }
RC_GTEST_PROP(LinalgLoops, TransposedIsEigensTransposeFloatToDouble, ()) { check_transposed<double, float>(); }

}  // namespace
}  // namespace slaterlab
