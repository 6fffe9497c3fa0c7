#pragma once
// Internal to the fast and the BLAS-certified references: a double LU of the
// exact A and its residual in double-double, the pieces both build their
// log|det| from. With M = L U (computed factors, L unit lower), P the row
// swaps and E = P A - M:
//   det(P A) = det(M) det(I + F),  F = M^{-1} E,  det M = prod U_ii exactly.
// E is computed by Dot2 (dd_kernels.hpp), F^ from E's high part by two
// triangular solves in double; |L||U| and |L||U||F^| by dtrmm on the
// non-negative matrices, for the error bounds.

#include <Eigen/Core>

#include <limits>
#include <vector>

#include "slaterlab/reference/dd_kernels.hpp"

namespace slaterlab::reference::detail {

inline constexpr double kU = dd::kUnitRoundoff;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct DoubleLu {
  Eigen::MatrixXd lu;
  std::vector<int> pivots;  // LAPACK's 1-based ipiv
};

/// LAPACK dgetrf. Throws SingularMatrixError on a zero pivot or a non-finite entry.
DoubleLu double_lu(const Eigen::MatrixXd& a);
/// LAPACK dgetri: approximately A^{-1}.
Eigen::MatrixXd lu_inverse(const DoubleLu& f);
/// getri's A^{-1} = M^{-1} P with P undone: approximately M^{-1}.
Eigen::MatrixXd unpermuted_inverse(const Eigen::MatrixXd& x, const std::vector<int>& pivots);
/// P A for LAPACK's ipiv; swap_sign = det P.
Eigen::MatrixXd permuted_rows(const Eigen::MatrixXd& a, const std::vector<int>& pivots,
                              int& swap_sign);

struct LuResidual {
  DoubleLu lu;
  int swap_sign = 1;         ///< det P
  Eigen::MatrixXd l;         ///< L with its unit diagonal (strict upper part unspecified)
  Eigen::MatrixXd pa;        ///< P A
  Eigen::MatrixXd x;         ///< getri's A^{-1}
  Eigen::MatrixXd minv;      ///< x with P undone: approximately M^{-1}
  Eigen::MatrixXd eh, el;    ///< E in dd
  Eigen::MatrixXd f;         ///< F^ = M^{-1} eh by dtrsm
  Eigen::MatrixXd lu_abs;    ///< fl(|L||U|)
  Eigen::MatrixXd luf_abs;   ///< fl(|L||U||F^|)
  dd::Dd trace;              ///< tr F^ in dd
  double trace2 = 0.0;       ///< tr F^2 in double
};

LuResidual lu_residual(const Eigen::MatrixXd& a);

double norm_1(const Eigen::MatrixXd& m);
double norm_inf(const Eigen::MatrixXd& m);
/// An upper bound of ||m||_F that neither overflows nor loses to underflow
/// below ||m||_F: the entries scaled by a power of two to at most 1, the
/// squares' roundings (gamma_{N^2 + 1}) and underflows covered.
double frobenius_bound(const Eigen::MatrixXd& m);

/// gamma_{2k}^2: Dot2's bound per unit of sum |terms| for k products (dd_kernels.hpp).
inline double dot2_gamma2(double terms) { return dd::gamma(2 * terms) * dd::gamma(2 * terms); }

/// Rounds a computed bound up generously enough to cover the roundings of
/// the double operations that produced it: sums of at most N^2 non-negative
/// terms, relative error gamma_{N^2} < 2e-9 for N <= 4096.
inline double up(double bound) { return bound * (1 + 1e-8); }

/// sum_i (|P| |Q|)_ii = sum_ik |P_ik| |Q_ki|.
double trace_of_abs_product(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q);

}  // namespace slaterlab::reference::detail
