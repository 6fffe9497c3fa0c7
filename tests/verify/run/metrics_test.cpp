// Metrics against cases whose answer is known in closed form.
#include "verify/run/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace slaterlab {
namespace {

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
  // Evaluated in long double, a residual of 1e-17 (below double's 1.1e-16
  // spacing at 1) is still measured, to long double rounding (~N * 5.4e-20).
  Eigen::MatrixXd a = Eigen::MatrixXd::Identity(3, 3);
  a(0, 0) = 1.0 + std::ldexp(1.0, -52);
  const Eigen::MatrixXd x = Eigen::MatrixXd::Identity(3, 3);
  EXPECT_NEAR(inverse_residual(a, x).max_abs, std::ldexp(1.0, -52), 3 * 5.5e-20);
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
