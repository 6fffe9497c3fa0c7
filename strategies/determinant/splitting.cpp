#include "slaterlab/strategies/determinant/splitting.hpp"

#include <algorithm>
#include <cmath>

// How splitting works (the contract is in the header).
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

namespace slaterlab {

template <class Storage>
Splitting<Storage>::Splitting(UpdaterOptions options) : UpdaterBase(std::move(options)) {}

template <class Storage>
std::string Splitting<Storage>::label() const {
  return "splitting-" + std::string(to_string(precision()));
}

template <class Storage>
void Splitting<Storage>::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  const Eigen::Index n = a.rows();
  new_column_.setZero(n);
  x_.setZero(n);
  row_.setZero(n);
  target_.setZero(n);
  refactorise();
  mutable_counters().recomputes = 0;  // the initial factorisation is not a recompute
}

template <class Storage>
void Splitting<Storage>::refactorise() {
  Inversion<Storage> inv = invert_at<Storage>(precision(), matrix());
  ainvt_ = transposed<Storage>(inv.inverse);
  log_det_ = inv.log_det;
  queue_cols_.clear();
  accepted_since_refactorise_ = 0;
  note_recompute();
}

template <class Storage>
double Splitting<Storage>::row_dot(Eigen::Index c, const VectorX<Storage>& x) const {
  if (precision() == Precision::mixed) {
    return ainvt_.col(c).template cast<double>().dot(x.template cast<double>());
  }
  return double(ainvt_.col(c).dot(x));
}

template <class Storage>
double Splitting<Storage>::row_dot_double(Eigen::Index c, const Eigen::VectorXd& v) const {
  return ainvt_.col(c).template cast<double>().dot(v);
}

template <class Storage>
std::ptrdiff_t Splitting<Storage>::find_queued(Eigen::Index column) const {
  for (std::size_t j = 0; j < queue_cols_.size(); ++j)
    if (queue_cols_[j] == column) return std::ptrdiff_t(j);
  return -1;
}

template <class Storage>
Ratio Splitting<Storage>::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  new_column_ = new_column.cast<Storage>();
  const double den0 = row_dot(k, new_column_);
  pending_den0_ = den0;
  pending_ratio_ = queue_cols_.empty() ? den0 : lookahead_ratio(k, den0);
  return classify(pending_ratio_);
}

template <class Storage>
double Splitting<Storage>::lookahead_ratio(Eigen::Index k, double den0) const {
  const Eigen::Index q = queued();
  Eigen::VectorXd b(q);
  for (Eigen::Index i = 0; i < q; ++i) b(i) = row_dot(queue_cols_[std::size_t(i)], new_column_);
  const Eigen::VectorXd t = schur_lu_.solve(b);
  const std::ptrdiff_t slot = find_queued(k);
  if (slot >= 0) return t(slot);  // column `slot` of S replaced by b
  // c_j = r_k t_j: Sherman-Morrison's form drops r_k (column c_j of A_app),
  // which is exactly 0 (k != c_j) and would only add the inverse's residual.
  Eigen::VectorXd c(q);
  for (Eigen::Index j = 0; j < q; ++j) c(j) = row_dot_double(k, matrix().col(queue_cols_[std::size_t(j)]));
  return den0 - c.dot(t);  // Schur complement of S in the bordered S'
}

template <class Storage>
void Splitting<Storage>::accept() {
  const Eigen::Index k = pending().k;
  const double rho = pending_ratio_;
  const double den0 = pending_den0_;
  const std::ptrdiff_t slot = find_queued(k);

  // commit_pending() asks for a refactorisation on every |rho| < tau; this
  // strategy answers a small denominator by splitting, so it keeps its own
  // cadence count and decides below.
  (void)commit_pending();
  ++accepted_since_refactorise_;
  const bool due = options().recompute_every > 0 &&
                   accepted_since_refactorise_ >= options().recompute_every;
  const double tau = options().breakdown;
  const double den_half = 1.0 + 0.5 * (den0 - 1.0);
  const bool whole = std::abs(den0) >= tau;
  const bool half = !whole && std::abs(den_half) >= tau;
  if (due || !std::isfinite(rho) || rho == 0.0 || !std::isfinite(den0) || !(whole || half)) {
    refactorise();
    return;
  }

  log_det_.log_abs += std::log(std::abs(rho));
  if (rho < 0) log_det_.sign = -log_det_.sign;
  // The move absorbs k's queued piece: column k of A_app goes to a' (whole)
  // or half-way to it, whatever was applied before.
  if (slot >= 0) queue_cols_.erase(queue_cols_.begin() + slot);
  if (whole) {
    apply_column(k, new_column_, den0, Storage(1));
  } else {
    apply_column(k, new_column_, den_half, Storage(0.5));
    queue_cols_.push_back(k);
    mutable_counters().count(kSplitEvent);
  }
  retry_queue();
  if (queue_cols_.size() > kMaxQueued || !rebuild_schur()) refactorise();
}

