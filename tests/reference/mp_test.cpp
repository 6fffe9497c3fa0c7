// Tests of the multiprecision reference (reference/mp.hpp): the free
// functions against known determinants and against each other at 50 and 100
// digits, and the lockstep MpReference against fresh mp references.
//
// Every tolerance below is written in the error vocabulary of
// reference_test_support.hpp (u(d), faithful final roundings, LU backward
// error kC N u ||A||_1).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <boost/multiprecision/cpp_bin_float.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "slaterlab/reference/mp.hpp"
#include "tests/reference/reference_test_support.hpp"

namespace slaterlab::reference {
namespace {

using namespace slaterlab::testing;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// --- generators (call inside properties only) --------------------------------
// The matrix generators are in reference_test_support.hpp.

/// The two digit counts the reference supports.
int draw_digits() { return *rc::gen::element(50, 100); }

// --- free functions: known determinants -------------------------------------

/// sum_i log|d_i| in 100 digits, rounded to long double (error <= 1/2 ulp + N 1e-100).
long double exact_log_abs_product(const VectorXd& d) {
  using Exact = boost::multiprecision::cpp_bin_float_100;
  Exact sum = 0;
  for (Index i = 0; i < d.size(); ++i) sum += boost::multiprecision::log(Exact(std::fabs(d(i))));
  return sum.convert_to<long double>();
}

RC_GTEST_PROP(MpLogDet, TriangularIsProductOfDiagonal, ()) {
  const Index n = *rc::gen::inRange<Index>(1, 13);
  const int digits = draw_digits();
  MatrixXd t = draw_matrix(n, n).triangularView<Eigen::Upper>();
  VectorXd d(n);
  int sign = 1;
  // |d_i| = (1 + f) 2^e, e in [-8, 8]: a range of pivots, while kappa_1 of the
  // lower triangular transpose (off-diagonal entries in [-1, 1]) stays below
  // N^2 2^8 (1 + 2^8)^(N-1) ~ 1e31 for N <= 12, well inside 50 digits.
  for (Index i = 0; i < n; ++i) {
    const double f = *rc::gen::inRange(0, kGrid) / static_cast<double>(kGrid);
    d(i) = std::ldexp(1.0 + f, *rc::gen::inRange(-8, 9)) * (*rc::gen::arbitrary<bool>() ? -1 : 1);
    if (d(i) < 0) sign = -sign;
  }
  t.diagonal() = d;
  const long double expected = exact_log_abs_product(d);

  // Upper triangular: partial pivoting finds each column's only nonzero below
  // the diagonal on the diagonal, multipliers are exact zeros, so the pivots
  // are the d_i exactly. Left: the mp product of N pivots and its log
  // (relative N u, absolute u |log|), and the two roundings to long double.
  const MpLogDet upper = mp_log_det(t, digits);
  RC_ASSERT(upper.sign == sign);
  RC_ASSERT(std::fabs(upper.log_abs - expected) <=
            two_ld_ulps(expected) + (n + std::fabs(expected)) * u(digits));

  // Lower triangular: now LU eliminates for real; add its backward error.
  const MatrixXd lower = t.transpose();
  const MpLogDet low = mp_log_det(lower, digits);
  RC_ASSERT(low.sign == sign);
  RC_ASSERT(std::fabs(low.log_abs - expected) <=
            two_ld_ulps(expected) + lu_log_det_error(n, digits, kappa_1(lower)));
}

RC_GTEST_PROP(MpLogDet, PermutationMatrixHasUnitDeterminantAndItsSign, ()) {
  const Index n = *rc::gen::inRange<Index>(1, 13);
  // A stable sort by drawn keys: keys shrinking to equal values give identity.
  const auto keys = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(n),
                                                         rc::gen::inRange(0, 8));
  std::vector<Index> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), Index{0});
  std::stable_sort(perm.begin(), perm.end(), [&](Index a, Index b) { return keys[a] < keys[b]; });
  MatrixXd p = MatrixXd::Zero(n, n);
  for (Index j = 0; j < n; ++j) p(perm[j], j) = 1.0;
  // sign = (-1)^(N - number of cycles)
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  Index cycles = 0;
  for (Index s = 0; s < n; ++s) {
    if (seen[s]) continue;
    ++cycles;
    for (Index j = s; !seen[j]; j = perm[j]) seen[j] = true;
  }
  const int sign = (n - cycles) % 2 == 0 ? 1 : -1;

  const MpLogDet ld = mp_log_det(p, draw_digits());
  // Pivoting finds the single 1 of each column; multipliers and updates are
  // exact zeros, the pivots exact ones: log|det| is exactly 0.
  RC_ASSERT(ld.log_abs == 0.0L);
  RC_ASSERT(ld.sign == sign);
}

