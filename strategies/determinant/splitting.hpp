#pragma once
// Sherman-Morrison with splitting (QMCkl's qmckl_sherman_morrison_splitting,
// after J. Slagel): an update whose Sherman-Morrison denominator is below the
// threshold tau is split in two halves, one applied now and one queued.
//
// Threshold. tau = options.breakdown. The factory (make_splitting) replaces
// the generic default UpdaterOptions{}.breakdown (1e-12) by
// kDefaultSplittingThreshold = 1e-3, QMCkl's customary value; any other
// value is taken as given (so a caller who wants 1e-12 for this strategy
// passes e.g. 1.0000001e-12). |rho| < tau (or a non-finite rho) is reported
// as a breakdown by ratio(), as for every strategy: it is the event QMCkl
// calls a breakdown. What differs is the recovery, see accept() below.
//
// State. Ainv is the inverse of the APPLIED matrix A_app; the queue holds
// the columns c_1 .. c_q (at most one entry each) whose pieces have not been
// applied,
//   A = A_app + Q P^T,  Q = [v_1 .. v_q],  P = [e_c1 .. e_cq],
// with A the exact current matrix (every accepted column) and t_j = A e_cj
// the column c_j is heading to (v_j = t_j - A_app e_cj). The Woodbury matrix
// S = I_q + P^T Ainv Q (q x q, det S = det A / det A_app) is kept with its LU
// whenever the queue is not empty.
//
// Sherman-Morrison's form. Wherever the exact identity Ainv A_app = I makes a
// term exactly e_i or delta_ij, the term is substituted rather than computed,
// as sm substitutes Ainv a_k = e_k: Ainv v_j = Ainv t_j - e_cj, so
//   S_ij = r_ci t_j,  1 + r_c v_c = r_c t_c,  r_k v_j = r_k t_j (k != c_j).
// Computing them from v_j instead would add the inverse's residual
// r_ci A_app e_cj - delta_ij (of size eps times the growth of every update
// since the last factorisation) to an S whose size is the ratio of a
// near-singular move: after releases by ~1e7 and a split move with
// rho = -6.9e-8 that residual alone made the next ratio err 1e-3, where sm,
// in its substituted form, erred 2e-9. The pieces v_j are then never needed.
//
// Ratio (always the exact determinant ratio of the full replacement of
// column k by a', queue or not). Let r_i = e_i^T Ainv (rows of Ainv) and
// den0 = r_k a' = det(A_app with column k replaced by a') / det(A_app), the
// Sherman-Morrison denominator of the move against A_app.
//   - empty queue: rho = den0, computed exactly as sm computes it (so with
//     no split the two strategies are bit-identical);
//   - k not queued: the move extends S by one row and column, and
//     rho = det(S') / det(S) = den0 - c^T S^{-1} b,  b_i = r_ci a', c_j = r_k t_j;
//   - k queued as piece s: the move replaces column s of S by b (the queued
//     piece is absorbed: column k becomes a' whatever part was applied), so
//     rho = det(S') / det(S) = (S^{-1} b)_s.
//   Cost O(N q + q^2) on top of sm's O(N).
//
// accept(). The fresh piece is f = a' - (column k of A_app), i.e. the move
// merged with k's queued piece if any; its denominator is den0 and
// Ainv f = Ainv a' - e_k (the sm vector): it is never formed itself.
//   1. |den0| >= tau: apply f whole (exactly the sm update, divisor den0).
//   2. otherwise split: apply f/2 with divisor 1 + (den0 - 1)/2 (Ainv f/2 is
//      the sm vector halved, exact in binary), queue f/2, count a split.
//      For tau < 1/3 this divisor is >= (1 - tau)/2 > tau, so half can always
//      be applied; if it cannot (tau >= 1/3), nothing can be applied and the
//      accepted move is recovered as a breakdown: refactorise from the exact
//      matrix.
//   3. QMCkl then processes the queued ("later") pieces again: every queued
//      piece whose denominator r_c t_c is now >= tau in magnitude is applied
//      whole, repeatedly while that makes progress. Queued pieces are not
//      split again: for a column that stays nearly dependent, halving again
//      and again would walk A_app geometrically towards the nearly singular A
//      (each new half has the same small remaining denominator), which is
//      exactly the ill-conditioned inverse splitting is meant to avoid; the
//      piece waits instead until a later move (typically the same electron
//      moving away) makes it applicable or absorbs it.
//   4. More than kMaxQueued pieces: refactorise (bounds the O(N q) look-ahead).
//   5. S singular to working precision (a perturbation of S of its rounding
//      size, N eps |P^T Ainv| |T|, can make it singular: the move made
//      the exact matrix singular, e.g. an exact copy of another column):
//      refactorise, as sm recovers an accepted
//      breakdown; the LU then either gives a finite inverse or reports the
//      matrix singular (SingularMatrixError). No inf or NaN reaches a ratio
//      or the inverse.
// A refactorisation (reset, the recompute_every cadence counted in accepted
// moves, the failures above) inverts the exact current matrix and clears
// the queue. log_det accumulates log|rho| and the sign per accepted move (the
// exact ratio of the full replacement, so it is log|det A|); a refactorisation
// takes the LU value. flush() is a no-op: a queued piece can only be applied
// by dividing by a denominator below tau, which is the point of not doing it.
// maintained() returns the effective current inverse,
//   A^{-1} = Ainv - (Ainv Q) S^{-1} (P^T Ainv),
// formed in double on the side; nothing is changed.
//
// apply_cycle() (an update cycle, QMCkl's qmckl_sherman_morrison_splitting
// on a batch): the m column replacements are pieces "move column c of A_app
// to its target", processed in order. A piece whose denominator is at
// least tau is applied whole; otherwise half of it is applied (divisor
// 1 + (den - 1)/2) and the rest is deferred to the end of the cycle, so an
// exactly singular intermediate matrix is never formed in A_app. Then the
// deferred pieces (with the ones queued by earlier moves) are processed
// again against the final targets, splitting again where needed, for at
// most kMaxCycleRounds rounds: with A_after regular, each half brings A_app
// closer to A_after, and the remaining denominator det(A_after) / det(A_app)
// tends to 1. The cycle's ratio is the product of the divisors applied,
// det(A_app,end) / det(A_app,start), divided by det S of the queue it started
// with (det A_before = det A_app det S). A cycle that still has deferred
// pieces after the rounds is a breakdown recovered by refactorising A_after
// (SingularMatrixError if it is singular), its ratio then taken from the two
// log-determinants. per_update stays empty: the divisors are ratios against
// A_app, not against the intermediate matrices.
//
// Precision: Storage float or double; with mixed (Storage = float) the
// inversions run in double and rounded to float, den0 and b are accumulated
// in double (as sm's ratio). Every dot product with a queued column's
// target t_j (S, c, the denominators of queued pieces) is accumulated in
// double, for all precisions; the q x q algebra (q <= kMaxQueued) runs in
// double. What is applied to Ainv (GEMV + GER) runs in Storage.