template <class Storage>
void Splitting<Storage>::apply_column(Eigen::Index c, const VectorX<Storage>& target, double den,
                                      Storage scale) {
  // Same arithmetic as sm for scale = 1; the half is the sm vector times 0.5
  // (exact in binary).
  sm_update<Storage>(ainvt_, c, target.data(), scale, den, x_, row_);
}

template <class Storage>
bool Splitting<Storage>::try_apply_queued(std::size_t slot) {
  const Eigen::Index c = queue_cols_[slot];
  // The rest of the piece takes column c of A_app to t_c; its denominator
  // 1 + r_c (t_c - A_app e_c) is r_c t_c in Sherman-Morrison's form.
  const double den = row_dot_double(c, matrix().col(c));
  if (!(std::abs(den) >= options().breakdown) || !std::isfinite(den)) return false;
  target_ = matrix().col(c).template cast<Storage>();
  apply_column(c, target_, den, Storage(1));
  queue_cols_.erase(queue_cols_.begin() + std::ptrdiff_t(slot));
  return true;
}

template <class Storage>
void Splitting<Storage>::retry_queue() {
  bool progress = true;
  while (progress && !queue_cols_.empty()) {
    progress = false;
    for (std::size_t slot = 0; slot < queue_cols_.size();) {
      if (try_apply_queued(slot)) {
        progress = true;
      } else {
        ++slot;
      }
    }
  }
}

template <class Storage>
bool Splitting<Storage>::rebuild_schur() {
  const Eigen::Index q = queued();
  if (q == 0) return true;
  // S_ij = r_ci^T t_j (Sherman-Morrison's form of delta_ij + r_ci^T v_j)
  // and the scale of its rounding error, |dS_ij| <= N eps |r_ci|^T |t_j|
  // (gamma_N for a dot product of length N, eps the storage epsilon: the
  // rows carry the storage's rounding).
  schur_.resize(q, q);
  Eigen::MatrixXd scale(q, q);
  for (Eigen::Index i = 0; i < q; ++i) {
    const Eigen::VectorXd row = ainvt_.col(queue_cols_[std::size_t(i)]).template cast<double>();
    for (Eigen::Index j = 0; j < q; ++j) {
      const auto t = matrix().col(queue_cols_[std::size_t(j)]);
      schur_(i, j) = row.dot(t);
      scale(i, j) = row.cwiseAbs().dot(t.cwiseAbs());
    }
  }
  schur_lu_.compute(schur_);
  // det S = det A / det A_app. S + dS stays nonsingular while
  // ||S^{-1}||_1 ||dS||_1 < 1; when a perturbation of rounding size can make
  // it singular (an accepted move made the exact matrix singular to working
  // precision, e.g. an exact copy of another column), S^{-1} b has no
  // correct digit and may be inf or NaN. Such a move is a breakdown that
  // splitting cannot absorb: the caller refactorises.
  const Eigen::MatrixXd inverse = schur_lu_.inverse();
  const double bound = double(size()) * epsilon() *
                       scale.colwise().sum().maxCoeff() *
                       inverse.cwiseAbs().colwise().sum().maxCoeff();
  return std::isfinite(bound) && bound < 0.5;
}

template <class Storage>
std::pair<double, bool> Splitting<Storage>::apply_piece(Eigen::Index c,
                                                        const VectorX<Storage>& target,
                                                        double den) {
  const double tau = options().breakdown;
  if (!std::isfinite(den)) return {0.0, false};
  if (std::abs(den) >= tau) {
    apply_column(c, target, den, Storage(1));
    return {den, true};
  }
  const double den_half = 1.0 + 0.5 * (den - 1.0);
  if (!(std::abs(den_half) >= tau)) return {0.0, false};
  apply_column(c, target, den_half, Storage(0.5));
  mutable_counters().count(kSplitEvent);
  return {den_half, false};
}