TEST(MpLogDet, ScaledIdentityOfSize300) {
  // det = 10^300 sits at the top of double's range (a product of pivots in
  // double overflows from N = 309 on): the mp log|det| must not care.
  const Index n = 300;
  const MatrixXd a = 10.0 * MatrixXd::Identity(n, n);
  const MpLogDet ld = mp_log_det(a, 50);
  const long double expected = exact_log_abs_product(VectorXd::Constant(n, 10.0));
  // Diagonal: pivots exactly 10 (no elimination), the mp product rounds
  // N times (relative N u) and the log once (u |log|); two roundings to long double.
  EXPECT_EQ(ld.sign, 1);
  EXPECT_LE(std::fabs(ld.log_abs - expected), two_ld_ulps(expected) + (n + expected) * u(50));
}

/// [[F(m+1), F(m)], [F(m), F(m-1)]] with Fibonacci numbers: integer entries
/// below 2^53 (exact doubles) for m <= 76, det = (-1)^m by Cassini's identity,
/// and kappa_1 = F(m+2)^2 (~8e31 for m = 76).
MatrixXd fibonacci_matrix(int m) {
  std::vector<double> f(static_cast<std::size_t>(m + 2));
  f[0] = 0;
  f[1] = 1;
  for (int i = 2; i <= m + 1; ++i) f[i] = f[i - 1] + f[i - 2];  // exact: all below 2^53
  MatrixXd a(2, 2);
  a << f[m + 1], f[m], f[m], f[m - 1];
  return a;
}

TEST(MpLogDet, FibonacciMatrixWithKappa1e31HasUnitDeterminant) {
  for (int m : {75, 76}) {
    const MatrixXd a = fibonacci_matrix(m);
    const double kappa = kappa_1(a);
    ASSERT_GT(kappa, 1e31);  // the point of the test: far beyond double
    for (int digits : {50, 100}) {
      const MpLogDet ld = mp_log_det(a, digits);
      EXPECT_EQ(ld.sign, m % 2 == 0 ? 1 : -1) << "m = " << m << ", digits = " << digits;
      // log|det| = 0 exactly; only the LU's backward error remains.
      EXPECT_LE(std::fabs(ld.log_abs), lu_log_det_error(2, digits, kappa))
          << "m = " << m << ", digits = " << digits;
    }
  }
}

// --- free functions: 50 against 100 digits -----------------------------------

RC_GTEST_PROP(MpFreeFunctions, FiftyAndHundredDigitsAgree, ()) {
  const Index n = *rc::gen::inRange<Index>(1, 13);
  const MatrixXd a = draw_conditioned(n, 10);
  const double kappa = kappa_1(a);
  // Both carry their own LU error; 50 digits dominates.
  const double solve_err = lu_solve_error(n, 50, kappa) + lu_solve_error(n, 100, kappa);

  const MpLogDet l50 = mp_log_det(a, 50);
  const MpLogDet l100 = mp_log_det(a, 100);
  RC_ASSERT(l50.sign == l100.sign);
  RC_ASSERT(std::fabs(l50.log_abs - l100.log_abs) <=
            two_ld_ulps(l100.log_abs) + lu_log_det_error(n, 50, kappa) +
                lu_log_det_error(n, 100, kappa));

  const MatrixXd x50 = mp_inverse(a, 50);
  const MatrixXd x100 = mp_inverse(a, 100);
  const double x_norm = norm_1(x100);
  for (Index i = 0; i < x50.size(); ++i) {
    const double p = x50.data()[i], q = x100.data()[i];
    RC_ASSERT(std::fabs(p - q) <= kEpsD * (std::fabs(p) + std::fabs(q)) + solve_err * x_norm);
  }

  const VectorXd b = draw_vector(n);
  const VectorXd y50 = mp_solve(a, b, 50);
  const VectorXd y100 = mp_solve(a, b, 100);
  const double y_norm = y100.lpNorm<1>();
  for (Index i = 0; i < n; ++i) {
    RC_ASSERT(std::fabs(y50(i) - y100(i)) <=
              kEpsD * (std::fabs(y50(i)) + std::fabs(y100(i))) + solve_err * y_norm);
  }

  // The ratio is component k of the solve with the new column.
  const Index k = *rc::gen::inRange<Index>(0, n);
  const VectorXd column = draw_vector(n);
  const double r50 = mp_ratio(a, k, column, 50);
  const double r100 = mp_ratio(a, k, column, 100);
  const double col_norm = mp_solve(a, column, 100).lpNorm<1>();
  RC_ASSERT(std::fabs(r50 - r100) <=
            kEpsD * (std::fabs(r50) + std::fabs(r100)) + solve_err * col_norm);
}

