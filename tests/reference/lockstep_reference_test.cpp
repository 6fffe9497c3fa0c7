// LockstepReference (reference/lockstep_reference.hpp): the mp engine is
// MpReference; the fast engine gives FastReference's trusted results and
// mp's for the others, counting those fallbacks.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "slaterlab/reference/lockstep_reference.hpp"
#include "tests/reference/reference_test_support.hpp"

namespace slaterlab::reference {
namespace {

using namespace slaterlab::testing;

/// N moves, every other one accepted, on `lockstep` and a plain MpReference;
/// returns the largest |ratio difference| / |mp ratio|.
double walk(LockstepReference& lockstep, MpReference& mp, Eigen::Index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  double worst = 0;
  for (Eigen::Index move = 0; move < n; ++move) {
    const Eigen::VectorXd column = seeded_gaussian(n, 1, rng).col(0);
    const double a = lockstep.ratio(move % n, column).value;
    const double b = mp.ratio(move % n, column).value;
    worst = std::max(worst, std::abs(a - b) / std::abs(b));
    if (move % 2 == 0) {
      lockstep.accept();
      mp.accept();
    } else {
      lockstep.reject();
      mp.reject();
    }
  }
  return worst;
}

TEST(LockstepReference, TheMpEngineIsMpReference) {
  const Eigen::MatrixXd a = seeded_randsvd(16, 1e3, 1);
  LockstepReference lockstep(ReferenceEngine::mp, 50, 0);
  MpReference mp(50, 0);
  lockstep.reset(a);
  mp.reset(a);
  EXPECT_EQ(walk(lockstep, mp, 16, 2), 0.0);
  EXPECT_EQ(lockstep.log_det().log_abs, mp.log_det().log_abs);
  EXPECT_EQ(lockstep.fallbacks(), 0);
}

TEST(LockstepReference, TheFastEngineAgreesWithMpAndNeedsNoFallbackWhenWellConditioned) {
  constexpr Eigen::Index n = 48;
  const Eigen::MatrixXd a = seeded_randsvd(n, 1e4, 3);
  LockstepReference lockstep(ReferenceEngine::fast, 100, 0);
  MpReference mp(100, 0);
  lockstep.reset(a);
  mp.reset(a);
  // Trusted fast ratios err by at most 1e-3 u kappa_rho |rho| (fast_reference.hpp)
  // plus the two roundings to double (2 eps); kappa_rho of these Gaussian
  // moves stays below 1e7 (N kappa): 1e-3 * 1.1e-16 * 1e7 + 4.4e-16 < 2e-12.
  EXPECT_LT(walk(lockstep, mp, n, 4), 2e-12);
  EXPECT_EQ(lockstep.fallbacks(), 0);
  EXPECT_LE(std::fabs(lockstep.log_det().log_abs - mp.log_det().log_abs),
            lockstep.log_det_error_bound() + two_ld_ulps(mp.log_det().log_abs));
  EXPECT_EQ(lockstep.fallbacks(), 0);
}

TEST(LockstepReference, ACarriedLogDetBoundIsRenewedByTheFastEngineNotByMp) {
  // Each accepted ratio adds its bound, up to 1e-5 u kappa_rho |rho| (the
  // refinement's stop target), to the carried log|det| bound, while the trust
  // threshold is 1e-3 u max(1, |log det|, kappa_1) of the matrix now. A
  // near-singular move (column 0 := column 1 + 1e-12 g: kappa_rho about 1e12
  // kappa) and its release (a fresh column) leave a well-conditioned matrix
  // (randsvd kappa = 2, N = 32: threshold below 1e-17) carrying a bound of
  // up to 1e-5 u 1e12 kappa_1, far above it: no longer trusted. The lockstep
  // reference must then refactorise the fast engine, not reset mp.
  constexpr Eigen::Index n = 32;
  const Eigen::MatrixXd a = seeded_randsvd(n, 2.0, 11);
  FastReference fast;
  LockstepReference lockstep(ReferenceEngine::fast, 100, 0);
  MpReference mp(100, 0);
  fast.reset(a);
  lockstep.reset(a);
  mp.reset(a);
  std::mt19937_64 rng(12);
  const Eigen::VectorXd near = a.col(1) + 1e-12 * seeded_gaussian(n, 1, rng).col(0);
  const Eigen::VectorXd fresh = seeded_gaussian(n, 1, rng).col(0);
  for (const Eigen::VectorXd* column : {&near, &fresh}) {
    fast.ratio(0, *column);
    lockstep.ratio(0, *column);
    mp.ratio(0, *column);
    fast.accept();
    lockstep.accept();
    mp.accept();
  }
  ASSERT_FALSE(fast.log_det().trusted) << "the carried bound stayed trusted: no test";
  const std::int64_t before = lockstep.fallbacks();
  const MpLogDet value = lockstep.log_det();
  EXPECT_EQ(lockstep.fallbacks(), before);
  EXPECT_LE(std::fabs(value.log_abs - mp.log_det().log_abs),
            lockstep.log_det_error_bound() + two_ld_ulps(mp.log_det().log_abs));
  EXPECT_EQ(value.sign, mp.log_det().sign);
  EXPECT_EQ(lockstep.fallbacks(), before);
}

TEST(LockstepReference, TheFastEngineFallsBackToMpBeyondDoublePrecision) {
  constexpr Eigen::Index n = 24;
  const Eigen::MatrixXd a = seeded_randsvd(n, 1e18, 5);
  LockstepReference lockstep(ReferenceEngine::fast, 100, 0);
  MpReference mp(100, 0);
  lockstep.reset(a);
  mp.reset(a);
  walk(lockstep, mp, n, 6);
  // At kappa ~ 1e17 (after rounding) the double LU cannot carry most results.
  const std::int64_t ratio_fallbacks = lockstep.fallbacks();
  EXPECT_GT(ratio_fallbacks, 0);
  // log|det| comes from the fast reference where it trusts its bound (a
  // factorisation renews it after a ratio without one), else from a fresh
  // 100-digit mp LU: within that bound either way, plus the two roundings
  // to long double.
  EXPECT_LE(std::fabs(lockstep.log_det().log_abs - mp.log_det().log_abs),
            lockstep.log_det_error_bound() + two_ld_ulps(mp.log_det().log_abs));
}

// The notice comes once per mp reset, before it, naming the result the fast
// reference did not trust and its bound; the results are mp's as without it.
TEST(LockstepReference, AFallbackResetOfMpIsNoticedOnceWithTheUntrustedResult) {
  constexpr Eigen::Index n = 24;
  const Eigen::MatrixXd a = seeded_randsvd(n, 1e18, 5);
  LockstepReference lockstep(ReferenceEngine::fast, 100, 0);
  std::vector<std::pair<std::string, double>> notices;
  lockstep.set_mp_reset_notice(
      [&notices](const char* quantity, double bound) { notices.emplace_back(quantity, bound); });
  MpReference mp(100, 0);
  lockstep.reset(a);
  mp.reset(a);
  const Eigen::MatrixXd inverse = lockstep.inverse();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].first, "inverse");
  EXPECT_GT(notices[0].second, kFastTrustMargin * 0x1p-53 * lockstep.condition_1());
  EXPECT_EQ(lockstep.fallbacks(), 1);
  EXPECT_TRUE(inverse == mp.inverse());  // mp's own result, the same digits and matrix
  (void)lockstep.log_det();  // mp already stands at this matrix: no second reset
  EXPECT_EQ(notices.size(), 1u);
}

}  // namespace
}  // namespace slaterlab::reference
