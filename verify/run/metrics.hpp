#pragma once
// Accuracy metrics of a strategy's maintained state (docs/compared.md, Metrics).
//
// Residuals of double-precision strategies are themselves of order N eps_d
// kappa; evaluated in double, the evaluation error would be of the same
// order as the quantity. They are therefore evaluated in long double (x87
// extended, eps = 5.4e-20), which puts the evaluation error about 2000 times
// below what a double strategy can reach.

#include <Eigen/Core>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"

namespace slaterlab {

struct InverseResidual {
  double max_abs;         // max_ij |(A X - I)_ij|
  double frobenius_rms;   // ||A X - I||_F / sqrt(N)
};

/// Residual of X as the inverse of A.
InverseResidual inverse_residual(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x);

/// ||X - X_ref||_F / ||X_ref||_F.
double relative_divergence(const Eigen::MatrixXd& x, const Eigen::MatrixXd& x_ref);

/// ||A||_1 ||X||_1 (the 1-norm condition number when X = A^{-1}).
double condition_1(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x);

/// ||Q R - A P||_F / ||A||_F with A P the columns of A in QR's physical order.
double qr_residual(const QrFactors& qr, const Eigen::MatrixXd& a);

/// ||Q^T Q - I||_F.
double orthogonality_loss(const Eigen::MatrixXd& q);

}  // namespace slaterlab
