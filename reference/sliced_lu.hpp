#pragma once
// Internal to the BLAS-certified log|det|: the double LU's factors rounded
// to slices whose products double arithmetic computes without error
// (Ozaki, Ogita, Oishi, Rump, Numer. Algorithms 59, 2012), and with them the
// residual P A - L' U' of the rounded factors, exactly but for a term of
// order u^3 |L'||U'| that the result bounds.
//
// Contract: slice_lu rounds the unit lower L to a grid 2^-3bL (bL + bU =
// 53 - ceil(log2 N) bits per slice, three slices each) and each column j of U to
// 2^(f_j - 3bU), |U_ij| <= 2^f_j; L' = sum L_s and U' = sum U_t are the rounded
// factors (L' still unit lower). refinement_residual splits P A by rows and
// F by columns in the same way. Every product L_s U_t is then an exact
// double matrix under IEEE binary64 and BLAS kernels that form each entry as
// a sum of its products in any order (with or without FMA): |integer parts|
// <= 2^(bL + bU) and at most N terms. `failure` is non-empty when a column's
// grid would underflow or overflow, or a rounded pivot U'_jj is zero.

#include <Eigen/Core>

#include <array>
#include <string>

namespace slaterlab::reference::detail {

struct SlicedLu {
  Eigen::MatrixXd l;  ///< L' with its unit diagonal, zeros above
  Eigen::MatrixXd u;  ///< U', zeros below
  std::array<Eigen::MatrixXd, 3> l_slices, u_slices;
  std::string failure;
};

/// From LAPACK's packed lu (L strictly below the diagonal, U on and above).
SlicedLu slice_lu(const Eigen::MatrixXd& lu);

/// E = P A - L' U' as hi + lo with |E - hi - lo| <= error entrywise.
struct ExactResidual {
  Eigen::MatrixXd hi, lo;
  double error = 0.0;
};

ExactResidual exact_lu_residual(const Eigen::MatrixXd& pa, const SlicedLu& f);

/// The refinement residual H = E - M F' (M = L' U'), F' = `f` rounded to two
/// column slices (f becomes F'), computed as E - P A F' + E F' with P A in two
/// row slices: the four slice products exact, (P A's remainder - E.hi) times
/// F' in double, one DGEMM. |H - h| <= d + x y^T entrywise. `failure` is non-empty
/// (and nothing computed) when P A's and F's largest entries multiply beyond
/// 2^960, where the grids could overflow.
struct RefinementResidual {
  Eigen::MatrixXd h, d;
  Eigen::VectorXd x, y;
  std::string failure;
};

RefinementResidual refinement_residual(const Eigen::MatrixXd& pa, const ExactResidual& e,
                                       Eigen::MatrixXd& f);

}  // namespace slaterlab::reference::detail