TEST(MpFreeFunctions, EpsilonMeetsTheDigitCount) {
  // d decimal digits means a relative spacing of at most 10^-d.
  EXPECT_LE(mp_epsilon(50), 1e-50);
  EXPECT_LE(mp_epsilon(100), 1e-100);
  EXPECT_LT(mp_epsilon(100), mp_epsilon(50));
}

// --- free functions: invalid input -------------------------------------------

TEST(MpFreeFunctions, RejectsUnsupportedDigitsNamingThem) {
  const MatrixXd a = MatrixXd::Identity(2, 2);
  for (int digits : {0, 49, 64, 101}) {
    try {
      mp_log_det(a, digits);
      ADD_FAILURE() << "digits " << digits << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(digits)), std::string::npos) << e.what();
    }
    EXPECT_THROW(mp_inverse(a, digits), std::invalid_argument);
    EXPECT_THROW(MpReference{digits}, std::invalid_argument);
  }
}

TEST(MpFreeFunctions, RejectsBadShapes) {
  EXPECT_THROW(mp_log_det(MatrixXd(2, 3)), std::invalid_argument);
  EXPECT_THROW(mp_inverse(MatrixXd(0, 0)), std::invalid_argument);
  const MatrixXd a = MatrixXd::Identity(3, 3);
  EXPECT_THROW(mp_solve(a, VectorXd::Ones(2)), std::invalid_argument);
  EXPECT_THROW(mp_ratio(a, 3, VectorXd::Ones(3)), std::invalid_argument);
  EXPECT_THROW(mp_ratio(a, -1, VectorXd::Ones(3)), std::invalid_argument);
}

TEST(MpFreeFunctions, NonFiniteEntriesThrowSingularMatrixError) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    MatrixXd a = MatrixXd::Identity(3, 3);
    a(1, 2) = bad;
    try {
      mp_log_det(a);
      ADD_FAILURE() << "non-finite entry accepted";
    } catch (const SingularMatrixError& e) {
      EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
    }
    EXPECT_THROW(mp_inverse(a, 100), SingularMatrixError);
  }
}

RC_GTEST_PROP(MpFreeFunctions, ExactlySingularMatricesThrow, ()) {
  const Index n = *rc::gen::inRange<Index>(2, 13);
  const MatrixXd a = draw_singular(n);
  const int digits = draw_digits();
  RC_ASSERT_THROWS_AS(mp_log_det(a, digits), SingularMatrixError);
  RC_ASSERT_THROWS_AS(mp_inverse(a, digits), SingularMatrixError);
  RC_ASSERT_THROWS_AS(mp_solve(a, VectorXd::Ones(n), digits), SingularMatrixError);
  RC_ASSERT_THROWS_AS(mp_ratio(a, 0, VectorXd::Ones(n), digits), SingularMatrixError);
  MpReference ref(digits);
  RC_ASSERT_THROWS_AS(ref.reset(a), SingularMatrixError);
}

// --- MpReference: error model of the lockstep ---------------------------------