template <class Storage>
CycleRatio Splitting<Storage>::apply_cycle(const std::vector<ColumnUpdate>& updates) {
  // det A_before = det A_app det S while pieces are queued.
  const double det_s = queue_cols_.empty() ? 1.0 : schur_lu_.determinant();
  const LogDet before = log_det_;
  std::vector<Eigen::Index> deferred = queue_cols_;
  const auto defer = [&](Eigen::Index c, bool whole) {
    const auto at = std::find(deferred.begin(), deferred.end(), c);
    if (whole && at != deferred.end()) deferred.erase(at);
    if (!whole && at == deferred.end()) deferred.push_back(c);
  };
  // The product of the divisors as log|.| and sign: it may under- or
  // overflow on the way where the final ratio does not.
  long double log_abs = 0.0L;
  int sign = 1;
  const auto multiply = [&](double divisor) {
    log_abs += std::log(std::abs((long double)divisor));
    if (divisor < 0) sign = -sign;
  };
  for (const ColumnUpdate& update : updates) {
    begin_proposal(update.k, update.column);  // validates k and the column
    (void)commit_pending();                   // A holds the cycle's columns as they come
    new_column_ = update.column.template cast<Storage>();
    // 1 + r_k (a' - A_app e_k) = r_k a' in Sherman-Morrison's form, as ratio().
    const auto [divisor, whole] = apply_piece(update.k, new_column_, row_dot(update.k, new_column_));
    if (divisor != 0.0) multiply(divisor);
    defer(update.k, whole);
  }
  for (int round = 0; round < kMaxCycleRounds && !deferred.empty(); ++round) {
    for (std::size_t slot = 0; slot < deferred.size();) {
      const Eigen::Index c = deferred[slot];
      target_ = matrix().col(c).template cast<Storage>();
      const auto [divisor, whole] = apply_piece(c, target_, row_dot_double(c, matrix().col(c)));
      if (divisor != 0.0) multiply(divisor);
      if (whole) {
        deferred.erase(deferred.begin() + std::ptrdiff_t(slot));
      } else {
        ++slot;
      }
    }
  }
  queue_cols_.clear();
  accepted_since_refactorise_ += int(updates.size());
  CycleRatio cycle;
  if (!deferred.empty()) {  // could not complete: refactorise A_after
    ++mutable_counters().breakdowns;
    refactorise();
    const double value = std::exp(double(log_det_.log_abs - before.log_abs));
    cycle.value = log_det_.sign * before.sign * value;
    cycle.breakdown = true;
    return cycle;
  }
  cycle.value = sign * std::exp(double(log_abs)) / det_s;
  cycle.breakdown = !std::isfinite(cycle.value);
  if (cycle.breakdown) cycle.value = 0.0;  // a NaN never leaves a strategy
  log_det_.log_abs += double(log_abs) - std::log(std::abs(det_s));
  if ((sign < 0) != (det_s < 0)) log_det_.sign = -log_det_.sign;
  const bool due = options().recompute_every > 0 &&
                   accepted_since_refactorise_ >= options().recompute_every;
  if (due) refactorise();
  return cycle;
}

template <class Storage>
void Splitting<Storage>::reject() {
  drop_pending();
}

template <class Storage>
MaintainedState Splitting<Storage>::maintained() const {
  Eigen::MatrixXd inverse = transposed<double>(ainvt_);
  const Eigen::Index q = queued();
  if (q == 0) return {std::move(inverse), std::nullopt};
  const Eigen::Index n = size();
  Eigen::MatrixXd targets(n, q);
  Eigen::MatrixXd rows(q, n);
  for (Eigen::Index j = 0; j < q; ++j) {
    targets.col(j) = matrix().col(queue_cols_[std::size_t(j)]);
    rows.row(j) = inverse.row(queue_cols_[std::size_t(j)]);
  }
  // Ainv Q in Sherman-Morrison's form: Ainv t_j - e_cj.
  Eigen::MatrixXd ainv_q = inverse * targets;
  for (Eigen::Index j = 0; j < q; ++j) ainv_q(queue_cols_[std::size_t(j)], j) -= 1.0;
  inverse.noalias() -= ainv_q * schur_lu_.solve(rows);
  return {std::move(inverse), std::nullopt};
}

template class Splitting<float>;
template class Splitting<double>;

std::unique_ptr<DeterminantUpdater> make_splitting(const UpdaterOptions& options) {
  UpdaterOptions o = options;
  if (o.breakdown == UpdaterOptions{}.breakdown) o.breakdown = kDefaultSplittingThreshold;
  if (o.precision == Precision::double_) return std::make_unique<Splitting<double>>(o);
  return std::make_unique<Splitting<float>>(o);
}

}  // namespace slaterlab
