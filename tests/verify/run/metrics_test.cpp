// Metrics against cases whose answer is known in closed form, and the split
// (DGEMM) evaluation of the residuals against the long double one and a
// double-double oracle, on strategies' own inverses and QR factors.
#include "verify/run/metrics.hpp"

#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <limits>
#include <string>

#include "slaterlab/reference/dd_kernels.hpp"
#include "slaterlab/reference/fast_reference.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/inputs/workload_registry.hpp"

namespace slaterlab {
namespace {

constexpr Evaluation kBoth[] = {Evaluation::split_dgemm, Evaluation::long_double};
constexpr double kU = 0x1p-53;

/// P Q - C by Dot2 in double-double (reference/dd_kernels.hpp), rounded to
/// double: its error, u |R| + gamma_{2N}^2 |P||Q| before the rounding, is
/// below 2^-80 |P||Q| for N <= 256, far below the bounds it checks.
Eigen::MatrixXd dd_residual(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q,
                            const Eigen::MatrixXd& c) {
  const int n = int(p.rows());
  Eigen::MatrixXd hi(n, n), lo(n, n);
  reference::dd::residual_gemm(n, n, int(p.cols()), p.data(), n, reference::dd::Shape::full,
                               q.data(), int(q.rows()), reference::dd::Shape::full, c.data(), n,
                               hi.data(), lo.data(), n);
  return -(hi + lo);  // residual_gemm gives C - P Q
}

/// The oracle's error in an entry: the rounding of its dd value to double,
/// plus Dot2's gamma_{2N}^2 sum |terms|.
double oracle_error(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q, const Eigen::MatrixXd& r) {
  const double g = reference::dd::gamma(2.0 * double(p.cols()));
  return kU * r.cwiseAbs().maxCoeff() +
         g * g * (p.cwiseAbs() * q.cwiseAbs()).maxCoeff() * 1.01;
}

Eigen::MatrixXd randsvd(Eigen::Index n, double kappa, std::uint64_t seed) {
  WorkloadSpec spec;
  spec.kind = "randsvd";
  spec.n = n;
  spec.seed = seed;
  spec.kappa = kappa;
  return make_workload(spec)->initial_matrix();
}

/// Both evaluations agree with the oracle within their own bounds, and the
/// split's bound is below 1 % of what it measures (metrics.cpp puts it at
/// most 100 sqrt(N) 2^-beta = 3.4e-4 at N = 200 of the residual of an
/// inverse computed in double; the QR residuals are of the same kind).
void expect_accurate(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q, const Eigen::MatrixXd& c,
                     const std::string& what) {
  const Eigen::MatrixXd exact = dd_residual(p, q, c);
  const double oracle = oracle_error(p, q, exact);
  const double exact_max = exact.cwiseAbs().maxCoeff();
  const double n = double(p.rows());
  for (const Evaluation e : kBoth) {
    const ProductResidual r = product_residual(p, q, &c, e);
    const bool split = e == Evaluation::split_dgemm;
    EXPECT_LE(std::abs(r.max_abs - exact_max), r.max_abs_bound + oracle)
        << what << (split ? " split" : " long double");
    // ||E||_F <= N max |E_ij| over the N^2 entries.
    EXPECT_LE(std::abs(r.frobenius - exact.norm()), n * (r.max_abs_bound + oracle) + kU * exact.norm())
        << what << (split ? " split" : " long double");
    if (split) {
      EXPECT_LE(r.max_abs_bound, 1e-2 * exact_max) << what;
    }
  }
}

TEST(Metrics, ExactInverseOfADiagonalMatrixHasZeroResidual) {
  // Powers of two: A and its inverse are exact and so is their product.
  Eigen::VectorXd d(4);
  d << 2, 4, 0.5, 8;
  const InverseResidual r = inverse_residual(d.asDiagonal().toDenseMatrix(),
                                             d.cwiseInverse().asDiagonal().toDenseMatrix());
  EXPECT_EQ(r.max_abs, 0.0);
  EXPECT_EQ(r.frobenius_rms, 0.0);
}

TEST(Metrics, ResidualSeesAPerturbationOfOneEntry) {
  const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(4, 4);
  Eigen::MatrixXd x = a;
  x(1, 2) = 1e-3;
  const InverseResidual r = inverse_residual(a, x);
  EXPECT_DOUBLE_EQ(r.max_abs, 1e-3);
  EXPECT_DOUBLE_EQ(r.frobenius_rms, 1e-3 / 2.0);  // ||E||_F / sqrt(4)
}

TEST(Metrics, ResidualIsResolvedBelowDoubleRounding) {
  // A residual of 2^-52 next to entries of 1 is measured exactly by both
  // evaluations: the split keeps 2^-52 in A's low part, long double has 11
  // bits to spare; a double GEMM would round 1 + 2^-52 - 1 correctly only by
  // luck of the order, and lose 1 + 2^-54 entirely.
  for (const Evaluation e : kBoth) {
    for (const int bits : {52, 54}) {
      Eigen::MatrixXd a = Eigen::MatrixXd::Identity(3, 3);
      a(0, 0) = 1.0 + std::ldexp(1.0, -std::min(bits, 52));
      if (bits == 54) a(0, 1) = std::ldexp(1.0, -54);  // off the diagonal: representable
      const Eigen::MatrixXd x = Eigen::MatrixXd::Identity(3, 3);
      EXPECT_EQ(inverse_residual(a, x, e).max_abs, std::ldexp(1.0, -std::min(bits, 52)));
    }
  }
}

/// visit(X, what) for sm's inverse of A at float, mixed and double, where
/// the strategy can factorise A (not singular to float).
template <class Visit>
void for_each_precision_inverse(const Eigen::MatrixXd& a, const std::string& what, const Visit& visit) {
  for (const Precision precision : {Precision::single, Precision::mixed, Precision::double_}) {
    UpdaterOptions options;
    options.precision = precision;
    const auto sm = make_updater("sm", options);
    try {
      sm->reset(a);
    } catch (const SingularMatrixError&) {
      continue;
    }
    visit(*sm->maintained().inverse, what + " " + std::string(to_string(precision)));
  }
}

/// Every precision's inverse of a: the pivot's residual agrees with the dd
/// oracle within its bound, a bound below 1e-2 of the residual.
void expect_pivot_agrees(const Eigen::MatrixXd& a, const InverseResiduals& residuals, double kappa) {
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(a.rows(), a.cols());
  for_each_precision_inverse(a, "kappa " + std::to_string(kappa), [&](const Eigen::MatrixXd& x,
                                                                      const std::string& what) {
    const Eigen::MatrixXd exact = dd_residual(a, x, identity);
    const double exact_max = exact.cwiseAbs().maxCoeff();
    const InverseResidual r = residuals(x);
    EXPECT_LE(std::abs(r.max_abs - exact_max), r.max_abs_bound + oracle_error(a, x, exact)) << what;
    EXPECT_LE(r.max_abs_bound, 1e-2 * exact_max) << what;
    // Its error relative to the residual is about N u kappa = 2e-6 at
    // kappa = 1e8, far below kPivotAccuracy: the pivot serves every
    // precision there.
    if (kappa <= 1e8) {
      EXPECT_EQ(r.evaluation, Evaluation::shared_pivot) << what;
    }
  });
}

TEST(Metrics, SplitAgreesWithTheOracleOnStrategiesInverses) {
  // N = 200: the slices have beta = 22 bits (ceil(log2 200) = 8), not a power of two.
  for (const double kappa : {1.0, 1e8, 1e12}) {
    const Eigen::MatrixXd a = randsvd(200, kappa, 5);
    for_each_precision_inverse(a, "kappa " + std::to_string(kappa),
                               [&](const Eigen::MatrixXd& x, const std::string& what) {
                                 expect_accurate(a, x, Eigen::MatrixXd::Identity(200, 200), what);
                               });
  }
}

TEST(Metrics, SharedPivotAgreesWithTheOracleWithinItsBound) {
  // The pivot is a double inverse from another LU (as the reference's is
  // one of its own); the strategies' inverses differ from it by their
  // rounding errors, times kappa.
  for (const double kappa : {1.0, 1e8, 1e12}) {
    const Eigen::MatrixXd a = randsvd(200, kappa, 8);
    expect_pivot_agrees(a, InverseResiduals(a, a.partialPivLu().inverse()), kappa);
  }
}

TEST(Metrics, AReferencesStartAndItsResidualServeAsThePivot) {
  // The fast reference's checkpoint inverse hands out the double inverse it
  // refined and that one's residual with an entrywise bound: the same
  // guarantees as the pivot evaluated here (the previous test's).
  const Eigen::Index n = 200;
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(n, n);
  for (const double kappa : {1.0, 1e8, 1e12}) {
    const Eigen::MatrixXd a = randsvd(n, kappa, 8);
    reference::FastReference fast;
    fast.reset(a);
    reference::FastInverse inverse = fast.inverse();
    ASSERT_TRUE(std::isfinite(inverse.start_residual_bound));
    const Eigen::MatrixXd start_exact = dd_residual(a, inverse.start, identity);
    EXPECT_LE((inverse.start_residual - start_exact).cwiseAbs().maxCoeff(),
              inverse.start_residual_bound + oracle_error(a, inverse.start, start_exact));
    expect_pivot_agrees(a,
                        InverseResiduals(a, std::move(inverse.start), std::move(inverse.start_residual),
                                         inverse.start_residual_bound),
                        kappa);
  }
}

TEST(Metrics, AnInverseEqualToThePivotHasThePivotsResidual) {
  // A double strategy right after its factorisation holds the same bits as
  // the reference's pivot: A (X - Y) = 0 without a product, and the result
  // is the pivot's own residual, within its bound of the dd oracle's.
  const Eigen::Index n = 200;
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(n, n);
  for (const double kappa : {1.0, 1e8}) {
    const Eigen::MatrixXd a = randsvd(n, kappa, 9);
    const Eigen::MatrixXd pivot = a.partialPivLu().inverse();
    const InverseResidual r = InverseResiduals(a, pivot)(pivot);
    const Eigen::MatrixXd exact = dd_residual(a, pivot, identity);
    EXPECT_EQ(r.evaluation, Evaluation::shared_pivot);
    EXPECT_LE(std::abs(r.max_abs - exact.cwiseAbs().maxCoeff()),
              r.max_abs_bound + oracle_error(a, pivot, exact));
    EXPECT_GT(r.max_abs, 0.0);  // kappa u: a residual, not the zero of A (X - Y)
  }
}

TEST(Metrics, SplitAgreesWithTheOracleOnQrFactors) {
  const Eigen::MatrixXd a = randsvd(96, 1e8, 6);
  UpdaterOptions options;
  const auto qr_strategy = make_updater("qr-givens", options);
  qr_strategy->reset(a);
  const QrFactors qr = *qr_strategy->maintained().qr;
  Eigen::MatrixXd ap(96, 96);
  for (Eigen::Index j = 0; j < 96; ++j) ap.col(j) = a.col(qr.column_of[j]);
  expect_accurate(qr.q, qr.r, ap, "Q R - A P");
  expect_accurate(qr.q.transpose(), qr.q, Eigen::MatrixXd::Identity(96, 96), "Q^T Q - I");
  // The metrics' own reductions agree between the evaluations, within the
  // bounds scaled to them (||E||_F <= N max|E_ij|).
  const double n = 96;
  const double qr_bound = n * (product_residual(qr.q, qr.r, &ap).max_abs_bound +
                               product_residual(qr.q, qr.r, &ap, Evaluation::long_double).max_abs_bound);
  EXPECT_NEAR(qr_residual(qr, a), qr_residual(qr, a, Evaluation::long_double), qr_bound / ap.norm());
  const Eigen::MatrixXd qt = qr.q.transpose();
  const double q_bound = n * (product_residual(qt, qr.q, nullptr).max_abs_bound +
                              product_residual(qt, qr.q, nullptr, Evaluation::long_double).max_abs_bound);
  EXPECT_NEAR(orthogonality_loss(qr.q), orthogonality_loss(qr.q, Evaluation::long_double), q_bound);
}

TEST(Metrics, ScalingsOutsideTheExponentRangeFallBackToLongDouble) {
  // Entries near 2^-600: the products' quantum 2^(e_i + f_j - 2 beta) is
  // below the smallest subnormal, so the split would not be exact.
  const Eigen::MatrixXd a = randsvd(16, 10, 7) * std::ldexp(1.0, -600);
  const Eigen::MatrixXd x = a.inverse() * std::ldexp(1.0, -600);
  const ProductResidual split = product_residual(a, x, nullptr);
  const ProductResidual plain = product_residual(a, x, nullptr, Evaluation::long_double);
  EXPECT_EQ(split.max_abs, plain.max_abs);
  EXPECT_EQ(split.frobenius, plain.frobenius);
}

TEST(Metrics, NonFiniteEntriesGiveAnInfiniteResidual) {
  const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(3, 3);
  Eigen::MatrixXd x = a;
  x(2, 1) = std::numeric_limits<double>::quiet_NaN();
  for (const Evaluation e : kBoth) {
    EXPECT_EQ(inverse_residual(a, x, e).max_abs, std::numeric_limits<double>::infinity());
    EXPECT_EQ(orthogonality_loss(x, e), std::numeric_limits<double>::infinity());
  }
}

TEST(Metrics, DivergenceAndConditionNumber) {
  Eigen::MatrixXd a(2, 2);
  a << 1, 0, 0, 1e-4;
  Eigen::MatrixXd inv(2, 2);
  inv << 1, 0, 0, 1e4;
  EXPECT_DOUBLE_EQ(condition_1(a, inv), 1e4);
  EXPECT_EQ(relative_divergence(inv, inv), 0.0);
  EXPECT_DOUBLE_EQ(relative_divergence(2.0 * inv, inv), 1.0);
}

TEST(Metrics, QrResidualUsesThePermutation) {
  // Q = I, R = diag(1,2): A must hold R's columns in the order column_of says.
  QrFactors qr{Eigen::MatrixXd::Identity(2, 2), Eigen::MatrixXd::Zero(2, 2), {1, 0}};
  qr.r(0, 0) = 1;
  qr.r(1, 1) = 2;
  Eigen::MatrixXd a(2, 2);  // logical column 1 is physical 0 and vice versa
  a << 0, 1, 2, 0;
  EXPECT_EQ(qr_residual(qr, a), 0.0);
  qr.column_of = {0, 1};
  EXPECT_GT(qr_residual(qr, a), 0.5);
  EXPECT_EQ(orthogonality_loss(qr.q), 0.0);
  EXPECT_DOUBLE_EQ(orthogonality_loss(2.0 * qr.q), std::sqrt(2.0) * 3.0);  // ||4I - I||_F
}

}  // namespace
}  // namespace slaterlab
