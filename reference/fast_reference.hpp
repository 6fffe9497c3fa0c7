#pragma once
// The fast lockstep reference: what MpReference gives the runner, at BLAS
// speed, by mixed-precision iterative refinement with double-double
// residuals (dd_kernels.hpp). docs/fast-reference.md derives the bounds.
//
// - reset(A): double LU (LAPACK) of the exact A, its inverse X (a double
//   preconditioner), and log|det A| = log|det(L U)| + log det(I + F) with
//   F = (L U)^{-1} (P A - L U) from the exact (dd) residual P A - L U.
// - ratio(k, a'): y = A^{-1} a' refined against the exact A (dd residuals)
//   until its bound is a small fraction of the trust threshold and of an
//   ulp of y_k (so that it rounds as mp's does), or it stops shrinking; the
//   ratio is y_k (a last step may refine y_k alone, the rest of y then
//   waits for accept()). accept(): a double
//   Sherman-Morrison update of X (only a preconditioner) and det *= rho in
//   dd; a fresh LU when refinement contracts by less than 1e4 per step.
// - Every result carries an a-posteriori bound from its own residual (first
//   order in the observed contraction) and `trusted`: the bound is at most
//   kMargin times what double could err by (u kappa). Where it is false the
//   caller falls back to MpReference.
// - Errors: as MpReference (std::logic_error for protocol errors; reset() of
//   a matrix with a zero pivot or non-finite entries, and accept() of an
//   exactly zero ratio, throw SingularMatrixError, state as documented
//   there).

#include <Eigen/Core>

#include <cstdint>

#include "slaterlab/reference/dd_kernels.hpp"
#include "slaterlab/reference/mp.hpp"

namespace slaterlab::reference {

/// A result may judge double computations when its bound is below this
/// fraction of u kappa (u = 2^-53, kappa the quantity's condition number).
inline constexpr double kFastTrustMargin = 1e-3;
/// A ratio's refinement stops once its bound is at most this fraction of
/// both the trust threshold and u |rho| (where it can get there).
inline constexpr double kFastStopFraction = 1e-2;

struct FastRatio {
  RatioInfo info;            ///< value rounded to double, conditioning as RatioInfo
  double error_bound = 0.0;  ///< |rho - rho_dd| <= error_bound (before rounding to double)
  bool trusted = false;
  int refinement_steps = 0;
};

struct FastLogDet {
  MpLogDet value;
  double error_bound = 0.0;  ///< |log|det A| - value.log_abs| <= error_bound
  bool trusted = false;
};

struct FastInverse {
  Eigen::MatrixXd inverse;      ///< the refined inverse rounded to double
  double relative_bound = 0.0;  ///< ||A^{-1} - X||_1 / ||X||_1 before rounding
  bool trusted = false;
  /// The double inverse X_0 the refinement started from, A X_0 - I rounded
  /// to double, and a bound of every entry's error (its rounding included;
  /// infinite where none holds): a pivot for other inverses' residuals.
  Eigen::MatrixXd start;
  Eigen::MatrixXd start_residual;
  double start_residual_bound = 0.0;
};

class FastReference {
 public:
  FastReference() = default;

  void reset(const Eigen::MatrixXd& a);
  FastRatio ratio(Eigen::Index k, const Eigen::VectorXd& new_column);
  void accept();
  void reject();
  /// Fresh factorisation of the current matrix (dd log|det| included).
  void recompute();

  FastLogDet log_det() const;
  /// One refinement step X + X (I - A X) from the preconditioner X (a fresh
  /// double inverse, which then replaces it, where X's contraction is too
  /// large for one step), the residual to about u^2 (split BLAS products),
  /// and a second one where the first is not trusted: O(N^3), for
  /// checkpoints. The residual also measures ||I - A X||_inf, which the
  /// ratios' bounds use until the next call.
  FastInverse inverse();
  const Eigen::MatrixXd& matrix() const { return a_; }
  /// ||A||_1 ||X||_1 with X the double inverse (relative error below 1e-4).
  double condition_1() const;

  Eigen::Index size() const { return a_.rows(); }
  bool has_pending() const { return pending_; }
  /// True when log|det| has been carried through accepted ratios since its
  /// last factorisation (its bound then includes theirs).
  bool log_det_carried() const { return carried_ratios_ > 0; }
  /// Double refactorisations since reset() (the preconditioner's renewals).
  std::int64_t refactorisations() const { return refactorisations_; }

 private:
  void require_ready(const char* what) const;
  void factorize_with_log_det();
  void refactor_preconditioner();
  /// The double inverse X0 that inverse() refines (fast_reference.cpp).
  Eigen::MatrixXd start_of_inverse();
  /// y = A^{-1} a' refined (fast_reference.cpp), its bound for y_k and the contraction.
  struct Refined {
    Eigen::VectorXd hi, lo;
    Eigen::VectorXd x_row;  // e_k^T X
    double bound = 0.0;
    double theta = 0.0;
    double row_2 = 0.0;  // ||e_k^T X||_2
    int steps = 0;
    // The residual of the last step, when only entry k of y took it: y's
    // other entries are one X times this short of the refined y.
    Eigen::VectorXd deferred_step;
  };
  Refined refine(Eigen::Index k, const Eigen::VectorXd& new_column);
  /// kappa_rho |rho| for y = A^{-1} a' (RatioInfo's conditioning times |y_k|).
  double conditioning_scale(const Eigen::VectorXd& yh, Eigen::Index k, double row_2) const;
  /// Renews the row sums of |A| (row_abs_) from the current matrix.
  void renew_row_sums();

  Eigen::MatrixXd a_;
  Eigen::MatrixXd x_;  // double approximate inverse: the preconditioner
  dd::ScaledProduct det_;
  dd::Dd log_correction_;       // log det(I + F) of the last full factorisation
  double log_bound_ = 0.0;      // accumulated bound of log|det|
  double a_frobenius_ = 0.0;
  Eigen::VectorXd row_abs_;     // upper bounds of the row sums of |A|: ||A||_inf = max
  // theta >= ||I - A X||_inf as far as seen: measured (proven) by each
  // inverse() for X as it was then, a-priori after a factorisation, and
  // raised by each proposal's ||r_0||_inf / ||a'||_inf (docs/fast-reference.md).
  double contraction_ = 0.0;
  bool ready_ = false;
  bool pending_ = false;
  Eigen::Index pending_k_ = 0;
  Eigen::VectorXd pending_column_;
  Eigen::VectorXd pending_y_;   // A^{-1} a' rounded to double (but see pending_step_)
  Eigen::VectorXd pending_step_;  // Refined::deferred_step: accept() adds X times it
  Eigen::VectorXd pending_x_row_;  // e_k^T X
  dd::Dd pending_rho_;
  double pending_bound_ = 0.0;
  std::int64_t refactorisations_ = 0;
  std::int64_t updates_since_refactor_ = 0;  // Sherman-Morrison updates of x_
  std::int64_t carried_ratios_ = 0;          // accepted ratios in det_ since its factorisation
};

}  // namespace slaterlab::reference