/// First-order bound on the errors of an MpReference (unit roundoff u, size
/// N), tracked along a run from the quantities the run reports. The inverse
/// it keeps is the exact inverse of A + G, ||G||_F <= eta ||A||_F:
/// - after a fresh LU: the residual of each column is kC N u ||A|| ||x||, so
///   eta = kC N u kappa_F <= kC N^2 u kappa_1 (kappa_F <= N kappa_1);
/// - a ratio is a solve with that inverse plus a GEMV's rounding, so
///   |d rho| <= (eta + kC N u) ||A||_F ||e_k^T A^{-1}||_2 ||A^{-1} a'||_2
///   (= |rho| kappa_rho: the conditioning's definition);
/// - Sherman-Morrison is exact algebra on (A + G)^{-1}, so G carries over
///   (relative to the new ||A||), plus the GEMV/GER rounding of the update term
///   (x - e_k) r / x_k: kC N u (||A'|| / ||A||) kappa_rho + kC N u kappa_F(A');
/// - log|det| gains log|rho|: error 2 |d rho / rho| (|log|1 + z|| <= 2|z|),
///   plus the mp log and sum roundings, u (|log|rho|| + |log|det||) each.
class ErrorModel {
 public:
  ErrorModel(Index n, int digits) : n_(n), u_(u(digits)) {}

  void on_factorize(double kappa) {
    eta_ = kC * n_ * n_ * u_ * kappa;
    log_det_error_ = 2.0L * kC * n_ * n_ * u_ * kappa;
  }
  /// Absolute error bound of a ratio whose kappa_rho |rho| is `scale`.
  double ratio_error(double scale) const { return (eta_ + kC * n_ * u_) * scale; }
  void on_accept(double kappa_rho, double norm_growth, double new_kappa, long double log_rho,
                 long double log_det) {
    log_det_error_ += 2.0L * (eta_ + kC * n_ * u_) * kappa_rho +
                      2.0L * u_ * (std::fabs(log_rho) + std::fabs(log_det));
    eta_ = eta_ / norm_growth + kC * n_ * u_ * (norm_growth * kappa_rho + n_ * new_kappa);
  }
  long double log_det_error() const { return log_det_error_; }
  /// Entrywise bound on the inverse's error: ||dX||_F <= kappa_F eta ||X||_F,
  /// and kappa_F ||X||_F <= N kappa_1 sqrt(N) ||X||_1 <= N^2 kappa_1 ||X||_1.
  double inverse_error(double kappa, double x_norm_1) const {
    return n_ * n_ * kappa * eta_ * x_norm_1;
  }

 private:
  Index n_;
  double u_;
  double eta_ = 0.0;
  long double log_det_error_ = 0.0L;
};

/// Accepted proposals are limited to kappa_rho <= 1e12 so that the model's
/// first-order terms stay far below 1 (1e12 * kC N 1e-50 ~ 1e-36); the
/// safeguard recompute (above 1/sqrt(eps) ~ 1e25) is tested on its own.
constexpr double kMaxAcceptedConditioning = 1e12;

/// An MpReference run whose every ratio is checked against a fresh 100-digit
/// mp_ratio, and whose state can be checked against fresh 100-digit
/// references, all within the ErrorModel's bounds.
class CheckedRun {
 public:
  CheckedRun(const MatrixXd& a0, int digits, int recompute_every)
      : ref_(digits, recompute_every), model_(a0.rows(), digits) {
    ref_.reset(a0);
    model_.on_factorize(kappa_1(a0));
  }

  const MpReference& ref() const { return ref_; }
  MpReference& ref() { return ref_; }
  const ErrorModel& model() const { return model_; }
  std::int64_t accepted() const { return accepted_; }

