// certified_log_det_blas (reference/certified.hpp): its enclosure meets
// Arb's on every matrix both certify, contains exactly known determinants,
// and refuses what its bound cannot carry. Nothing here is a tolerance: two
// correct enclosures of the same number always intersect.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "slaterlab/reference/certified.hpp"
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
