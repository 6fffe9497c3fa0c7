// The fast reference against the 100-digit mp reference: every ratio,
// log|det| and inverse within the fast reference's own bound, the bound
// small where the refinement converges, and `trusted` false where the
// double preconditioner cannot carry the refinement.
//
// Tolerances (u = 2^-53):
// - Both references round their result to double (the fast one from dd,
//   mp from 100 digits), each within an ulp: |fast - mp| <= bound +
//   eps (|fast| + |mp|). mp's own error (16 N^2 1e-100 kappa) is far below.
// - log|det| is returned in long double: two long double ulps for the two
//   roundings (two_ld_ulps).
// - A converged ratio's bound: the refinement stops once the bound is at most
//   kFastStopFraction u min(kFastTrustMargin kappa_rho |rho|, |rho|), both
//   computed from the returned y (fast_reference.cpp); where that is below
//   what refinement can reach it goes on to its floor, bound = ||e_k^T X||_1 r
//   / (1 - theta) with r <= (gamma_{2N}^2 + 2 u gamma_N) ||A||_inf ||y||_inf
//   ~ 4 N^2 u^2 ||A||_inf ||y||_inf. With ||v||_1 <= sqrt(N) ||v||_2,
//   ||A||_inf <= sqrt(N) ||A||_F, ||y||_inf <= ||y||_2 that is at most
//   4 N^3 u^2 kappa_rho |rho| / (1 - theta); theta < 1/2 doubles it: 8 N^3 u^2.
//   |rho| is taken from the returned value, y_k's high part up to the
//   rounding of hi + lo (a tie may round to the neighbour): 2u relative slack.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference_test_support.hpp"
#include "slaterlab/reference/fast_reference.hpp"
#include "slaterlab/reference/mp.hpp"