  /// Proposes (k, column), checks the ratio, then accepts if asked and the
  /// conditioning allows, else rejects and checks nothing changed.
  RatioInfo step(Index k, const VectorXd& column, bool accept) {
    const Index n = ref_.size();
    const MatrixXd& a = ref_.matrix();
    const RatioInfo r = ref_.ratio(k, column);

    const MatrixXd inv = mp_inverse(a, kTruthDigits);
    const VectorXd x = mp_solve(a, column, kTruthDigits);
    const double rho = mp_ratio(a, k, column, kTruthDigits);
    // kappa_rho |rho|, free of the division (finite even when rho = 0).
    const double scale = a.norm() * inv.row(k).norm() * x.norm();
    RC_ASSERT(std::fabs(r.value - rho) <=
              kEpsD * (std::fabs(r.value) + std::fabs(rho)) + model_.ratio_error(scale) +
                  kC * n * u(kTruthDigits) * scale);
    // kappa_rho >= 1: ||A||_F ||e_k^T A^{-1}|| >= |e_k^T A^{-1} a_k| = 1 and
    // ||x|| >= |x_k|. And it matches its definition evaluated from the rounded
    // 100-digit quantities: five factors, each within (2N + 2) eps_d.
    RC_ASSERT(r.conditioning >= 1.0 - 1e-9);
    if (rho != 0.0) {
      const double expected = scale / std::fabs(rho);
      RC_ASSERT(std::fabs(r.conditioning - expected) <= 5 * (2 * n + 2) * kEpsD * expected);
    } else {
      RC_ASSERT(std::isinf(r.conditioning));
    }

    if (accept && r.conditioning <= kMaxAcceptedConditioning) {
      const double norm_before = a.norm();
      const std::int64_t recomputes_before = ref_.recomputes();
      ref_.accept();
      ++accepted_;
      RC_ASSERT(ref_.matrix().col(k) == column);
      if (ref_.recomputes() > recomputes_before) {
        model_.on_factorize(ref_.condition_1());
      } else {
        model_.on_accept(r.conditioning, ref_.matrix().norm() / norm_before, ref_.condition_1(),
                         std::log(std::fabs(static_cast<long double>(rho))),
                         ref_.log_det().log_abs);
      }
    } else {
      const MpLogDet ld = ref_.log_det();
      const MatrixXd inv_before = ref_.inverse();
      const MatrixXd a_before = ref_.matrix();
      ref_.reject();
      RC_ASSERT(ref_.log_det().log_abs == ld.log_abs);
      RC_ASSERT(ref_.log_det().sign == ld.sign);
      RC_ASSERT(ref_.inverse() == inv_before);
      RC_ASSERT(ref_.matrix() == a_before);
    }
    RC_ASSERT(!ref_.has_pending());
    return r;
  }

  /// log_det() and inverse() against a fresh 100-digit LU of matrix().
  void check_state() const {
    const MatrixXd& a = ref_.matrix();
    const Index n = a.rows();
    const double kappa = kappa_1(a);
    const MpLogDet truth = mp_log_det(a, kTruthDigits);
    const MpLogDet ld = ref_.log_det();
    RC_ASSERT(ld.sign == truth.sign);
    RC_ASSERT(std::fabs(ld.log_abs - truth.log_abs) <=
              two_ld_ulps(truth.log_abs) + model_.log_det_error() +
                  lu_log_det_error(n, kTruthDigits, kappa));

    const MatrixXd x_truth = mp_inverse(a, kTruthDigits);
    const MatrixXd x = ref_.inverse();
    const double x_norm = norm_1(x_truth);
    const double tol = model_.inverse_error(kappa, x_norm) +
                       lu_solve_error(n, kTruthDigits, kappa) * x_norm;
    for (Index i = 0; i < x.size(); ++i) {
      const double p = x.data()[i], q = x_truth.data()[i];
      RC_ASSERT(std::fabs(p - q) <= kEpsD * (std::fabs(p) + std::fabs(q)) + tol);
    }
  }

 private:
  MpReference ref_;
  ErrorModel model_;
  std::int64_t accepted_ = 0;
};

// --- MpReference: properties -------------------------------------------------

RC_GTEST_PROP(MpReference, LockstepMatchesFreshReferences, ()) {
  const Index n = *rc::gen::inRange<Index>(1, 11);
  CheckedRun run(draw_conditioned(n, 6), draw_digits(), 0);
  run.check_state();
  const int moves = *rc::gen::inRange(1, 31);
  for (int m = 0; m < moves; ++m) {
    const Index k = *rc::gen::inRange<Index>(0, n);
    run.step(k, draw_vector(n), *rc::gen::arbitrary<bool>());
  }
  run.check_state();
  // Accepted conditionings stay below the safeguard: no recompute happened.
  RC_ASSERT(run.ref().recomputes() == 0);
}

RC_GTEST_PROP(MpReference, SameElectronTwiceInARow, ()) {
  const Index n = *rc::gen::inRange<Index>(1, 11);
  CheckedRun run(draw_conditioned(n, 6), draw_digits(), 0);
  const Index k = *rc::gen::inRange<Index>(0, n);
  const RatioInfo first = run.step(k, draw_vector(n), true);
  RC_PRE(first.conditioning <= kMaxAcceptedConditioning);  // else nothing was accepted
  run.step(k, draw_vector(n), true);  // checked against the updated matrix
  run.check_state();
}

