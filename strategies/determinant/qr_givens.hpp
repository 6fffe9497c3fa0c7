#pragma once
// QR-updating strategies: keep A P = Q R explicitly (Q orthogonal, R upper
// triangular, P a column permutation) and never form an inverse.
//
// Ratio. With A P = Q R, A^{-1} = P R^{-1} Q^T, so for a proposal (k, a')
//   w   = Q^T a'                         (one GEMV, N^2)
//   rho = e_k^T A^{-1} a' = (R^{-1} w)_j  with j the physical column holding
//                                         logical column k,
// which is det(R + (w - R e_j) e_j^T) / det(R). Only z_j of R z = w is
// needed, so the back substitution stops at row j: (N - j)^2 / 2 flops.
//
// Accept, two schemes (UpdaterOptions::variant picks one; see QrScheme):
//  - delete-append (the seed's scheme, factory name "qr-givens"): delete
//    physical column j of R; the trailing part becomes upper Hessenberg and
//    N - 1 - j Givens rotations on rows (c, c+1) restore triangular form
//    (their transposes multiply Q from the right); the new column, Q^T a'
//    rotated along, is appended last. The logical-to-physical permutation
//    (QrFactors::column_of) and its sign are tracked. About
//    6 N (N - j) + 3 (N - j)^2 flops.
//  - rank1 (Golub & Van Loan, Matrix Computations, 3rd ed., section 12.5.1;
//    factory name "qr-rank1"): A + u e_j^T with u = a' - a_j, Q^T u taken as
//    w - R e_j (consistent with the current factors, so column j of Q R
//    becomes Q w, i.e. a' up to rounding). R + (w - R e_j) e_j^T is R with
//    column j replaced by w: triangular but for a spike below the diagonal
//    in column j. The textbook update reduces all of Q^T u to a multiple of
//    e_1 (2 (N - 1) rotations over all of R and Q, about 18 N^2 flops); the
//    spike needs only the rotations below row j: N - 1 - j on rows
//    (i, i+1), bottom up, fold w's tail into row j (making the trailing
//    block upper Hessenberg), and N - 2 - j, top down, remove that
//    subdiagonal. Columns stay in place, no permutation. About
//    12 N (N - j) + 6 (N - j)^2 flops (7.5 N^2 for j uniform).
//
// Determinant. det A = det Q * prod_i R_ii * sign(P). det Q starts as
// (-1)^(number of non-trivial Householder reflectors) of the initial
// factorisation (LAPACK geqrf: a reflector with tau = 0 is the identity) and
// every Givens rotation has det +1. log_det() is sum log|R_ii| of the current
// R (accumulated in double); ratio_log_det() is the initial value plus
// sum log|rho| of the accepted ratios, kept independently as a cross-check.
//
// Precision: Storage is float or double for everything (factorisation,
// rotations, solves); there is no mixed variant. Inputs are rounded to
// Storage. maintained() exposes Q, R and column_of in double.
//
// Refactorisation (Householder QR of the exact matrix, permutation reset to
// the identity) happens every recompute_every accepted moves and after an
// accepted breakdown. Cost: O(N^2) per proposal and per accept, O(N^3) per
// refactorisation.

#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/linalg.hpp"
#include "slaterlab/strategies/determinant/updater_base.hpp"

namespace slaterlab {

/// How an accepted column replacement is folded into Q R.
enum class QrScheme {
  delete_append,  ///< delete the column, retriangularise, append the new column last
  rank1,          ///< Golub-Van Loan rank-1 update, columns stay in place
};

template <class Storage>
class QrUpdater : public UpdaterBase {
 public:
  QrUpdater(UpdaterOptions options, QrScheme scheme);

  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  void reject() override;
  void flush() override {}
  /// sum log|R_ii| with sign det(Q) * sign(prod R_ii) * sign(P).
  LogDet log_det() const override;
  MaintainedState maintained() const override;

  QrScheme scheme() const { return scheme_; }
  /// log|det| accumulated from the accepted ratios since the last
  /// refactorisation (which sets it to log_det()).
  LogDet ratio_log_det() const { return ratio_log_det_; }

 private:
  void refactorise();
  void accept_delete_append(Eigen::Index j);
  void accept_rank1(Eigen::Index j);
  /// Rotation G = [c s; -s c] on rows (i, i+1) of R from column `from` on,
  /// and Q <- Q G^T on columns (i, i+1).
  void rotate(Eigen::Index i, Storage c, Storage s, Eigen::Index from);

  QrScheme scheme_;
  MatrixX<Storage> q_;
  MatrixX<Storage> r_;
  std::vector<Eigen::Index> column_of_;  // physical column -> logical column
  std::vector<Eigen::Index> physical_;   // logical column -> physical column
  int q_sign_ = 1;                       // det Q
  int perm_sign_ = 1;                    // sign of the permutation
  LogDet ratio_log_det_;
  double pending_ratio_ = 0.0;
  VectorX<Storage> w_;       // Q^T a' of the pending proposal
  VectorX<Storage> column_;  // workspace: a' rounded to Storage
  VectorX<Storage> z_;       // workspace: the back substitution for rho
};

/// "qr-givens": the seed's delete-append scheme by default; variant
/// "delete-append" names it explicitly and "rank1" selects the other scheme.
template <class Storage>
class QrGivens final : public QrUpdater<Storage> {
 public:
  explicit QrGivens(UpdaterOptions options);
};

/// "qr-rank1": the Golub-Van Loan rank-1 update (variant "" or "rank1").
template <class Storage>
class QrRank1 final : public QrUpdater<Storage> {
 public:
  explicit QrRank1(UpdaterOptions options);
};

}  // namespace slaterlab
