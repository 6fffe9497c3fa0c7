// Tests of the certified reference (reference/certified.hpp): its balls
// contain the multiprecision results, it refuses what it cannot prove, and
// it proves at high precision what it cannot at low precision.
//
// Tolerances compare a certified ball with an mp result, which carries
//   - its rounding to long double / double (faithful: below one ulp, and
//     ulp(x) <= eps |x|),
//   - the backward error of LU with partial pivoting at 50 digits:
//     ||E||_1 <= kC N u ||A||_1 (Higham, Thm 9.3), kC = 16 covering the
//     constant and the growth factor, far below its worst case 2^(N-1) for
//     these small (N <= 12) random matrices (reference_test_support.hpp),
// so |mp - mid| <= radius + (those two) must hold.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "slaterlab/reference/certified.hpp"
#include "slaterlab/reference/mp.hpp"
#include "tests/reference/reference_test_support.hpp"

namespace slaterlab::reference {
namespace {

using namespace slaterlab::testing;
using Eigen::Index;
using Eigen::MatrixXd;

constexpr int kMpDigits = 50;

bool mentions(const std::string& message, const std::string& what) {
  return message.find(what) != std::string::npos;
}

std::string bits_label(long bits) { return std::to_string(bits) + "-bit"; }

// --- agreement with the mp reference -----------------------------------------

RC_GTEST_PROP(CertifiedLogDet, BallContainsMpLogDet, ()) {
  const Index n = *rc::gen::inRange<Index>(1, 13);
  const MatrixXd a = draw_conditioned(n, 10);
  const CertifiedLogDet c = certified_log_det(a);  // 128 bits
  // 128 bits less log2(kappa <= 1e10) ~ 33 bits and a few for N: certifies.
  RC_ASSERT(c.certified);
  RC_ASSERT(c.precision_bits == kDefaultPrecisionBits);
  const MpLogDet mp = mp_log_det(a, kMpDigits);
  RC_ASSERT(mp.sign == c.sign);
  // mp: faithful rounding to long double plus the LU error; one more ulp for
  // the long double subtraction.
  const long double slack = two_ld_ulps(mp.log_abs) + lu_log_det_error(n, kMpDigits, kappa_1(a));
  RC_ASSERT(std::fabs(mp.log_abs - static_cast<long double>(c.log_abs_mid)) <=
            static_cast<long double>(c.log_abs_radius) + slack);
  // And the certificate is worth having: with >= 80 of the 128 bits left
  // (see above), the radius is the double rounding of the midpoint (at most
  // 2 ulp after outward rounding, plus one for the rounding up of the radius)
  // plus at most 2^-70 of Arb's own radius.
  RC_ASSERT(c.log_abs_radius <= 3 * kEpsD * std::fabs(c.log_abs_mid) + std::ldexp(1.0, -70));
}

RC_GTEST_PROP(CertifiedInverse, BallsContainMpInverse, ()) {
  const Index n = *rc::gen::inRange<Index>(1, 13);
  const MatrixXd a = draw_conditioned(n, 10);
  const CertifiedInverse c = certified_inverse(a);
  RC_ASSERT(c.certified);
  const MatrixXd x = mp_inverse(a, kMpDigits);
  // Each column of the mp inverse is a backward-stable solve: forward error
  // <= kC N u kappa_1 ||x||_1, plus its faithful rounding to double.
  const double mp_error = lu_solve_error(n, kMpDigits, kappa_1(a)) * norm_1(x);
  for (Index i = 0; i < x.size(); ++i) {
    const double p = x.data()[i];
    RC_ASSERT(std::fabs(p - c.mid.data()[i]) <=
              c.radius.data()[i] + kEpsD * std::fabs(p) + mp_error);
  }
}

// --- refusing what cannot be proven ------------------------------------------

RC_GTEST_PROP(CertifiedLogDet, ExactlySingularIsNeverCertified, ()) {
  const Index n = *rc::gen::inRange<Index>(2, 9);
  const MatrixXd a = draw_singular(n);  // det = 0 exactly
  const long bits = *rc::gen::inRange(16, 1025);
  // An enclosure of an exact zero contains zero at any precision.
  const CertifiedLogDet c = certified_log_det(a, bits);
  RC_ASSERT(!c.certified);
  RC_ASSERT(mentions(c.message, "not certified"));
  RC_ASSERT(mentions(c.message, bits_label(bits)));
  RC_ASSERT(std::isnan(c.log_abs_mid));
  RC_ASSERT(std::isinf(c.log_abs_radius));
  RC_ASSERT(c.sign == 0);
  const CertifiedInverse inv = certified_inverse(a, bits);
  RC_ASSERT(!inv.certified);
  RC_ASSERT(mentions(inv.message, bits_label(bits)));
  RC_ASSERT(inv.mid.array().isNaN().all());
}

/// [[F(m+1), F(m)], [F(m), F(m-1)]]: integer entries below 2^53 for m <= 76,
/// det = (-1)^m (Cassini), inverse (-1)^m [[F(m-1), -F(m)], [-F(m), F(m+1)]],
/// kappa_1 = F(m+2)^2 ~ 3e31 for m = 75.
struct Fibonacci {
  MatrixXd a;
  MatrixXd inverse;
};

Fibonacci fibonacci(int m) {
  std::vector<double> f(static_cast<std::size_t>(m + 2));
  f[0] = 0;
  f[1] = 1;
  for (int i = 2; i <= m + 1; ++i) f[i] = f[i - 1] + f[i - 2];  // exact below 2^53
  Fibonacci out{MatrixXd(2, 2), MatrixXd(2, 2)};
  out.a << f[m + 1], f[m], f[m], f[m - 1];
  const double s = m % 2 == 0 ? 1.0 : -1.0;
  out.inverse << s * f[m - 1], -s * f[m], -s * f[m], s * f[m + 1];
  return out;
}

TEST(CertifiedLogDet, Kappa1e31NeedsMoreThan64Bits) {
  const Fibonacci fib = fibonacci(75);
  ASSERT_GT(kappa_1(fib.a), 1e31);
  // At 64 bits the products F(m)^2 ~ 2^102 are rounded with errors ~ 2^38,
  // far more than |det| = 1: the ball must contain zero.
  const CertifiedLogDet low = certified_log_det(fib.a, 64);
  EXPECT_FALSE(low.certified);
  EXPECT_TRUE(mentions(low.message, bits_label(64))) << low.message;
  EXPECT_FALSE(certified_inverse(fib.a, 64).certified);
  // At 256 bits those products are exact: certified, det = -1, log|det| = 0.
  const CertifiedLogDet high = certified_log_det(fib.a, 256);
  ASSERT_TRUE(high.certified) << high.message;
  EXPECT_EQ(high.sign, -1);
  EXPECT_LE(std::fabs(high.log_abs_mid), high.log_abs_radius);
  EXPECT_EQ(high.precision_bits, 256);
  const CertifiedInverse inv = certified_inverse(fib.a, 256);
  ASSERT_TRUE(inv.certified) << inv.message;
  EXPECT_TRUE(((inv.mid - fib.inverse).cwiseAbs().array() <= inv.radius.array()).all());
}

TEST(CertifiedLogDet, NonFiniteEntriesAreNotCertified) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    MatrixXd a = MatrixXd::Identity(3, 3);
    a(2, 1) = bad;
    const CertifiedLogDet c = certified_log_det(a);
    EXPECT_FALSE(c.certified);
    EXPECT_TRUE(mentions(c.message, "non-finite")) << c.message;
    EXPECT_TRUE(std::isnan(c.log_abs_mid));
    const CertifiedInverse inv = certified_inverse(a);
    EXPECT_FALSE(inv.certified);
    EXPECT_TRUE(mentions(inv.message, "non-finite")) << inv.message;
  }
}

TEST(CertifiedLogDet, RejectsBadArguments) {
  EXPECT_THROW(certified_log_det(MatrixXd(2, 3)), std::invalid_argument);
  EXPECT_THROW(certified_log_det(MatrixXd(0, 0)), std::invalid_argument);
  EXPECT_THROW(certified_log_det(MatrixXd::Identity(2, 2), 1), std::invalid_argument);
  EXPECT_THROW(certified_inverse(MatrixXd(3, 2)), std::invalid_argument);
  EXPECT_THROW(certified_inverse(MatrixXd::Identity(2, 2), 0), std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab::reference