RC_GTEST_PROP(MpReference, RecomputeEveryGivesTheSameResults, ()) {
  const Index n = *rc::gen::inRange<Index>(1, 11);
  const int digits = draw_digits();
  const int every = *rc::gen::inRange(1, 6);
  const MatrixXd a0 = draw_conditioned(n, 6);
  CheckedRun plain(a0, digits, 0);
  CheckedRun periodic(a0, digits, every);
  const int moves = *rc::gen::inRange(1, 21);
  for (int m = 0; m < moves; ++m) {
    const Index k = *rc::gen::inRange<Index>(0, n);
    const VectorXd column = draw_vector(n);
    const RatioInfo r = plain.step(k, column, true);
    // The same decision for both, taken on the plain run's conditioning.
    periodic.step(k, column, r.conditioning <= kMaxAcceptedConditioning);
    RC_ASSERT(plain.ref().matrix() == periodic.ref().matrix());
  }
  RC_ASSERT(plain.ref().recomputes() == 0);
  RC_ASSERT(periodic.ref().recomputes() == periodic.accepted() / every);
  plain.check_state();
  periodic.check_state();
  // Both are within their bounds of the same truth, hence of each other.
  const long double l0 = plain.ref().log_det().log_abs;
  const long double l1 = periodic.ref().log_det().log_abs;
  RC_ASSERT(std::fabs(l0 - l1) <= two_ld_ulps(l0) + plain.model().log_det_error() +
                                      periodic.model().log_det_error());

  // recompute() on demand: a fresh LU of the same matrix, counted.
  const std::int64_t before = plain.ref().recomputes();
  plain.ref().recompute();
  RC_ASSERT(plain.ref().recomputes() == before + 1);
  const MpLogDet fresh = mp_log_det(plain.ref().matrix(), digits);
  RC_ASSERT(std::fabs(plain.ref().log_det().log_abs - fresh.log_abs) <=
            two_ld_ulps(fresh.log_abs) +
                2 * lu_log_det_error(n, digits, plain.ref().condition_1()));
}

// --- MpReference: edge cases and errors --------------------------------------

TEST(MpReference, IllConditionedAcceptTriggersSafeguardRecompute) {
  // A = I, k = 1, a' = e_0 + 1e-30 e_1: rho = 1e-30, kappa_rho = ||I||_F * 1 *
  // ||a'|| / rho = sqrt(3) 1e30 > 1/sqrt(eps) (1.4e25 at 50 digits,
  // 7.2e49 at 100): the safeguard fires at 50 digits only.
  const MatrixXd a = MatrixXd::Identity(3, 3);
  VectorXd column = VectorXd::Zero(3);
  column << 1.0, 1e-30, 0.0;
  for (int digits : {50, 100}) {
    MpReference ref(digits);
    ref.reset(a);
    const RatioInfo r = ref.ratio(1, column);
    EXPECT_EQ(r.value, 1e-30);  // x = a' exactly (the inverse is I)
    EXPECT_GT(r.conditioning, 1.0 / std::sqrt(mp_epsilon(50)));
    EXPECT_LT(r.conditioning, 1.0 / std::sqrt(mp_epsilon(100)));
    ref.accept();
    EXPECT_EQ(ref.recomputes(), digits == 50 ? 1 : 0) << "digits " << digits;
    // det A' = 1e-30 (the double); both sides round log(1e-30) from exact
    // pivots (A' is upper triangular): two long double roundings, plus u |log|.
    const MpLogDet truth = mp_log_det(ref.matrix(), kTruthDigits);
    EXPECT_EQ(ref.log_det().sign, 1);
    EXPECT_LE(std::fabs(ref.log_det().log_abs - truth.log_abs),
              two_ld_ulps(truth.log_abs) + 4 * u(digits) * std::fabs(truth.log_abs));
  }
}

// The singular state: det 0 reported as such, no inverse, undefined ratios
// from it, and the first regular matrix a move reaches leaves it.
void expect_singular_state(const MpReference& ref) {
  EXPECT_TRUE(ref.singular());
  EXPECT_EQ(ref.log_det().log_abs, -std::numeric_limits<long double>::infinity());
  EXPECT_EQ(ref.log_det().sign, 0);
  EXPECT_TRUE(std::isinf(ref.condition_1()));
  EXPECT_THROW((void)ref.inverse(), std::logic_error);
}

