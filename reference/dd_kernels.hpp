#pragma once
// Double-double (dd) arithmetic by error-free transformations, scalar and
// over column-major arrays (the kernels of the fast reference).
//
// Contract:
// - A dd value is hi + lo with |lo| <= ulp(hi) / 2 after normalisation; the
//   scalar operations follow Dekker and Knuth (TwoSum, TwoProd by FMA).
// - The array kernels accumulate every product exactly (TwoProd) and every
//   sum with its error kept (TwoSum): Ogita, Rump and Oishi's Dot2 (SIAM J.
//   Sci. Comput. 26, 2005), whose result res satisfies
//     |res - exact| <= u |exact| + gamma_{2m}^2 sum |terms|
//   (u = 2^-53, gamma_k = k u / (1 - k u), m the number of products). The
//   kernels are compiled without floating-point contraction (a fused a*b+s
//   would break TwoSum) and dispatched at run time to AVX-512 or AVX2 where
//   the CPU has them.
// - Inputs are finite; the kernels do not check.

#include <cmath>
#include <cstdint>

namespace slaterlab::reference::dd {

inline constexpr double kUnitRoundoff = 0x1p-53;

/// gamma_k = k u / (1 - k u): the classic bound of k roundings (Higham, 3.4).
inline double gamma(double k) { return k * kUnitRoundoff / (1.0 - k * kUnitRoundoff); }

struct Dd {
  double hi = 0.0;
  double lo = 0.0;
};

/// s + e = a + b exactly.
inline Dd two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

/// s + e = a + b exactly, for |a| >= |b| or a == 0.
inline Dd fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

/// p + e = a * b exactly (FMA).
inline Dd two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

inline Dd add(Dd a, Dd b) {
  const Dd s = two_sum(a.hi, b.hi);
  return fast_two_sum(s.hi, s.lo + a.lo + b.lo);
}

inline Dd add(Dd a, double b) {
  const Dd s = two_sum(a.hi, b);
  return fast_two_sum(s.hi, s.lo + a.lo);
}

inline Dd mul(Dd a, Dd b) {
  const Dd p = two_prod(a.hi, b.hi);
  return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

inline Dd neg(Dd a) { return {-a.hi, -a.lo}; }

/// A product of many dd factors kept as mantissa * 2^exponent, so that the
/// determinant of a large matrix neither overflows nor underflows. Each
/// multiply adds a relative error of at most 4 u^2 (dd product plus the
/// exact rescaling by a power of two).
class ScaledProduct {
 public:
  void multiply(Dd factor);
  Dd mantissa() const { return m_; }
  std::int64_t exponent() const { return e_; }
  int sign() const { return m_.hi < 0 ? -1 : 1; }

 private:
  Dd m_{1.0, 0.0};
  std::int64_t e_ = 0;
};

/// log|x * 2^e| for dd x != 0, to about 2^-100 relative, by Arb at 128 bits.
Dd log_abs(Dd x, std::int64_t exponent2 = 0);

// ---- array kernels (column-major, leading dimensions in entries) ----------

/// r = b - A (yh + yl) with A m x n: r in dd (rh, rl), Dot2 on A yh, the
/// products A yl in plain double (they are u times smaller).
void residual_gemv(int m, int n, const double* a, int lda, const double* yh, const double* yl,
                   const double* b, double* rh, double* rl);

/// Which entries of a factor may be non-zero: all, or the lower (i >= k) or
/// upper (k <= j) triangle including the diagonal.
enum class Shape { full, lower, upper };

/// C = C0 - A B with A (m x p, shape sa), B (p x n, shape sb): C in dd
/// (ch, cl, leading dimension ldc), every product exact and the sums Dot2.
/// The triangular shapes skip the structural zeros.
void residual_gemm(int m, int n, int p, const double* a, int lda, Shape sa, const double* b,
                   int ldb, Shape sb, const double* c0, int ldc0, double* ch, double* cl, int ldc);

/// (h, l) = c0 - sum_{k < terms} x_k over m entries, x_k[i] doubles: a
/// cascade of TwoSums (the sum and the sum of its errors both error-free,
/// the errors of that plain), so that without underflow
///   |exact - (h + l)| <= u^2 |h| + terms (terms + 1)^2 u^3 S,  S = |c0| + sum_k |x_k|
/// (derivation in the .cpp; each plain rounding adds at most 2^-1074 with
/// underflow, terms + 1 of them). Returns the largest right-hand side over the
/// m entries. terms <= 16.
double cascade_difference(int m, int terms, const double* c0, const double* const* x, double* h,
                          double* l);

}  // namespace slaterlab::reference::dd
