// certified_log_det_blas (reference/certified.hpp): its enclosure meets
// Arb's on every matrix both certify, contains Arb's 320-bit enclosure beyond
// double precision, proves over 100 bits where its bound says it should,
// contains exactly known determinants, and refuses what its bound cannot
// carry. Two correct enclosures of the same number always intersect; the only
// tolerance is the rounding of the double-double difference of midpoints.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "slaterlab/reference/certified.hpp"
#include "slaterlab/reference/fast_reference.hpp"
#include "tests/reference/reference_test_support.hpp"

namespace slaterlab::reference {
namespace {

using namespace slaterlab::testing;

bool intersect(const CertifiedLogDet& x, const CertifiedLogDet& y) {
  return std::abs(x.log_abs_mid - y.log_abs_mid) <= x.log_abs_radius + y.log_abs_radius;
}

TEST(CertifiedLogDetBlas, MeetsArbFromKappa1To1e8UpToN256) {
  for (const Eigen::Index n : {8, 64, 256}) {
    for (const double kappa : {1.0, 1e4, 1e8}) {
      const std::string where = "N=" + std::to_string(n) + " kappa=" + std::to_string(kappa);
      const Eigen::MatrixXd a = seeded_randsvd(n, kappa, std::uint64_t(n) + 101);
      const CertifiedLogDet blas = certified_log_det_blas(a);
      const CertifiedLogDet arb = certified_log_det(a, 128);
      ASSERT_TRUE(arb.certified) << where << ": " << arb.message;
      // N u kappa <= 256 * 1.1e-16 * 1e8 < 3e-6: the double LU carries the bound.
      ASSERT_TRUE(blas.certified) << where << ": " << blas.message;
      EXPECT_EQ(blas.sign, arb.sign) << where;
      EXPECT_TRUE(intersect(blas, arb)) << where << ": blas " << blas.log_abs_mid << " +- "
                                        << blas.log_abs_radius << ", arb " << arb.log_abs_mid
                                        << " +- " << arb.log_abs_radius;
      EXPECT_GT(blas.certified_bits, 0) << where;
    }
  }
}

/// |sum x.fine_mid - sum y.fine_mid| rounded up: the three differences of
/// parts and the two additions each err by at most u = 2^-53 times their
/// results, covered by 4u times the sum of the differences' magnitudes.
double fine_distance(const CertifiedLogDet& x, const CertifiedLogDet& y) {
  double sum = 0.0, magnitude = 0.0;
  for (std::size_t k = 0; k < 3; ++k) {
    const double d = x.fine_mid[k] - y.fine_mid[k];
    sum += d;
    magnitude += std::abs(d);
  }
  return std::abs(sum) + 4 * 0x1p-53 * magnitude;
}

/// Arb at 320 bits (radius near 2^-300 |log|det||) lies inside the BLAS
/// enclosure: both contain the exact value, so only a BLAS radius that does
/// not cover the exact value (or one within Arb's radius of its edge) fails.
void expect_contains_arb(const Eigen::MatrixXd& a, const std::string& where) {
  const CertifiedLogDet blas = certified_log_det_blas(a);
  const CertifiedLogDet arb = certified_log_det(a, 320);
  ASSERT_TRUE(arb.certified) << where << ": " << arb.message;
  if (!blas.certified) {
    EXPECT_NE(blas.message.find("not certified"), std::string::npos) << where << blas.message;
    return;
  }
  EXPECT_EQ(blas.sign, arb.sign) << where;
  EXPECT_LE(fine_distance(blas, arb) + arb.fine_radius, blas.fine_radius)
      << where << ": blas - arb " << fine_distance(blas, arb) << ", radii " << blas.fine_radius
      << " and " << arb.fine_radius;
}

TEST(CertifiedLogDetBlas, ContainsArbsHighPrecisionEnclosure) {
  for (const Eigen::Index n : {16, 128, 256}) {
    for (const double kappa : {1.0, 1e4, 1e8, 1e12}) {
      expect_contains_arb(seeded_randsvd(n, kappa, std::uint64_t(n) + 7),
                          "N=" + std::to_string(n) + " kappa=" + std::to_string(kappa));
    }
    std::mt19937_64 rng{std::uint64_t(n)};
    expect_contains_arb(seeded_gaussian(n, n, rng), "Gaussian N=" + std::to_string(n));
  }
}

TEST(CertifiedLogDetBlas, NearSingularMatricesAreContainedOrRefused) {
  // A column replaced by another plus delta times a Gaussian column: kappa
  // about 1 / delta, up to the 1e18 that no double LU can carry.
  constexpr Eigen::Index n = 128;
  for (const double delta : {1e-8, 1e-12, 1e-15, 1e-18}) {
    std::mt19937_64 rng(11);
    Eigen::MatrixXd a = seeded_gaussian(n, n, rng);
    a.col(5) = a.col(9) + delta * seeded_gaussian(n, 1, rng);
    expect_contains_arb(a, "delta=" + std::to_string(delta));
  }
}

TEST(CertifiedLogDetBlas, ScaledMatricesAreContainedOrRefused) {
  // The slices' grids follow the scale; beyond 2^-945 or 2^960 a grid would
  // underflow or overflow and the matrix is refused, never misjudged.
  for (const int exponent : {-1000, -900, -400, 400, 900, 1000}) {
    std::mt19937_64 rng(13);
    const Eigen::MatrixXd a = std::ldexp(1.0, exponent) * seeded_gaussian(32, 32, rng);
    expect_contains_arb(a, "scale 2^" + std::to_string(exponent));
  }
  EXPECT_TRUE(certified_log_det_blas(std::ldexp(1.0, -400) * seeded_randsvd(32, 10, 2)).certified);
  EXPECT_FALSE(certified_log_det_blas(std::ldexp(1.0, -1000) * seeded_randsvd(32, 10, 2)).certified);
}

TEST(CertifiedLogDetBlas, ProvesOver100BitsWhereTheBoundSaysSo) {
  // The radius is dominated by the solve error of G^ = M^{-1} H^,
  // 2 gamma_{N+2} sum_i (|M^{-1}||L'||U'||G^|)_ii, and G = F - F' is about
  // 2^-44 F (F' keeps 44 bits of each column; kappa u is smaller here): about
  // 2^-44 times 2 gamma_N sum_i (|M^{-1}||L||U||F|)_ii, the first-order solve
  // term that dominates the fast reference's log|det| bound (the other
  // certified terms are second order in F, ||F||_F ~ 1e-12). So the radius
  // should be near 2^-44 that bound; 2^-38 leaves a factor 64 for the
  // difference of R and M^{-1}, gamma_{N+2} and F' versus F^. Then 100 bits
  // follow where 2^-38 times the fast bound is below 2^-100 |log|det||.
  std::mt19937_64 rng(5);
  const Eigen::MatrixXd gaussian = seeded_gaussian(256, 256, rng);
  for (const auto& [a, where] : {std::pair{gaussian, "Gaussian N=256"},
                                 std::pair{seeded_randsvd(256, 1e4, 3), "randsvd 1e4 N=256"}}) {
    FastReference fast;
    fast.reset(a);
    const double expected = std::ldexp(fast.log_det().error_bound, -38);
    const CertifiedLogDet c = certified_log_det_blas(a);
    ASSERT_TRUE(c.certified) << where << ": " << c.message;
    EXPECT_LE(c.fine_radius, expected) << where;
    ASSERT_LE(expected, std::ldexp(std::abs(c.log_abs_mid), -100)) << where << ": not a 100-bit case";
    EXPECT_GE(c.certified_bits, 100) << where << ": radius " << c.fine_radius;
  }
}

TEST(CertifiedLogDetBlas, ContainsAnExactlyKnownDeterminant) {
  // A = L U with integer L (unit lower) and U: entries below 2^53, so A is
  // exact, and det A = prod U_ii = 3^20.
  constexpr Eigen::Index n = 20;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> small(-3, 3);
  Eigen::MatrixXd l = Eigen::MatrixXd::Identity(n, n), u = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = j + 1; i < n; ++i) l(i, j) = small(rng);
    for (Eigen::Index i = 0; i < j; ++i) u(i, j) = small(rng);
    u(j, j) = j % 2 == 0 ? 3.0 : -3.0;
  }
  const CertifiedLogDet c = certified_log_det_blas(l * u);
  ASSERT_TRUE(c.certified) << c.message;
  // 20 std::log(3.0) in double: 21 roundings of a value below 22, 21 * 22 * eps < 1.1e-13.
  EXPECT_LE(std::abs(c.log_abs_mid - 20 * std::log(3.0)), c.log_abs_radius + 1.1e-13);
  EXPECT_EQ(c.sign, 1);  // ten negative pivots
}

TEST(CertifiedLogDetBlas, RefusesWhatTheDoubleLuCannotCarry) {
  const CertifiedLogDet c = certified_log_det_blas(seeded_randsvd(32, 1e18, 3));
  EXPECT_FALSE(c.certified);
  EXPECT_TRUE(std::isnan(c.log_abs_mid));
  EXPECT_NE(c.message.find("not certified"), std::string::npos) << c.message;
  Eigen::MatrixXd singular = Eigen::MatrixXd::Ones(4, 4);
  EXPECT_FALSE(certified_log_det_blas(singular).certified);
}

}  // namespace
}  // namespace slaterlab::reference