// Leaving the singular state refactorises: log|det| and the inverse are those
// of a fresh mp LU, equal to the values before to mp rounding, 16 N^2 u_mp
// kappa_1 (the model of the reference's tests) for this kappa_1 ~ 10 matrix.
void expect_back_to(const MpReference& ref, const MatrixXd& a, const MpLogDet& before,
                    const MatrixXd& inverse_before) {
  EXPECT_FALSE(ref.singular());
  EXPECT_EQ(ref.matrix(), a);
  EXPECT_EQ(ref.log_det().sign, before.sign);
  const double tol = 16 * 9 * mp_epsilon(ref.digits()) * 10;
  EXPECT_LE(std::abs(double(ref.log_det().log_abs - before.log_abs)), std::max(tol, 1e-300));
  EXPECT_TRUE(ref.inverse().isApprox(inverse_before, 4 * std::numeric_limits<double>::epsilon()));
}

TEST(MpReference, AcceptedZeroRatioGivesTheSingularStateAndAMoveLeavesIt) {
  MatrixXd a(3, 3);
  a << 2, 1, 0, 1, 3, 1, 0, 1, 4;
  MpReference ref;
  ref.reset(a);
  const MpLogDet before = ref.log_det();
  const MatrixXd inv_before = ref.inverse();
  // a' = 0 gives x = A^{-1} 0 = 0 exactly: rho = 0, conditioning +inf.
  const RatioInfo r = ref.ratio(1, VectorXd::Zero(3));
  EXPECT_EQ(r.value, 0.0);
  EXPECT_TRUE(r.defined);
  EXPECT_TRUE(std::isinf(r.conditioning));
  EXPECT_NO_THROW(ref.accept());
  expect_singular_state(ref);
  const RatioInfo from_singular = ref.ratio(1, a.col(1));
  EXPECT_FALSE(from_singular.defined);
  ref.accept();
  expect_back_to(ref, a, before, inv_before);
}

TEST(MpReference, AcceptedCopiedColumnGivesTheSingularState) {
  MatrixXd a(3, 3);
  a << 2, 1, 0, 1, 3, 1, 0, 1, 4;
  for (int digits : {50, 100}) {
    MpReference ref(digits);
    ref.reset(a);
    const MpLogDet before = ref.log_det();
    const MatrixXd inv_before = ref.inverse();
    // Column 1 := column 0 makes A' exactly singular: rho is exactly 0 or
    // rounding residue, both reported as 0.
    EXPECT_EQ(ref.ratio(1, a.col(0)).value, 0.0) << "digits " << digits;
    ref.accept();
    expect_singular_state(ref);
    ref.ratio(0, a.col(2));  // [a2, a0, a2]: columns 0 and 2 equal
    ref.accept();
    EXPECT_TRUE(ref.singular());
    ref.ratio(0, a.col(0));  // [a0, a0, a2]
    ref.accept();
    EXPECT_TRUE(ref.singular());
    ref.ratio(1, a.col(1));
    ref.accept();
    expect_back_to(ref, a, before, inv_before);
  }
}

TEST(MpReference, SingularToWorkingPrecisionIsSingularThereAndRegularWithMoreDigits) {
  // A = I_2 with column 1 replaced by (1, 1e-50): det = 1e-50 exactly, below
  // the 50-digit threshold (kappa_rho ~ 1.4e50 > 1 / (16 N^2 eps) = 2.9e48)
  // and far above the 100-digit one.
  const MatrixXd identity = MatrixXd::Identity(2, 2);
  const VectorXd column = (VectorXd(2) << 1.0, 1e-50).finished();
  MpReference ref50(50), ref100(100);
  ref50.reset(identity);
  ref100.reset(identity);
  EXPECT_EQ(ref50.ratio(1, column).value, 0.0);
  EXPECT_EQ(ref100.ratio(1, column).value, 1e-50);
  ref50.accept();
  ref100.accept();
  expect_singular_state(ref50);
  EXPECT_FALSE(ref100.singular());
  EXPECT_NEAR(double(ref100.log_det().log_abs), std::log(1e-50), 1e-13);
}

TEST(MpReference, AssignTakesASingularMatrixWhereResetRefusesIt) {
  MatrixXd a(3, 3);
  a << 1, 2, 1, 3, 4, 3, 5, 6, 5;  // columns 0 and 2 equal
  MpReference ref;
  EXPECT_THROW(ref.reset(a), SingularMatrixError);
  ref.assign(a);
  expect_singular_state(ref);
}

