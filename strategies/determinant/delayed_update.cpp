#include "slaterlab/strategies/determinant/delayed_update.hpp"

#include "slaterlab/strategies/determinant/delayed_window.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

// The algorithm, step by step (the state, the ratio, accept, the growth
// guard, the flush, update cycles, precision), is derived in
// docs/delayed-updates.md; the contract is in the header.

namespace slaterlab {
namespace {

/// Inverts the n x n triangle of t (leading dimension ld) in place, the
/// other triangle untouched; false when a diagonal entry is exactly zero.
/// Recursive 2 x 2 blocks, T^{-1} = [X11, -X11 T12 X22; 0, X22] with
/// X11 = T11^{-1} and X22 = T22^{-1} inverted first (for a lower triangle
/// the transpose): the off-diagonal block is two TRMMs, so the O(n^3) work
/// runs at TRMM's rate, where LAPACK's trtri runs its unblocked kernel up to
/// n = 64 (about 3 times slower at n = 85 to 128). The block form has the
/// error bounds of trtri's column-by-column method (Du Croz and Higham,
/// docs/references.md): |X T - I| <= c_n u |X| |T|.
template <class T>
bool invert_triangle(bool lower, bool unit, Eigen::Index n, T* t, Eigen::Index ld) {
  constexpr Eigen::Index kLeaf = 16;  // below this trtri's unblocked kernel is as fast
  if (n <= kLeaf) return blocks::trtri(lower, unit, n, t, ld);
  const Eigen::Index n1 = (n / 2 + 3) / 4 * 4;  // a multiple of 4 keeps the blocks aligned
  const Eigen::Index n2 = n - n1;
  T* t11 = t;
  T* t22 = t + n1 + n1 * ld;
  if (!invert_triangle(lower, unit, n1, t11, ld) || !invert_triangle(lower, unit, n2, t22, ld))
    return false;
  if (lower) {  // X21 = -X22 T21 X11, T21 n2 x n1
    T* t21 = t + n1;
    blocks::trmm(true, true, false, unit, n2, n1, T(-1), t22, ld, t21, ld);
    blocks::trmm(false, true, false, unit, n2, n1, T(1), t11, ld, t21, ld);
  } else {  // X12 = -X11 T12 X22, T12 n1 x n2
    T* t12 = t + n1 * ld;
    blocks::trmm(true, false, false, unit, n1, n2, T(-1), t11, ld, t12, ld);
    blocks::trmm(false, false, false, unit, n1, n2, T(1), t22, ld, t12, ld);
  }
  return true;
}

/// log|det| and sign of an LU-factorised n x n block (LAPACK pivots);
/// sign 0 when a pivot is exactly zero or the factors are not finite.
template <class T>
LogDet log_det_of_lu(const T* lu, int n, int lda, const int* ipiv) {
  double log_abs = 0.0;
  int sign = 1;
  for (int i = 0; i < n; ++i) {
    const double u = double(lu[i + Eigen::Index(i) * lda]);
    if (u == 0.0 || !std::isfinite(u)) return {-std::numeric_limits<double>::infinity(), 0};
    log_abs += std::log(std::abs(u));
    if (u < 0) sign = -sign;
    if (ipiv[i] != i + 1) sign = -sign;
  }
  return {log_abs, sign};
}

}  // namespace

DelayedVariant parse_delayed_variant(const std::string& text) {
  if (text.empty() || text == "incremental") return DelayedVariant::incremental;
  if (text == "naive") return DelayedVariant::naive;
  throw std::invalid_argument("unknown variant '" + text +
                              "' for strategy 'delayed' (valid: incremental, naive)");
}

template <class Storage, class LookAheadScalar>
DelayedUpdate<Storage, LookAheadScalar>::DelayedUpdate(UpdaterOptions options)
    : DelayedWindowUpdater(std::move(options)), variant_(parse_delayed_variant(this->options().variant)) {}

template <class Storage, class LookAheadScalar>
std::string DelayedUpdate<Storage, LookAheadScalar>::label() const {
  std::string s = "delayed-" + std::to_string(options().k) + "-" + std::string(to_string(precision()));
  if (variant_ == DelayedVariant::naive) s += "-naive";
  return s;
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  const Eigen::Index n = a.rows();
  const Eigen::Index kmax = capacity();
  columns_.setZero(n, kmax);
  w_.setZero(n, kmax);
  binv_.setZero(kmax, kmax);
  wa_table_.setZero(kmax, kmax);
  w_norm2_.assign(std::size_t(kmax), 0.0);
  moved_norm2_.assign(std::size_t(kmax), 0.0);
  if (variant_ == DelayedVariant::naive) {
    b_.setZero(kmax, kmax);
    bordered_.setZero(kmax, kmax);
    pivots_.assign(std::size_t(kmax), 0);
  }
  electron_.assign(std::size_t(kmax), 0);
  last_move_of_.assign(std::size_t(n), -1);
  point_pending_at_slot(0);
  cur_row_.setZero(n);
  ra_.setZero(kmax);
  wa_.setZero(kmax);
  b_col_.setZero(kmax);
  c_row_.setZero(kmax);
  t_.setZero(kmax);
  q_.setZero(kmax);
  flush_work_.y.setZero(n, kmax);
  flush_work_.packed.assign(std::size_t(n * ((kmax + 15) / 16 * 16)), Storage(0));
  flush_work_.z.setZero(n, kmax);
  flush_work_.lu.setZero(kmax * kmax);
  flush_work_.pivots.setZero(kmax);
  flush_work_.x.setZero(n);
  flush_work_.row.setZero(n);
  if constexpr (!std::is_same_v<Storage, LookAheadScalar>) {
    flush_work_.z_store.setZero(n, kmax);
    flush_work_.columns_store.setZero(n, kmax);
  }
  restart_protocol();
  refactorise();
  mutable_counters().recomputes = 0;  // the initial factorisation is not a recompute
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::refactorise() {
  Inversion<Storage> inv = invert_at<Storage>(precision(), matrix());
  // Same LU and inverse as sm, transposed once here (O(N^2) next to the
  // O(N^3) factorisation) so that rows of Ainv are contiguous afterwards.
  ainvt_ = transposed<Storage>(inv.inverse);
  log_det_ = inv.log_det;
  close_window();
  note_recompute();
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::close_window() {
  for (Eigen::Index i = 0; i < m_; ++i) last_move_of_[std::size_t(electron_[std::size_t(i)])] = -1;
  m_ = 0;
  log_det_b_ = {};
}

template <class Storage, class LookAheadScalar>
Ratio DelayedUpdate<Storage, LookAheadScalar>::ratio(Eigen::Index k,
                                                     const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  proposal_open_ = true;
  const Eigen::Index n = size();
  const Eigen::Index m = m_;
  point_pending_at_slot(m);
  column_ = new_column.template cast<LookAheadScalar>();
  row_ = ainvt_.col(k).template cast<LookAheadScalar>();
  // The current row k of the inverse, cur = r - W q, q = B^{-T} c, where
  // c_i = e_k^T Ainv u_i = r^T a'_i - r^T a_{k_i,0}, the latter taken as
  // the identity's delta(k, k_i) (file comment).
  cur_row_ = row_;
  if (m > 0) {
    blocks::gemv(true, n, m, LookAheadScalar(1), columns_.data(), n, row_.data(),
                 LookAheadScalar(0), ra_.data());
    for (Eigen::Index i = 0; i < m; ++i)
      c_row_(i) =
          ra_(i) - (electron_[std::size_t(i)] == k ? LookAheadScalar(1) : LookAheadScalar(0));
    blocks::gemv(true, m, m, LookAheadScalar(1), binv_.data(), capacity(), c_row_.data(),
                 LookAheadScalar(0), q_.data());
    blocks::gemv(false, n, m, LookAheadScalar(-1), w_.data(), n, q_.data(), LookAheadScalar(1),
                 cur_row_.data());
  }
  pending_pivot_ = double(cur_row_.dot(column_));
  pending_ratio_ = variant_ == DelayedVariant::incremental ? pending_pivot_ : naive_ratio(k);
  return classify(pending_ratio_);
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::border_column(Eigen::Index k) {
  // b_j = w_j^T a' - w_j^T (the column this move replaces): B's new column.
  const Eigen::Index m = m_;
  if (m > 0)
    blocks::gemv(true, size(), m, LookAheadScalar(1), w_.data(), size(), column_.data(),
                 LookAheadScalar(0), wa_.data());
  const Eigen::Index p = last_move_of_[std::size_t(k)];
  for (Eigen::Index j = 0; j < m; ++j) {
    const LookAheadScalar replaced =
        p >= 0 ? wa_table_(j, p)
               : (electron_[std::size_t(j)] == k ? LookAheadScalar(1) : LookAheadScalar(0));
    b_col_(j) = wa_(j) - replaced;
  }
  row_dot_column_ = row_.dot(column_);
  d_ = p >= 0 ? LookAheadScalar(1) + row_dot_column_ - ra_(p) : row_dot_column_;
}

template <class Storage, class LookAheadScalar>
double DelayedUpdate<Storage, LookAheadScalar>::naive_ratio(Eigen::Index k) {
  // The paper's look-ahead: rho = det(B') / det(B), B' = [[B, b], [c^T, d]],
  // from a fresh LU of B' packed with leading dimension m+1.
  const Eigen::Index m = m_;
  const Eigen::Index ld = m + 1;
  border_column(k);
  LookAheadScalar* bp = bordered_.data();
  for (Eigen::Index j = 0; j < m; ++j) {
    for (Eigen::Index i = 0; i < m; ++i) bp[i + j * ld] = b_(i, j);
    bp[m + j * ld] = c_row_(j);
    bp[j + m * ld] = b_col_(j);
  }
  bp[m + m * ld] = d_;
  const int info = blocks::getrf(ld, bp, ld, pivots_.data());
  log_det_b_new_ = info > 0 ? LogDet{-std::numeric_limits<double>::infinity(), 0}
                            : log_det_of_lu(bp, int(ld), int(ld), pivots_.data());
  if (log_det_b_new_.sign == 0) return 0.0;  // B' exactly singular: a breakdown
  return double(log_det_b_new_.sign * log_det_b_.sign) *
         std::exp(log_det_b_new_.log_abs - log_det_b_.log_abs);
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::accept() {
  const double rho = pending_ratio_;
  // The window is bordered with the direct ratio in both variants: the
  // naive det(B') / det(B) agrees with it only to eps kappa(B), and a B
  // with nearly equal rows (one electron moved again and again) has large
  // t and q, so bordering with it put |t| |q| times that disagreement into
  // B^{-1}; in float, 16 moves of one electron left a flushed inverse wrong
  // by 50 %. The naive variant differs in the ratio it reports (and the
  // log|det| it accumulates), not in the window algebra.
  const double pivot = pending_pivot_;
  const Eigen::Index k = pending().k;
  if (!commit_accepted(rho)) return;

  // This move's own amplification, as Sherman-Morrison commits it.
  cur_norm_ = double(cur_row_.norm());
  const double step_growth = cur_norm_ * double(column_.norm()) / std::abs(pivot);
  place_accepted_move(*this, k, pivot, step_growth);  // the guard's decisions (delayed_window.hpp)
}

template <class Storage, class LookAheadScalar>
bool DelayedUpdate<Storage, LookAheadScalar>::reopen_window(Eigen::Index k) {
  row_ = ainvt_.col(k).template cast<LookAheadScalar>();
  const LookAheadScalar fresh = row_.dot(column_);
  if (!(std::abs(double(fresh)) > 0) || !std::isfinite(double(fresh))) {
    refactorise();
    return false;
  }
  open_window(k, fresh);
  return true;
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::open_window(Eigen::Index k, LookAheadScalar pivot) {
  // With an empty window B = [r^T a'] (the first move's ratio against A0).
  binv_(0, 0) = LookAheadScalar(1) / pivot;
  wa_table_(0, 0) = pivot;
  if (variant_ == DelayedVariant::naive) {
    b_(0, 0) = pivot;
    log_det_b_ = {std::log(std::abs(double(pivot))), pivot < 0 ? -1 : 1};
  }
  const double row_norm2 = double(row_.squaredNorm());
  store_move(0, k, row_norm2, row_norm2 / (double(pivot) * double(pivot)));
  m_ = 1;
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::point_pending_at_slot(Eigen::Index i) {
  new (&column_) Eigen::Map<VectorX<LookAheadScalar>>(columns_.col(i).data(), size());
  new (&row_) Eigen::Map<VectorX<LookAheadScalar>>(w_.col(i).data(), size());
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::store_move(Eigen::Index i, Eigen::Index k,
                                                         double row_norm2, double moved_norm2) {
  if (column_.data() != columns_.col(i).data()) {  // after a guard flush: the window restarts at 0
    columns_.col(i) = column_;
    w_.col(i) = row_;
  }
  w_norm2_[std::size_t(i)] = row_norm2;
  moved_norm2_[std::size_t(i)] = moved_norm2;
  electron_[std::size_t(i)] = k;
  last_move_of_[std::size_t(k)] = i;
}

template <class Storage, class LookAheadScalar>
bool DelayedUpdate<Storage, LookAheadScalar>::extend_window(Eigen::Index k, LookAheadScalar pivot) {
  // The guard (file comment): the rounding of cur = r - W q against sm's
  // accumulated rounding of the same row.
  const Eigen::Index m = m_;
  const double row_norm2 = double(row_.squaredNorm());
  double terms2 = row_norm2;
  for (Eigen::Index j = 0; j < m; ++j) terms2 += double(q_(j)) * double(q_(j)) * w_norm2_[std::size_t(j)];
  if (!within_row_guard(terms2, cur_norm_)) return false;

  // B'^{-1} = [[B^{-1} + t q^T / s, -t / s], [-q^T / s, 1 / s]], s the pivot
  // (the ratio), t = B^{-1} b, q = B^{-T} c (q and c are left by ratio(),
  // and so is b by the naive ratio()).
  const Eigen::Index ld = capacity();
  if (variant_ == DelayedVariant::incremental) border_column(k);
  blocks::gemv(false, m, m, LookAheadScalar(1), binv_.data(), ld, b_col_.data(), LookAheadScalar(0),
               t_.data());

  blocks::ger(m, m, LookAheadScalar(1) / pivot, t_.data(), q_.data(), binv_.data(), ld);
  // Whole-vector expressions: vectorised divisions (the same quotients).
  binv_.col(m).head(m) = -t_.head(m) / pivot;
  binv_.row(m).head(m) = (-q_.head(m) / pivot).transpose();
  wa_table_.col(m).head(m) = wa_.head(m);
  wa_table_.row(m).head(m) = ra_.head(m).transpose();
  binv_(m, m) = LookAheadScalar(1) / pivot;
  wa_table_(m, m) = row_dot_column_;
  if (variant_ == DelayedVariant::naive) {
    for (Eigen::Index i = 0; i < m; ++i) {
      b_(i, m) = b_col_(i);
      b_(m, i) = c_row_(i);
    }
    b_(m, m) = d_;
    log_det_b_ = log_det_b_new_;
  }
  store_move(m, k, row_norm2, cur_norm_ * cur_norm_ / (double(pivot) * double(pivot)));
  ++m_;
  return true;
}

template <class Storage, class LookAheadScalar>
bool DelayedUpdate<Storage, LookAheadScalar>::correct(MatrixX<Storage>& ainvt,
                                                      CorrectionWork& work) const {
  const Eigen::Index n = size();
  const Eigen::Index m = m_;
  const Storage* columns = nullptr;
  if constexpr (std::is_same_v<Storage, LookAheadScalar>) {
    columns = columns_.data();
  } else {
    if (work.columns_store.rows() != n || work.columns_store.cols() < m)
      work.columns_store.resize(n, m);
    work.columns_store.leftCols(m) = columns_.leftCols(m).template cast<Storage>();
    columns = work.columns_store.data();
  }

  // A window of one is a rank-1 update, exactly sm's: sm_update with the
  // window's pivot s = r^T a' (B = [s], Z = r / s).
  if (m == 1) {
    sm_update<Storage>(ainvt, electron_[0], columns, Storage(1), double(wa_table_(0, 0)), work.x,
                       work.row);
    return true;
  }
  // Rule 7 (delayed_window.hpp, flush_window): one Woodbury update, or a
  // prefix of the moves and the others one by one.
  return flush_window(
      m, w_norm2_, moved_norm2_, [&](Eigen::Index p) { return solve_window_rows(work, p); },
      [&](Eigen::Index p) { return double(work.z.leftCols(p).squaredNorm()); },
      [&](Eigen::Index p) { woodbury_update(ainvt, columns, work, p); },
      [&](Eigen::Index first) { return apply_moves_singly(ainvt, columns, work, first); });
}

template <class Storage, class LookAheadScalar>
void DelayedUpdate<Storage, LookAheadScalar>::woodbury_update(MatrixX<Storage>& ainvt,
                                                              const Storage* columns,
                                                              CorrectionWork& work,
                                                              Eigen::Index p) const {
  const Eigen::Index n = size();
  const Storage* z = nullptr;
  if constexpr (std::is_same_v<Storage, LookAheadScalar>) {
    z = work.z.data();
  } else {
    if (work.z_store.rows() != n || work.z_store.cols() < p) work.z_store.resize(n, p);
    work.z_store.leftCols(p) = work.z.leftCols(p).template cast<Storage>();
    z = work.z_store.data();
  }

  // Y = Ainv U = Ainv A' - (the replaced columns of A0), with Ainv a_{k,0} =
  // e_k (Sherman-Morrison's x = Ainv a' - e_k). Then Ainv^T -= Z Y^T. Where
  // skinny_transposed_product beats GEMM (windows of 8 to 32-64 moves, with
  // AVX-512) Y is formed transposed by it, Y^T = A'^T Ainv^T, in y's storage.
  if (work.y.rows() != n || work.y.cols() < p) work.y.resize(n, p);
  Storage* y = work.y.data();
  if (blocks::skinny_product_beats_blas<Storage>(n, p)) {
    blocks::skinny_transposed_product<Storage>(n, n, p, columns, n, ainvt.data(), n, y, p,
                                               work.packed);
    for (Eigen::Index i = 0; i < p; ++i) y[i + electron_[std::size_t(i)] * p] -= Storage(1);
    blas::gemm<Storage>(false, false, n, n, p, Storage(-1), z, n, y, p, Storage(1), ainvt.data(),
                        n);
    return;
  }
  blas::gemm<Storage>(true, false, n, p, n, Storage(1), ainvt.data(), n, columns, n,
                         Storage(0), y, n);
  for (Eigen::Index i = 0; i < p; ++i) y[electron_[std::size_t(i)] + i * n] -= Storage(1);
  blas::gemm<Storage>(false, true, n, n, p, Storage(-1), z, n, y, n, Storage(1),
                         ainvt.data(), n);
}

template <class Storage, class LookAheadScalar>
bool DelayedUpdate<Storage, LookAheadScalar>::apply_moves_singly(MatrixX<Storage>& ainvt,
                                                                 const Storage* columns,
                                                                 CorrectionWork& work,
                                                                 Eigen::Index first) const {
  // Each state rounded once, as sm rounds it: the pivot r^T a' against the
  // inverse so far, as sm forms its ratio.
  const Eigen::Index n = size();
  for (Eigen::Index i = first; i < m_; ++i) {
    const Eigen::Index k = electron_[std::size_t(i)];
    const Storage* column = columns + i * n;
    const double pivot = sm_pivot(ainvt, k, column, precision());
    if (!(std::abs(pivot) > 0) || !std::isfinite(pivot)) return false;
    sm_update<Storage>(ainvt, k, column, Storage(1), pivot, work.x, work.row);
  }
  return true;
}

template <class Storage, class LookAheadScalar>
bool DelayedUpdate<Storage, LookAheadScalar>::solve_window_rows(CorrectionWork& work,
                                                                Eigen::Index m) const {
  const Eigen::Index n = size();
  if (work.z.rows() != n || work.z.cols() < m) work.z.resize(n, m);
  if (m == 1) {  // B = [s]: Z = W / s, the rank-1 update sm applies
    work.z.col(0) = w_.col(0) * (LookAheadScalar(1) / wa_table_(0, 0));
    return true;
  }
  // Z B^T = W with B = P L U: Z = W P L^{-T} U^{-T}. Each triangle is
  // inverted in place (invert_triangle) and applied by TRMM, one after the
  // other: OpenBLAS's TRSM runs these shapes at a quarter of GEMM's rate or
  // less, and B^{-1} formed whole loses digits that the two triangles
  // applied in turn keep (docs/delayed-updates.md, rule 3). The factors live
  // in work's preallocated scratch: no allocation per flush.
  if (!factor_window_matrix(work, m)) return false;
  LookAheadScalar* t = work.lu.data();
  if (!invert_triangle(true, true, m, t, m) || !invert_triangle(false, false, m, t, m)) return false;
  for (Eigen::Index j = 0; j < m; ++j) work.z.col(j) = w_.col(work.order[std::size_t(j)]);
  blocks::trmm(false, true, true, true, n, m, LookAheadScalar(1), t, m, work.z.data(), n);
  blocks::trmm(false, false, true, false, n, m, LookAheadScalar(1), t, m, work.z.data(), n);
  // x * 0 is 0 for finite x and NaN otherwise: one vectorised pass, where
  // Eigen's allFinite on a block is not.
  return (work.z.leftCols(m).array() * LookAheadScalar(0)).sum() == LookAheadScalar(0);
}

template <class Storage, class LookAheadScalar>
bool DelayedUpdate<Storage, LookAheadScalar>::factor_window_matrix(CorrectionWork& work,
                                                                   Eigen::Index m) const {
  // B = W^T A' (window_matrix_lu, which also gives log|det B| for cycles),
  // packed with leading dimension m.
  const Eigen::Index ld = capacity();
  if (work.lu.size() < m * m) work.lu.resize(m * m);
  if (work.pivots.size() < m) work.pivots.resize(m);
  LookAheadScalar* b = work.lu.data();
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = 0; i < m; ++i) b[i + j * m] = wa_table_.data()[i + j * ld];
  if (!Eigen::Map<const VectorX<LookAheadScalar>>(b, m * m).allFinite()) return false;
  if (blocks::getrf(m, b, m, work.pivots.data()) != 0) return false;
  work.order = lu_column_order(work.pivots.head(m));
  return true;
}

template <class Storage, class LookAheadScalar>
MaintainedState DelayedUpdate<Storage, LookAheadScalar>::maintained() const {
  if (m_ == 0) return {transposed<double>(ainvt_), std::nullopt};
  MatrixX<Storage> ainvt = ainvt_;
  CorrectionWork work;
  if (!correct(ainvt, work)) {  // B singular to working precision: what a flush would refactorise
    return {invert_at<Storage>(precision(), matrix()).inverse.template cast<double>(), std::nullopt};
  }
  return {transposed<double>(ainvt), std::nullopt};
}

template <class Storage, class LookAheadScalar>
CycleRatio DelayedUpdate<Storage, LookAheadScalar>::apply_cycle(
    const std::vector<ColumnUpdate>& updates) {
  const Eigen::Index m = Eigen::Index(updates.size());
  std::vector<Eigen::Index> columns;
  for (const ColumnUpdate& u : updates) columns.push_back(u.k);
  std::sort(columns.begin(), columns.end());
  const bool distinct = std::adjacent_find(columns.begin(), columns.end()) == columns.end();
  if (m == 0 || m > capacity() || !distinct) return DeterminantUpdater::apply_cycle(updates);

  flush();  // ainvt_ is now the inverse of A_before
  bool due = false;
  for (Eigen::Index i = 0; i < m; ++i) {
    const ColumnUpdate& u = updates[std::size_t(i)];
    begin_proposal(u.k, u.column);  // validates k and the column
    due = commit_pending() || due;  // A := A_after, column by column
    point_pending_at_slot(i);
    column_ = u.column.template cast<LookAheadScalar>();
    row_ = ainvt_.col(u.k).template cast<LookAheadScalar>();
    const double row_norm2 = double(row_.squaredNorm());
    store_move(i, u.k, row_norm2, row_norm2);  // a cycle never splits (cycle_within_guard)
  }
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j < m; ++j) wa_table_(j, i) = w_.col(j).dot(columns_.col(i));
  m_ = m;

  CycleRatio cycle;
  const std::optional<LuFactors<LookAheadScalar>> lu =
      window_matrix_lu(wa_table_.data(), capacity(), m);
  const double value =
      lu ? lu->log_det.sign * std::exp(double(lu->log_det.log_abs)) : 0.0;
  cycle.breakdown = !lu || !std::isfinite(value) || std::abs(value) < options().breakdown;
  if (cycle.breakdown) {
    ++mutable_counters().breakdowns;
    cycle.value = refactorise_cycle();  // SingularMatrixError when A_after is singular
    return cycle;
  }
  if (!cycle_within_guard(*lu, value)) {
    // A_after is regular (its ratio passed the breakdown test): its
    // factorisation replaces the Woodbury update the guard refused.
    cycle.value = refactorise_cycle();
    return cycle;
  }
  cycle.value = value;
  log_det_.log_abs += double(lu->log_det.log_abs);
  log_det_.sign *= lu->log_det.sign;
  apply_window();
  if (due) refactorise();
  return cycle;
}

template <class Storage, class LookAheadScalar>
bool DelayedUpdate<Storage, LookAheadScalar>::cycle_within_guard(
    const LuFactors<LookAheadScalar>& lu, double value) {
  // The decisions of place_accepted_move, for the cycle's m new rows
  // z_j = sum_i (B^{-1})_{ji} w_i of A_after's inverse (Z = W B^{-T}) at
  // once; for m = 1 they are exactly that move's (file comment).
  const Eigen::Index n = size();
  const Eigen::Index m = m_;
  const double limit = kGrowthFactor * double(n);
  if (std::abs(value) > limit) return false;  // a release
  if (!solve_window_rows(flush_work_, m)) return false;
  // Its states in turn could be exactly singular (cycles.md): rows grown
  // beyond the flush's guard refactorise instead of going move by move.
  if (!prefix_within_flush_guard(double(flush_work_.z.leftCols(m).squaredNorm()), w_norm2_, m))
    return false;
  const MatrixX<LookAheadScalar> binv = lu_inverse<LookAheadScalar>(lu);
  for (Eigen::Index j = 0; j < m; ++j) {
    double terms2 = 0.0;
    for (Eigen::Index i = 0; i < m; ++i)
      terms2 += double(binv(j, i)) * double(binv(j, i)) * w_norm2_[std::size_t(i)];
    const double z_norm = double(flush_work_.z.col(j).norm());
    if (!within_row_guard(terms2, z_norm)) return false;             // cancellation
    if (z_norm * double(columns_.col(j).norm()) > limit) return false;  // near-singular
  }
  return true;
}

template <class Storage, class LookAheadScalar>
double DelayedUpdate<Storage, LookAheadScalar>::refactorise_cycle() {
  const LogDet before = log_det_;
  refactorise();
  return log_det_.sign * before.sign * std::exp(log_det_.log_abs - before.log_abs);
}

template class DelayedUpdate<float, float>;
template class DelayedUpdate<float, double>;
template class DelayedUpdate<double, double>;

std::unique_ptr<DeterminantUpdater> make_delayed_update(const UpdaterOptions& options) {
  switch (options.precision) {
    case Precision::double_: return std::make_unique<DelayedUpdate<double, double>>(options);
    case Precision::single: return std::make_unique<DelayedUpdate<float, float>>(options);
    case Precision::mixed: return std::make_unique<DelayedUpdate<float, double>>(options);
  }
  throw std::invalid_argument("delayed: unknown precision");
}

}  // namespace slaterlab