namespace slaterlab::testing {
namespace {

using reference::FastReference;
using reference::MpReference;
constexpr double kU = 0x1p-53;

Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  return seeded_gaussian(rows, cols, rng);
}

double ratio_tolerance(const reference::FastRatio& f, double mp) {
  return f.error_bound + kEpsD * (std::abs(f.info.value) + std::abs(mp));
}

void expect_log_det_within_bound(const FastReference& fast, const MpReference& mp,
                                 const std::string& where) {
  const auto f = fast.log_det();
  const auto m = mp.log_det();
  EXPECT_EQ(f.value.sign, m.sign) << where;
  EXPECT_LE(std::fabs(f.value.log_abs - m.log_abs), f.error_bound + two_ld_ulps(m.log_abs))
      << where;
}

struct Walk {
  int trusted_ratios = 0;
  int ratios = 0;
};

/// 2N moves with Gaussian columns, every other one accepted; each ratio and
/// the final log|det| checked against mp. A checkpoint inverse every
/// `checkpoint_every` moves (0: none) measures the preconditioner's
/// contraction anew, which the ratios' bounds then use (as in a run).
Walk walk_and_compare(FastReference& fast, MpReference& mp, Eigen::Index n, std::uint64_t seed,
                      const std::string& where, bool expect_converged, int checkpoint_every = 0) {
  std::mt19937_64 rng(seed);
  Walk w;
  for (int move = 0; move < 2 * n; ++move) {
    if (checkpoint_every > 0 && move > 0 && move % checkpoint_every == 0) (void)fast.inverse();
    const Eigen::Index k = move % n;
    const Eigen::VectorXd column = gaussian(n, 1, rng).col(0);
    const auto f = fast.ratio(k, column);
    const auto m = mp.ratio(k, column);
    const std::string at = where + " move " + std::to_string(move);
    EXPECT_LE(std::abs(f.info.value - m.value), ratio_tolerance(f, m.value)) << at;
    ++w.ratios;
    w.trusted_ratios += f.trusted;
    if (expect_converged) {
      EXPECT_TRUE(f.trusted) << at;
      const double rho = std::abs(f.info.value) * (1 + 2 * kU);
      const double target = reference::kFastStopFraction * kU *
                            std::min(reference::kFastTrustMargin * f.info.conditioning * rho, rho);
      const double floor = 8 * std::pow(double(n), 3) * kU * kU * f.info.conditioning * rho;
      EXPECT_LE(f.error_bound, std::max(target, floor)) << at;
    }
    if (move % 2 == 0 && m.value != 0) {
      fast.accept();
      mp.accept();
    } else {
      fast.reject();
      mp.reject();
    }
  }
  expect_log_det_within_bound(fast, mp, where + " after the walk");
  return w;
}

TEST(FastReference, AgreesWithMpWithinItsBoundsFromKappa1To1e12) {
  for (const Eigen::Index n : {8, 32, 128}) {
    for (const double kappa : {1.0, 1e4, 1e8, 1e12}) {
      const std::string where = "N=" + std::to_string(n) + " kappa=" + std::to_string(kappa);
      const Eigen::MatrixXd a = seeded_randsvd(n, kappa, std::uint64_t(n) * 31 + std::uint64_t(std::log10(kappa)));
      FastReference fast;
      MpReference mp(kTruthDigits);
      fast.reset(a);
      mp.reset(a);
      expect_log_det_within_bound(fast, mp, where + " at reset");
      // Up to kappa = 1e8 the double LU contracts the refinement by N u kappa
      // <= 1e-5 per step: every result converges and is trusted.
      const bool converged = kappa <= 1e8;
      if (converged) {
        EXPECT_TRUE(fast.log_det().trusted) << where;
      }
      const auto inv = fast.inverse();
      const Eigen::MatrixXd mp_inv = mp.inverse();
      EXPECT_LE(norm_1(inv.inverse - mp_inv),
                inv.relative_bound * norm_1(mp_inv) +
                    kEpsD * (norm_1(inv.inverse) + norm_1(mp_inv)))
          << where;
      if (converged) {
        EXPECT_TRUE(inv.trusted) << where;
      }
      walk_and_compare(fast, mp, n, std::uint64_t(n) + 7, where, converged, int(n) / 4);
    }
  }
}

// The checkpoint inverse where N r1 is large (r1 = ||I - A X0||_1 of the
// double inverse): bounding the correction's DGEMM rounding G through A
// (||A|| ||G|| <= gamma_N kappa_1 r1) exceeds the trust threshold
// kFastTrustMargin u kappa_1 once gamma_N r1 > kFastTrustMargin u, i.e.
// r1 > about kFastTrustMargin / N; the forward bound sees G only through
// ||X0||: it stays trusted, and mp agrees within it (tolerance as above).
// At kappa = 1e12 even r1^2, the first step's own error, is above the
// threshold: the second step (from the exact residual of X0 + C) is needed.
TEST(FastReference, InverseWithLargeNTimesResidualIsTrusted) {
  constexpr Eigen::Index n = 128;
  const double gamma_n = double(n) * kU / (1 - double(n) * kU);
  for (const double kappa : {1e10, 1e11, 1e12}) {
    const std::string where = "kappa=" + std::to_string(kappa);
    const Eigen::MatrixXd a = seeded_randsvd(n, kappa, 11);
    FastReference fast;
    fast.reset(a);
    const auto inv = fast.inverse();
    const double r1 = norm_1(inv.start_residual);
    // The case the residual route could not trust: its G term alone is above the threshold.
    ASSERT_GT(gamma_n * r1, reference::kFastTrustMargin * kU) << where;
    if (kappa == 1e12) {
      ASSERT_GT(r1 * r1, reference::kFastTrustMargin * kU * norm_1(a) * norm_1(inv.start)) << where;
    }
    EXPECT_TRUE(inv.trusted) << where << " bound " << inv.relative_bound;
    MpReference mp(kTruthDigits);
    mp.reset(a);
    const Eigen::MatrixXd mp_inv = mp.inverse();
    EXPECT_LE(norm_1(inv.inverse - mp_inv),
              inv.relative_bound * norm_1(mp_inv) +
                  kEpsD * (norm_1(inv.inverse) + norm_1(mp_inv)))
        << where;
  }
}

TEST(FastReference, NearSingularMovesStayWithinTheirBounds) {
  constexpr Eigen::Index n = 32;
  const Eigen::MatrixXd a = seeded_randsvd(n, 10.0, 5);
  for (const double delta : {1e-8, 1e-12, 1e-15}) {
    FastReference fast;
    MpReference mp(kTruthDigits);
    fast.reset(a);
    mp.reset(a);
    // The contraction measured on the well-conditioned A, before the move
    // that makes it nearly singular: the ratios after it must not lean on it.
    (void)fast.inverse();
    std::mt19937_64 rng(std::uint64_t(-std::log10(delta)));
    // Column 3 replaced by column 4 plus delta g: rho = delta (A^{-1} g)_3.
    const Eigen::VectorXd column = a.col(4) + delta * gaussian(n, 1, rng).col(0);
    const auto f = fast.ratio(3, column);
    const auto m = mp.ratio(3, column);
    const std::string where = "delta=" + std::to_string(delta);
    EXPECT_LE(std::abs(f.info.value - m.value), ratio_tolerance(f, m.value)) << where;
    EXPECT_TRUE(f.trusted) << where;  // a well-conditioned A: the small ratio is still exact to dd
    fast.accept();
    mp.accept();
    expect_log_det_within_bound(fast, mp, where + " after the near-singular move");
    // The matrix now has kappa ~ 1 / delta: the walk checks every bound.
    const Walk w = walk_and_compare(fast, mp, n, 99, where, false, int(n) / 4);
    if (delta <= 1e-15) {
      EXPECT_LT(w.trusted_ratios, w.ratios) << where;
    }
  }
}

TEST(FastReference, BeyondDoublePrecisionNothingIsTrusted) {
  constexpr Eigen::Index n = 32;
  const Eigen::MatrixXd a = seeded_randsvd(n, 1e18, 3);
  FastReference fast;
  fast.reset(a);
  EXPECT_FALSE(fast.log_det().trusted);
  EXPECT_FALSE(fast.inverse().trusted);
  std::mt19937_64 rng(4);
  const auto f = fast.ratio(0, gaussian(n, 1, rng).col(0));
  EXPECT_FALSE(f.trusted);
}

TEST(FastReference, ProtocolErrorsAreLogicErrors) {
  FastReference fast;
  EXPECT_THROW(fast.ratio(0, Eigen::VectorXd::Ones(2)), std::logic_error);
  fast.reset(Eigen::MatrixXd::Identity(2, 2));
  EXPECT_THROW(fast.accept(), std::logic_error);
  EXPECT_THROW(fast.ratio(2, Eigen::VectorXd::Ones(2)), std::logic_error);
  EXPECT_THROW(fast.ratio(0, Eigen::VectorXd::Ones(3)), std::logic_error);
  (void)fast.ratio(0, Eigen::VectorXd::Ones(2));
  EXPECT_THROW(fast.ratio(0, Eigen::VectorXd::Ones(2)), std::logic_error);
  Eigen::MatrixXd singular = Eigen::MatrixXd::Zero(2, 2);
  EXPECT_THROW(fast.reset(singular), reference::SingularMatrixError);
}

TEST(FastReference, AnExactlyZeroRatioCannotBeAccepted) {
  FastReference fast;
  fast.reset(Eigen::MatrixXd::Identity(3, 3));
  const auto f = fast.ratio(0, Eigen::Vector3d(0, 1, 0));
  EXPECT_EQ(f.info.value, 0.0);
  EXPECT_THROW(fast.accept(), reference::SingularMatrixError);
  EXPECT_EQ(fast.log_det().value.log_abs, 0.0L);  // the state is unchanged
}

}  // namespace
}  // namespace slaterlab::testing
