#pragma once
// QR-updating strategies: keep A P = Q R explicitly (Q orthogonal, R upper
// triangular, P a column permutation) and never form an inverse.
//
// What: "qr-givens" (McDaniel & Wong's delete-append scheme: delete the moved
// column with Givens rotations, append the new one last) and "qr-rank1"
// (Golub & Van Loan's rank-1 QR update, columns in place), chosen by
// UpdaterOptions::variant (QrScheme). ratio() is one GEMV and a partial back
// substitution, O(N^2); accept() O(N^2); a refactorisation O(N^3).
// Preconditions: the DeterminantUpdater protocol; precision float or double
// (no mixed variant).
// Guarantees: log_det() is sum log|R_ii| of the current R with the sign of
// det Q, the rotations and the permutation; ratio_log_det() accumulates the
// accepted ratios independently, as a cross-check; maintained() exposes Q, R
// and column_of in double and changes nothing.
// Errors: reset() of a singular matrix throws SingularMatrixError; a ratio
// below options.breakdown or not finite is a breakdown; an accepted
// breakdown (and every recompute_every accepted moves) refactorises.
// The derivation of each step and its flop count: qr_givens.cpp.

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

/// "qr-givens": McDaniel & Wong's delete-append scheme by default; variant
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
