// log_det_bound.hpp: the a-posteriori bound of the fast reference's log|det|
// at a factorisation.
// - Its majorant of the solve residual H = E - M F^ (E = P A - L U) covers
//   the exact H entry by entry, computed in integers (every double is an
//   integer times 2^-1074, so E and M F^ are exact in cpp_int scaled by
//   2^(3 1074)). The only tolerance is the majorant itself.
// - The bound covers the fast log|det|'s error against the 100-digit mp
//   log|det|. Tolerance: the bound, Arb's log (2^-100 relative, which
//   FastReference::log_det adds), two long double roundings (two_ld_ulps)
//   and mp's own error (lu_log_det_error at 100 digits, far below).
// - Where the worst-case bound (2 gamma_N tr(|R||L||U||F^|) for the
//   triangular solves) is above the trust threshold, the measured one proves
//   log|det| and the fast reference trusts it, within its bound of mp.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <boost/multiprecision/cpp_int.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "reference_test_support.hpp"
#include "slaterlab/reference/fast_reference.hpp"
#include "slaterlab/reference/log_det_bound.hpp"
#include "slaterlab/reference/lu_residual.hpp"

namespace slaterlab::testing {
namespace {

using reference::detail::LuResidual;
using Int = boost::multiprecision::cpp_int;
constexpr int kScale = 1074;  // a double times 2^1074 is an integer

Int scaled(double x, int extra) {
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m 2^e, m 2^53 an integer
  return Int(Int(std::int64_t(std::ldexp(m, 53))) << (e - 53 + kScale + extra));
}

/// H = E - M F^ exactly, scaled by 2^(3 kScale), for the computed factors.
std::vector<Int> exact_solve_residual(const LuResidual& r) {
  const Eigen::Index n = r.pa.rows();
  const Eigen::MatrixXd& lu = r.lu.lu;
  std::vector<Int> m(std::size_t(n * n));  // M = L U, scaled by 2^(2 kScale)
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) {
      Int s = i <= j ? scaled(lu(i, j), 0) * scaled(1.0, 0) : Int(0);  // the unit diagonal of L
      for (Eigen::Index k = 0; k < std::min(i, j + 1); ++k) s += scaled(lu(i, k), 0) * scaled(lu(k, j), 0);
      m[std::size_t(i + j * n)] = s;
    }
  }
  std::vector<Int> h(std::size_t(n * n));
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) {
      Int s = (scaled(r.pa(i, j), 2 * kScale) - (m[std::size_t(i + j * n)] << kScale));
      for (Eigen::Index k = 0; k < n; ++k) s -= m[std::size_t(i + k * n)] * scaled(r.f(k, j), 0);
      h[std::size_t(i + j * n)] = s;
    }
  }
  return h;
}

RC_GTEST_PROP(LogDetBound, MajorantCoversTheExactSolveResidual, ()) {
  const Eigen::Index n = *rc::gen::inRange<Eigen::Index>(1, 25);
  const Eigen::MatrixXd a = draw_conditioned(n, 14);
  const LuResidual r = reference::detail::lu_residual(a);
  const auto majorant = reference::detail::solve_residual_majorant(r);
  RC_ASSERT(majorant.has_value());  // entries near 1: the split is always in range
  const std::vector<Int> h = exact_solve_residual(r);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) {
      double bound = majorant->dense(i, j);
      for (std::size_t t = 0; t < majorant->x.size(); ++t) bound += majorant->x[t](i) * majorant->y[t](j);
      // The majorant's own few roundings (relative, far below 1e-8).
      RC_ASSERT(abs(h[std::size_t(i + j * n)]) <= scaled(bound * (1 + 1e-8), 2 * kScale));
    }
  }
}

RC_GTEST_PROP(LogDetBound, APosterioriBoundCoversTheErrorAgainstMp, ()) {
  const Eigen::Index n = *rc::gen::inRange<Eigen::Index>(1, 41);
  const Eigen::MatrixXd a = draw_conditioned(n, 14);
  const auto bound = reference::detail::a_posteriori_log_det_bound(reference::detail::lu_residual(a));
  RC_ASSERT(bound.has_value());
  reference::FastReference fast;
  fast.reset(a);
  const reference::MpLogDet mp = reference::mp_log_det(a, kTruthDigits);
  const long double value = fast.log_det().value.log_abs;
  const long double tolerance = *bound + 0x1p-100 * std::abs(double(value)) + two_ld_ulps(mp.log_abs) +
                                lu_log_det_error(n, kTruthDigits, kappa_1(a));
  RC_ASSERT(std::fabs(value - mp.log_abs) <= tolerance);
}

// randsvd at N = 128 (the matrices of fast_reference_test's checkpoint-inverse
// test): the worst-case solve term exceeds the trust threshold kFastTrustMargin
// u max(1, |log|det||, kappa_1), 1.5 and 11 times at kappa = 1e11 and 1e12.
TEST(LogDetBound, MeasuredSolveResidualProvesWhereTheWorstCaseFails) {
  constexpr Eigen::Index n = 128;
  for (const double kappa : {1e11, 1e12}) {
    const std::string where = "kappa=" + std::to_string(kappa);
    const Eigen::MatrixXd a = seeded_randsvd(n, kappa, 11);
    const LuResidual r = reference::detail::lu_residual(a);
    reference::FastReference fast;
    fast.reset(a);
    const auto f = fast.log_det();
    const double threshold = reference::kFastTrustMargin * 0x1p-53 *
                             std::max({1.0, std::abs(double(f.value.log_abs)), fast.condition_1()});
    ASSERT_GT(reference::detail::a_priori_log_det_bound(r), threshold) << where;
    EXPECT_TRUE(f.trusted) << where << " bound " << f.error_bound;
    const reference::MpLogDet mp = reference::mp_log_det(a, kTruthDigits);
    EXPECT_EQ(f.value.sign, mp.sign) << where;
    EXPECT_LE(std::fabs(f.value.log_abs - mp.log_abs), f.error_bound + two_ld_ulps(mp.log_abs))
        << where;
  }
}

}  // namespace
}  // namespace slaterlab::testing
