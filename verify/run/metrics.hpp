#pragma once
// Accuracy metrics of a strategy's maintained state (docs/compared.md, Metrics).
//
// The residuals (A X - I, Q R - A P, Q^T Q - I) are differences of nearly
// equal quantities: evaluated as one double GEMM, the evaluation error
// (gamma_N |P||Q|) would exceed the residual of a double strategy. They are
// evaluated by an error-free split into three double GEMMs (Ozaki, Ogita,
// Oishi and Rump 2012), at BLAS speed: the error is at most
//   6 gamma_{N+1} 2^-beta N max|P| max|Q|,  beta = floor((53 - ceil(log2 N)) / 2)
// in any entry (metrics.cpp derives it; beta = 21 at N = 1024), 2^-18 of a
// plain double GEMM's bound. Evaluation::long_double is the plain reference version (Eigen's
// GEMM in x87 extended precision, error gamma_N^ld |P||Q|), O(N^3) long
// double flops: for tests, and the split's fallback where its scalings would
// leave the double exponent range.
// Inputs: square, same size (C too); non-finite entries give +inf.

#include <Eigen/Core>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"

namespace slaterlab {

/// How a residual is evaluated: split_dgemm and long_double as above;
/// shared_pivot by InverseResiduals (below), which only reports it.
enum class Evaluation { split_dgemm, long_double, shared_pivot };

/// P Q - C (C = I when c is null), reduced to its norms.
struct ProductResidual {
  double max_abs = 0.0;        // max_ij |(P Q - C)_ij|
  double frobenius = 0.0;      // ||P Q - C||_F
  double max_abs_bound = 0.0;  // bound of the evaluation's error in any entry
};
ProductResidual product_residual(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q,
                                 const Eigen::MatrixXd* c,
                                 Evaluation evaluation = Evaluation::split_dgemm);

struct InverseResidual {
  double max_abs = 0.0;         // max_ij |(A X - I)_ij|
  double frobenius_rms = 0.0;   // ||A X - I||_F / sqrt(N)
  double max_abs_bound = 0.0;   // bound of the evaluation's error in any entry
  Evaluation evaluation = Evaluation::split_dgemm;
};

/// Residual of X as the inverse of A.
InverseResidual inverse_residual(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x,
                                 Evaluation evaluation = Evaluation::split_dgemm);

/// A X - I for the several X (the strategies' inverses) of one checkpoint,
/// at one DGEMM per X: A X - I = (A Y - I) + A (X - Y) with Y the pivot (any
/// double approximation of A^{-1}: the reference's inverse), whose residual
/// the split evaluates once. The error of A (X - Y), about gamma_N |A||X - Y|,
/// grows with kappa: an X whose bound (metrics.cpp) exceeds kPivotAccuracy
/// times the residual measured is evaluated by the split alone, as
/// inverse_residual(a, x). `a` must outlive the object.
class InverseResiduals {
 public:
  static constexpr double kPivotAccuracy = 1e-3;
  InverseResiduals(const Eigen::MatrixXd& a, const Eigen::MatrixXd& pivot);
  /// With the pivot's residual A Y - I already evaluated (rounded to double)
  /// and a bound of any entry's error, rounding included (a reference's
  /// checkpoint inverse computes it): no split here.
  InverseResiduals(const Eigen::MatrixXd& a, Eigen::MatrixXd pivot, Eigen::MatrixXd pivot_residual,
                   double pivot_bound);
  InverseResidual operator()(const Eigen::MatrixXd& x) const;

 private:
  const Eigen::MatrixXd& a_;
  Eigen::MatrixXd pivot_;
  Eigen::MatrixXd pivot_residual_;  // A Y - I, rounded to double
  double pivot_bound_ = 0.0;        // its error bound, the rounding included
  double a_row_norm_ = 0.0;         // max_i ||A(i,:)||_1
  bool usable_ = false;             // the split of A Y was exact and Y finite
};

/// ||X - X_ref||_F / ||X_ref||_F (O(N^2), in long double).
double relative_divergence(const Eigen::MatrixXd& x, const Eigen::MatrixXd& x_ref);

/// ||A||_1 ||X||_1 (the 1-norm condition number when X = A^{-1}).
double condition_1(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x);

/// ||Q R - A P||_F / ||A||_F with A P the columns of A in QR's physical order.
double qr_residual(const QrFactors& qr, const Eigen::MatrixXd& a,
                   Evaluation evaluation = Evaluation::split_dgemm);

/// ||Q^T Q - I||_F.
double orthogonality_loss(const Eigen::MatrixXd& q, Evaluation evaluation = Evaluation::split_dgemm);

}  // namespace slaterlab
