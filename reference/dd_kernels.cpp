// Double-double kernels. This file is compiled with -ffp-contract=off (see
// CMakeLists.txt): contracting p = a*b; s + p into one FMA would make TwoSum's
// "error" wrong. The loops are plain axpy forms over contiguous columns so
// that the compiler vectorises them; target_clones builds AVX-512, AVX2+FMA
// and baseline versions and picks one at load time.

#include "slaterlab/reference/dd_kernels.hpp"

#include <arb.h>
#include <arf.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <vector>

namespace slaterlab::reference::dd {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SLATERLAB_DD_CLONES __attribute__((target_clones("avx512f", "fma", "default")))
#else
#define SLATERLAB_DD_CLONES
#endif

void ScaledProduct::multiply(Dd factor) {
  m_ = mul(m_, factor);
  int e = 0;
  const double scaled = std::frexp(m_.hi, &e);  // exact: a power-of-two rescale
  m_ = {scaled, std::ldexp(m_.lo, -e)};
  e_ += e;
}

Dd log_abs(Dd x, std::int64_t exponent2) {
  constexpr slong kBits = 128;
  arb_t v, two;
  arb_init(v);
  arb_init(two);
  arb_set_d(v, x.hi);
  arb_set_d(two, x.lo);
  arb_add(v, v, two, kBits);  // exact: hi + lo fits in 128 bits
  arb_abs(v, v);
  arb_log(v, v, kBits);
  arb_const_log2(two, kBits);
  arb_mul_si(two, two, slong(exponent2), kBits);
  arb_add(v, v, two, kBits);
  arf_t mid, rest;
  arf_init(mid);
  arf_init(rest);
  const double hi = arf_get_d(arb_midref(v), ARF_RND_NEAR);
  arf_set_d(mid, hi);
  arf_sub(rest, arb_midref(v), mid, kBits, ARF_RND_NEAR);
  const double lo = arf_get_d(rest, ARF_RND_NEAR);
  arf_clear(mid);
  arf_clear(rest);
  arb_clear(v);
  arb_clear(two);
  return fast_two_sum(hi, lo);
}

namespace {

/// s + c += a * b for one entry: TwoProd, TwoSum, the errors gathered in c.
inline void dot2_step(double a, double b, double& s, double& c) {
  const double p = a * b;
  const double pe = std::fma(a, b, -p);
  const double t = s + p;
  const double bb = t - s;
  const double se = (s - (t - bb)) + (p - bb);
  s = t;
  c += se + pe;
}

/// s + c += a * b over n entries.
SLATERLAB_DD_CLONES
void dot2_axpy(int n, double b, const double* __restrict a, double* __restrict s,
               double* __restrict c) {
  for (int i = 0; i < n; ++i) dot2_step(a[i], b, s[i], c[i]);
}

/// dot2_axpy for four columns in turn (a0 b0, then a1 b1, ...), s and c held
/// in registers across the four; with kLow, also c += a bl for the
/// columns' low parts in plain double (one FMA each) while the entries are
/// loaded. Inlined into each of the two cloned entry points below, so that
/// each loop vectorises without a branch in it.
template <bool kLow>
__attribute__((always_inline)) inline void dot2_four_columns(
    int n, const double* b, const double* bl, const double* __restrict a0,
    const double* __restrict a1, const double* __restrict a2, const double* __restrict a3,
    double* __restrict s, double* __restrict c) {
  for (int i = 0; i < n; ++i) {
    double si = s[i], ci = c[i];
    dot2_step(a0[i], b[0], si, ci);
    dot2_step(a1[i], b[1], si, ci);
    dot2_step(a2[i], b[2], si, ci);
    dot2_step(a3[i], b[3], si, ci);
    if constexpr (kLow) {
      ci = std::fma(a0[i], bl[0], ci);
      ci = std::fma(a1[i], bl[1], ci);
      ci = std::fma(a2[i], bl[2], ci);
      ci = std::fma(a3[i], bl[3], ci);
    }
    s[i] = si;
    c[i] = ci;
  }
}

SLATERLAB_DD_CLONES
void dot2_axpy4(int n, const double* b, const double* a0, const double* a1, const double* a2,
                const double* a3, double* s, double* c) {
  dot2_four_columns<false>(n, b, nullptr, a0, a1, a2, a3, s, c);
}

SLATERLAB_DD_CLONES
void dot2_axpy4_low(int n, const double* b, const double* bl, const double* a0, const double* a1,
                    const double* a2, const double* a3, double* s, double* c) {
  dot2_four_columns<true>(n, b, bl, a0, a1, a2, a3, s, c);
}

/// c += a * b over n entries in plain double.
SLATERLAB_DD_CLONES
void axpy(int n, double b, const double* __restrict a, double* __restrict c) {
  for (int i = 0; i < n; ++i) c[i] += a[i] * b;
}

/// (h, l) = fast_two_sum(s, c) entrywise: |c| is far below |s| or s is 0.
void normalise(int n, const double* s, const double* c, double* h, double* l) {
  for (int i = 0; i < n; ++i) {
    const Dd r = two_sum(s[i], c[i]);
    h[i] = r.hi;
    l[i] = r.lo;
  }
}

/// (s, c1) += -x with both TwoSums error-free, the second's error into c2.
SLATERLAB_DD_CLONES
void cascade_step(int m, const double* __restrict x, double* __restrict s, double* __restrict c1,
                  double* __restrict c2, double* __restrict abs_sum) {
  for (int i = 0; i < m; ++i) {
    const double y = -x[i];
    const double t = s[i] + y;
    const double tb = t - s[i];
    const double e = (s[i] - (t - tb)) + (y - tb);
    s[i] = t;
    const double v = c1[i] + e;
    const double vb = v - c1[i];
    const double d = (c1[i] - (v - vb)) + (e - vb);
    c1[i] = v;
    c2[i] += d;
    abs_sum[i] += std::abs(y);
  }
}

}  // namespace

// cascade_difference's bound, for k = terms subtractions from s_0 = c0 with
// S = |c0| + sum |x|: |s_j| <= (1 + u)^j S, so each TwoSum error |e_j| <=
// u (1 + u)^k S and |c1_j| <= j u (1 + u)^{2k} S; the second TwoSum's errors
// d_j <= u |c1_j| sum to at most k (k + 1) / 2 u^2 (1 + u)^{2k} S, and c2, their
// plain sum, errs by gamma_k times that. The exact value is h + e + sum d_j
// with (h, e) = TwoSum(s_k, c1_k); l = fl(e + c2) adds u |e + c2| <= u^2 |h| +
// u (1 + gamma_k) sum |d_j|. Together, for k <= 16, below u^2 |h| +
// k (k + 1)^2 u^3 S (a factor 2 to spare for the (1 + u)^{2k} and gamma_k).
double cascade_difference(int m, int terms, const double* c0, const double* const* x, double* h,
                          double* l) {
  std::vector<double> s(c0, c0 + m), c1(std::size_t(m), 0.0), c2(std::size_t(m), 0.0),
      abs_sum(std::size_t(m), 0.0);
  for (int i = 0; i < m; ++i) abs_sum[std::size_t(i)] = std::abs(c0[i]);
  for (int k = 0; k < terms; ++k) cascade_step(m, x[k], s.data(), c1.data(), c2.data(), abs_sum.data());
  const double u = kUnitRoundoff;
  const double coefficient = double(terms) * (terms + 1) * (terms + 1) * u * u * u;
  double bound = 0.0;
  for (int i = 0; i < m; ++i) {
    const Dd r = two_sum(s[std::size_t(i)], c1[std::size_t(i)]);
    h[i] = r.hi;
    l[i] = r.lo + c2[std::size_t(i)];
    bound = std::max(bound, u * u * std::abs(r.hi) + coefficient * abs_sum[std::size_t(i)]);
  }
  return bound;
}

void residual_gemv(int m, int n, const double* a, int lda, const double* yh, const double* yl,
                   const double* b, double* rh, double* rl) {
  // Strips of kRows rows keep the accumulators in L1 over all columns; the
  // columns go four at a time where all four have a non-zero yh. Per entry
  // the products are summed by TwoSum in column order, their errors and the
  // products with yl in plain double (FMA or not): Dot2, the same bound.
  constexpr int kRows = 512;
  std::vector<double> s(b, b + m), c(std::size_t(m), 0.0);
  const auto column = [&](int j, int i0) { return a + std::size_t(j) * std::size_t(lda) + i0; };
  for (int i0 = 0; i0 < m; i0 += kRows) {
    const int rows = std::min(kRows, m - i0);
    double* si = s.data() + i0;
    double* ci = c.data() + i0;
    // The products with yl right after their columns' Dot2 pass, while the
    // column pieces are in L1.
    const auto low_parts = [&](int j0, int j1) {
      for (int j = j0; j < j1; ++j) {
        if (yl[j] != 0.0) axpy(rows, -yl[j], column(j, i0), ci);
      }
    };
    int j = 0;
    for (; j + 4 <= n; j += 4) {
      if (yh[j] != 0.0 && yh[j + 1] != 0.0 && yh[j + 2] != 0.0 && yh[j + 3] != 0.0) {
        const double bq[4] = {-yh[j], -yh[j + 1], -yh[j + 2], -yh[j + 3]};
        const double lq[4] = {-yl[j], -yl[j + 1], -yl[j + 2], -yl[j + 3]};
        if (yl[j] != 0.0 || yl[j + 1] != 0.0 || yl[j + 2] != 0.0 || yl[j + 3] != 0.0) {
          dot2_axpy4_low(rows, bq, lq, column(j, i0), column(j + 1, i0), column(j + 2, i0),
                         column(j + 3, i0), si, ci);
        } else {
          dot2_axpy4(rows, bq, column(j, i0), column(j + 1, i0), column(j + 2, i0),
                     column(j + 3, i0), si, ci);
        }
        continue;  // the low parts are in
      }
      for (int q = j; q < j + 4; ++q) {
        if (yh[q] != 0.0) dot2_axpy(rows, -yh[q], column(q, i0), si, ci);
      }
      low_parts(j, j + 4);
    }
    for (; j < n; ++j) {
      if (yh[j] != 0.0) dot2_axpy(rows, -yh[j], column(j, i0), si, ci);
      low_parts(j, j + 1);
    }
  }
  normalise(m, s.data(), c.data(), rh, rl);
}

void residual_gemm(int m, int n, int p, const double* a, int lda, Shape sa, const double* b,
                   int ldb, Shape sb, const double* c0, int ldc0, double* ch, double* cl, int ldc) {
  // Blocks of kCols columns of C and kRows rows: the accumulators (2 kCols
  // kRows doubles, 16 KiB) stay in L1 while a column chunk of A is reused
  // kCols times.
  constexpr int kCols = 4, kRows = 256;
  std::array<double, kCols * kRows> s{}, c{};
  for (int j0 = 0; j0 < n; j0 += kCols) {
    const int jb = std::min(kCols, n - j0);
    // An upper B has no entries below row j in column j.
    const int kend = sb == Shape::upper ? std::min(p, j0 + jb) : p;
    for (int i0 = 0; i0 < m; i0 += kRows) {
      const int ib = std::min(kRows, m - i0);
      for (int jj = 0; jj < jb; ++jj) {
        const double* c0col = c0 + std::size_t(j0 + jj) * std::size_t(ldc0) + i0;
        std::copy(c0col, c0col + ib, s.data() + jj * kRows);
        std::fill(c.data() + jj * kRows, c.data() + (jj + 1) * kRows, 0.0);
      }
      // A lower A has no entries above row k in column k; an upper A none below.
      for (int k = 0; k < kend; ++k) {
        const int ilo = sa == Shape::lower ? std::max(i0, k) : i0;
        const int ihi = sa == Shape::upper ? std::min(i0 + ib, k + 1) : i0 + ib;
        if (ilo >= ihi) continue;
        const double* acol = a + std::size_t(k) * std::size_t(lda) + ilo;
        for (int jj = 0; jj < jb; ++jj) {
          if (sb == Shape::upper && k > j0 + jj) continue;
          const double bkj = b[std::size_t(j0 + jj) * std::size_t(ldb) + k];
          if (bkj == 0.0) continue;
          const int off = jj * kRows + (ilo - i0);
          dot2_axpy(ihi - ilo, -bkj, acol, s.data() + off, c.data() + off);
        }
      }
      for (int jj = 0; jj < jb; ++jj) {
        const std::size_t out = std::size_t(j0 + jj) * std::size_t(ldc) + i0;
        normalise(ib, s.data() + jj * kRows, c.data() + jj * kRows, ch + out, cl + out);
      }
    }
  }
}

}  // namespace slaterlab::reference::dd