// The benzene cycle in miniature: column 2 := column 1 (exactly singular),
// then column 1 := a fresh column. The cycle's ratio is det(P^T A^-1 C) from
// A_before's inverse, compared with an independent pair of mp LUs; the
// per-update ratios are 0 (onto the singular matrix) and undefined (from it).
TEST(MpReference, CycleThroughAnExactlySingularMatrixHasItsExactRatio) {
  MatrixXd a(4, 4);
  a << 2, 1, 0, 1, 1, 3, 1, 0, 0, 1, 4, 2, 1, 0, 1, 5;
  const VectorXd fresh = (VectorXd(4) << 0.5, -1.0, 2.0, 0.25).finished();
  MatrixXd after = a;
  after.col(2) = a.col(1);
  after.col(1) = fresh;
  for (int digits : {50, 100}) {
    MpReference ref(digits);
    ref.reset(a);
    MatrixXd columns(4, 2);
    columns << a.col(1), fresh;
    const CycleInfo cycle = ref.apply_cycle({2, 1}, columns);
    const MpLogDet la = mp_log_det(a, digits), lb = mp_log_det(after, digits);
    const double exact = double(la.sign * lb.sign * std::exp(lb.log_abs - la.log_abs));
    // Both sides are rounded to double from mp values of a kappa ~ 10
    // matrix: within 2 double roundings.
    EXPECT_NEAR(cycle.ratio.value, exact, 2 * std::numeric_limits<double>::epsilon() * std::abs(exact));
    ASSERT_EQ(cycle.per_update.size(), 2u);
    EXPECT_EQ(cycle.per_update[0].value, 0.0);
    EXPECT_FALSE(cycle.per_update[1].defined);
    EXPECT_FALSE(ref.singular());
    EXPECT_EQ(ref.matrix(), after);
    EXPECT_EQ(ref.log_det().sign, lb.sign);
  }
}

TEST(MpReference, ResetRejectsSingularAndNonFiniteMatrices) {
  MpReference ref;
  MatrixXd equal_columns(3, 3);
  equal_columns << 1, 2, 1, 3, 4, 3, 5, 6, 5;
  for (const MatrixXd& a : {equal_columns, MatrixXd(MatrixXd::Zero(3, 3))}) {
    try {
      ref.reset(a);
      ADD_FAILURE() << "singular matrix accepted";
    } catch (const SingularMatrixError& e) {
      EXPECT_NE(std::string(e.what()).find("singular"), std::string::npos) << e.what();
    }
    EXPECT_THROW(ref.log_det(), std::logic_error);  // no state after a failed reset
  }
  for (double bad : {std::nan(""), -std::numeric_limits<double>::infinity()}) {
    MatrixXd a = MatrixXd::Identity(3, 3);
    a(0, 0) = bad;
    try {
      ref.reset(a);
      ADD_FAILURE() << "non-finite matrix accepted";
    } catch (const SingularMatrixError& e) {
      EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ref.reset(MatrixXd(2, 3)), std::invalid_argument);
}

TEST(MpReference, ProtocolErrorsThrowLogicError) {
  MpReference ref;
  const VectorXd column = VectorXd::Ones(3);
  EXPECT_THROW(ref.ratio(0, column), std::logic_error);  // before reset
  ref.reset(MatrixXd::Identity(3, 3));
  EXPECT_THROW(ref.accept(), std::logic_error);
  EXPECT_THROW(ref.reject(), std::logic_error);
  EXPECT_THROW(ref.ratio(-1, column), std::logic_error);
  EXPECT_THROW(ref.ratio(3, column), std::logic_error);
  EXPECT_THROW(ref.ratio(0, VectorXd::Ones(4)), std::logic_error);
  EXPECT_THROW(ref.ratio(0, VectorXd::Constant(3, std::nan(""))), std::logic_error);
  ref.ratio(0, column);
  EXPECT_THROW(ref.ratio(1, column), std::logic_error);  // one is pending
  ref.reject();
  EXPECT_THROW(ref.accept(), std::logic_error);  // the rejected one is gone
  EXPECT_THROW((MpReference{50, -1}), std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab::reference