#include <memory>
#include <utility>
#include <vector>

#include <Eigen/LU>

#include "slaterlab/strategies/determinant/linalg.hpp"
#include "slaterlab/strategies/determinant/updater_base.hpp"

namespace slaterlab {

/// Splitting threshold used when options.breakdown is left at its generic default.
inline constexpr double kDefaultSplittingThreshold = 1e-3;

template <class Storage>
class Splitting final : public UpdaterBase {
 public:
  /// Most pieces kept unapplied before falling back to a refactorisation.
  static constexpr std::size_t kMaxQueued = 8;
  /// Rounds over the deferred pieces of a cycle before it is a breakdown.
  static constexpr int kMaxCycleRounds = 32;

  explicit Splitting(UpdaterOptions options);

  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  void reject() override;
  void flush() override {}
  LogDet log_det() const override { return log_det_; }
  MaintainedState maintained() const override;
  CycleRatio apply_cycle(const std::vector<ColumnUpdate>& updates) override;

  /// Pieces waiting in the queue.
  Eigen::Index queued() const { return Eigen::Index(queue_cols_.size()); }

 private:
  void refactorise();
  /// Row c of Ainv times x, accumulated as sm accumulates its ratio.
  double row_dot(Eigen::Index c, const VectorX<Storage>& x) const;
  /// Row c of Ainv times a double vector, accumulated in double.
  double row_dot_double(Eigen::Index c, const Eigen::VectorXd& v) const;
  double lookahead_ratio(Eigen::Index k, double den0) const;
  /// Ainv -= scale (Ainv target - e_c)(e_c^T Ainv) / den: column c of A_app
  /// moved by `scale` of the way to `target`, in Sherman-Morrison's form.
  void apply_column(Eigen::Index c, const VectorX<Storage>& target, double den, Storage scale);
  /// Applies the rest of queued column `slot` if its denominator passes; erases it.
  bool try_apply_queued(std::size_t slot);
  void retry_queue();
  /// Forms S and its LU; false when S is singular to working precision.
  bool rebuild_schur();
  std::ptrdiff_t find_queued(Eigen::Index column) const;
  /// Moves column c of A_app towards `target` (its denominator `den`): whole
  /// when |den| >= tau, else half. Returns the divisor applied (0: nothing
  /// could be applied) and whether the piece was applied whole.
  std::pair<double, bool> apply_piece(Eigen::Index c, const VectorX<Storage>& target, double den);

  MatrixX<Storage> ainvt_;  // inverse of the applied matrix, transposed as sm's (rows contiguous)
  LogDet log_det_;
  int accepted_since_refactorise_ = 0;

  double pending_ratio_ = 0.0;
  double pending_den0_ = 0.0;
  VectorX<Storage> new_column_;  // the pending column, rounded to Storage
  VectorX<Storage> x_;           // workspace: Ainv times the applied piece
  VectorX<Storage> row_;         // workspace: a row of Ainv
  VectorX<Storage> target_;      // workspace: a queued column's target in Storage

  std::vector<Eigen::Index> queue_cols_;
  Eigen::MatrixXd schur_;  // S = P^T Ainv T
  Eigen::PartialPivLU<Eigen::MatrixXd> schur_lu_;
};

/// Builds the splitting strategy (float storage for float and mixed), with
/// the default threshold rule stated above.
std::unique_ptr<DeterminantUpdater> make_splitting(const UpdaterOptions& options);

}  // namespace slaterlab
