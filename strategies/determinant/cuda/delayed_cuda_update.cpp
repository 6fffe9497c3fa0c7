#include "slaterlab/strategies/determinant/cuda/delayed_cuda_update.hpp"

// On the device (column-major, leading dimension N for N-row arrays and K
// for the window's K x K arrays): Ainv^T (Storage), the window's new columns
// A' and rows W (LookAheadScalar), B^{-1} and W^T A' (= B, LookAheadScalar), the window's
// electrons k_i, and the proposal's vectors a', r, cur, A'^T r, c, q,
// W^T a' (= b), t. On the host: the counts, the electrons' window moves,
// the window rows' norms of the growth guard, log|det|.
//
// Per proposal: r = row k of Ainv (a column of Ainv^T), ra = A'^T r (cuBLAS
// GEMV), c = ra - (what each move replaced) (kernel), q = B^{-T} c (GEMV),
// cur = r - W q (GEMV), rho = cur^T a' (DOT, the one number that returns to
// the host). An accept computes ||cur||, ||a'|| (the move's own growth g)
// and, when the window grows, brings q (m numbers) to the host for the
// growth guard, whose decisions are the CPU code's own (delayed_window.hpp,
// same constant); the device then forms b = W^T a' and t = B^{-1} b
// (GEMVs) and borders B^{-1} (kernel).
// The flush solves Z B^T = W as the CPU does (delayed_window.hpp): B from
// the window's W^T A' (m^2 numbers to the host), its LU on the host (the
// CPU's code), then W's columns permuted (kernel) and two cuBLAS TRSMs; then
// two cuBLAS GEMMs, Y = Ainv A' (then the replaced columns subtracted,
// kernel) and Ainv^T -= Z Y^T (N x N x m). A window whose rows grew beyond
// the flush's guard splits as on the CPU (flush_window, rule 7): a prefix
// solved with B's leading block, then single moves as sm's GEMV and rank-1
// GEMM, each with sm's pivot (in double for mixed).
// Refactorisations (reset, the recompute cadence, an accepted breakdown)
// run the CPU's LU inversion (linalg.hpp, the same as sm and delayed) and
// upload the result, so both start from the same inverse.

#include <cmath>
#include <optional>
#include <type_traits>

#include "slaterlab/strategies/determinant/cuda/delayed_kernels.hpp"
#include "slaterlab/strategies/determinant/delayed_update.hpp"
#include "slaterlab/strategies/determinant/delayed_window.hpp"

namespace slaterlab {

template <class Storage, class LookAheadScalar>
CudaDelayedUpdate<Storage, LookAheadScalar>::CudaDelayedUpdate(UpdaterOptions options)
    : DelayedWindowUpdater(std::move(options)) {
  if (parse_delayed_variant(this->options().variant) != DelayedVariant::incremental)
    throw std::invalid_argument("strategy 'delayed-cuda' has only the incremental look-ahead, not variant '" +
                                this->options().variant + "'");
}

template <class Storage, class LookAheadScalar>
std::string CudaDelayedUpdate<Storage, LookAheadScalar>::label() const {
  return "delayed-cuda-" + std::to_string(options().k) + "-" + std::string(to_string(precision()));
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::allocate() {
  const auto nn = std::size_t(n());
  const auto kk = std::size_t(capacity());
  if (ainvt_.size() == nn * nn && columns_.size() == nn * kk) return;  // same shape: keep
  ainvt_ = Array<Storage>(nn * nn);
  columns_ = Array<LookAheadScalar>(nn * kk);
  w_ = Array<LookAheadScalar>(nn * kk);
  binv_ = Array<LookAheadScalar>(kk * kk);
  wa_table_ = Array<LookAheadScalar>(kk * kk);
  electron_dev_ = Array<int>(kk);
  exact_ = Array<double>(nn);
  column_ = Array<LookAheadScalar>(nn);
  row_ = Array<LookAheadScalar>(nn);
  cur_row_ = Array<LookAheadScalar>(nn);
  for (Array<LookAheadScalar>* v : {&ra_, &c_row_, &q_, &wa_, &t_}) *v = Array<LookAheadScalar>(kk);
  flush_work_ = {};
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  allocate();
  electron_.assign(std::size_t(capacity()), 0);
  last_move_of_.assign(std::size_t(n()), -1);
  w_norm2_.assign(std::size_t(capacity()), 0.0);
  moved_norm2_.assign(std::size_t(capacity()), 0.0);
  q_host_.assign(std::size_t(capacity()), LookAheadScalar(0));
  restart_protocol();
  refactorise();
  mutable_counters().recomputes = 0;  // the initial factorisation is not a recompute
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::refactorise() {
  // The CPU inversion of sm and delayed (LU in double for mixed), uploaded
  // transposed so that a row of Ainv is a contiguous device column.
  const Inversion<Storage> inv = invert_at<Storage>(precision(), matrix());
  const MatrixX<Storage> ainvt = transposed<Storage>(inv.inverse);
  cuda::upload(ainvt_.data(), ainvt.data(), std::size_t(ainvt.size()));
  log_det_ = inv.log_det;
  close_window();
  note_recompute();
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::close_window() {
  for (int i = 0; i < m_; ++i) last_move_of_[std::size_t(electron_[std::size_t(i)])] = -1;
  m_ = 0;
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::load_row(Eigen::Index k) {
  cuda::convert(ainvt_.data() + k * size(), row_.data(), long(n()));
}

template <class Storage, class LookAheadScalar>
Ratio CudaDelayedUpdate<Storage, LookAheadScalar>::ratio(Eigen::Index k,
                                                         const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  proposal_open_ = true;
  const int nn = n();
  const int m = m_;
  cuda::upload(exact_.data(), new_column.data(), std::size_t(nn));
  cuda::convert(exact_.data(), column_.data(), long(nn));
  load_row(k);
  cuda::copy_on_device(cur_row_.data(), row_.data(), std::size_t(nn));
  if (m > 0) {
    // cur = r - W q, q = B^{-T} c, c_i = r^T a'_i - delta(k, k_i).
    cuda::gemv(blas_, true, nn, m, LookAheadScalar(1), columns_.data(), nn, row_.data(),
               LookAheadScalar(0), ra_.data());
    cuda::subtract_replaced(ra_.data(), c_row_.data(), electron_dev_.data(), m,
                            int(k));
    cuda::gemv(blas_, true, m, m, LookAheadScalar(1), binv_.data(), capacity(), c_row_.data(),
               LookAheadScalar(0), q_.data());
    cuda::gemv(blas_, false, nn, m, LookAheadScalar(-1), w_.data(), nn, q_.data(),
               LookAheadScalar(1), cur_row_.data());
  }
  pending_ratio_ = double(cuda::dot(blas_, nn, cur_row_.data(), column_.data()));
  return classify(pending_ratio_);
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::accept() {
  const double rho = pending_ratio_;
  const Eigen::Index k = pending().k;
  if (!commit_accepted(rho)) return;

  // This move's own amplification, as Sherman-Morrison commits it; then the
  // CPU code's decisions (delayed_window.hpp).
  column_norm_ = double(cuda::nrm2(blas_, n(), column_.data()));
  cur_norm_ = double(cuda::nrm2(blas_, n(), cur_row_.data()));
  const double step_growth = cur_norm_ * column_norm_ / std::abs(rho);
  place_accepted_move(*this, k, rho, step_growth);
}

template <class Storage, class LookAheadScalar>
bool CudaDelayedUpdate<Storage, LookAheadScalar>::reopen_window(Eigen::Index k) {
  load_row(k);
  const LookAheadScalar fresh = cuda::dot(blas_, n(), row_.data(), column_.data());
  if (!(std::abs(double(fresh)) > 0) || !std::isfinite(double(fresh))) {
    refactorise();
    return false;
  }
  open_window(k, fresh);
  return true;
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::open_window(Eigen::Index k,
                                                              LookAheadScalar pivot) {
  // B = [r^T a'] = [pivot]: B^{-1} = [1 / pivot], W^T A' = [pivot].
  cuda::border_inverse<LookAheadScalar>(binv_.data(), wa_table_.data(), capacity(), nullptr,
                                        nullptr, nullptr, nullptr, 0, pivot, pivot);
  store_move(0, k, double(pivot), true);
  m_ = 1;
}

template <class Storage, class LookAheadScalar>
bool CudaDelayedUpdate<Storage, LookAheadScalar>::extend_window(Eigen::Index k,
                                                                LookAheadScalar pivot) {
  const int nn = n();
  const int m = m_;
  const int ld = capacity();
  // The growth guard (delayed_window.hpp) on cur = r - W q.
  cuda::download(q_host_.data(), q_.data(), std::size_t(m));
  const double row_norm = double(cuda::nrm2(blas_, nn, row_.data()));
  double terms2 = row_norm * row_norm;
  for (int j = 0; j < m; ++j)
    terms2 += double(q_host_[std::size_t(j)]) * double(q_host_[std::size_t(j)]) * w_norm2_[std::size_t(j)];
  if (!within_row_guard(terms2, cur_norm_)) return false;

  // b = W^T a' (the move's electron is not in the window, so the column it
  // replaces is A0's, whose products with W are the identity's zeros),
  // t = B^{-1} b.
  cuda::gemv(blas_, true, nn, m, LookAheadScalar(1), w_.data(), nn, column_.data(),
             LookAheadScalar(0), wa_.data());
  cuda::gemv(blas_, false, m, m, LookAheadScalar(1), binv_.data(), ld, wa_.data(),
             LookAheadScalar(0), t_.data());

  const LookAheadScalar rc = cuda::dot(blas_, nn, row_.data(), column_.data());
  cuda::border_inverse(binv_.data(), wa_table_.data(), ld, t_.data(), q_.data(), wa_.data(), ra_.data(),
                       m, pivot, rc);
  store_move(m, k, double(pivot), false);
  ++m_;
  return true;
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::store_move(int i, Eigen::Index k, double pivot,
                                                             bool opens) {
  const auto nn = std::size_t(n());
  cuda::copy_on_device(columns_.data() + std::size_t(i) * nn, column_.data(), nn);
  cuda::copy_on_device(w_.data() + std::size_t(i) * nn, row_.data(), nn);
  const double row_norm = double(cuda::nrm2(blas_, n(), row_.data()));
  w_norm2_[std::size_t(i)] = row_norm * row_norm;
  const double moved = (opens ? row_norm : cur_norm_) / pivot;
  moved_norm2_[std::size_t(i)] = moved * moved;
  electron_[std::size_t(i)] = int(k);
  last_move_of_[std::size_t(k)] = i;
  cuda::upload(electron_dev_.data() + i, &electron_[std::size_t(i)], 1);
}

template <class Storage, class LookAheadScalar>
bool CudaDelayedUpdate<Storage, LookAheadScalar>::solve_window_rows(CorrectionWork& work,
                                                                    int p) const {
  const int nn = n();
  const int ld = capacity();
  work.z.reserve(std::size_t(nn) * std::size_t(ld));
  work.lu.reserve(std::size_t(ld) * std::size_t(ld));
  work.order.reserve(std::size_t(ld));
  // Z B^T = W with B = P L U: Z = W P L^{-T} U^{-T} (delayed_window.hpp).
  std::vector<LookAheadScalar> table(std::size_t(ld) * std::size_t(p));
  cuda::download(table.data(), wa_table_.data(), table.size());
  const std::optional<LuFactors<LookAheadScalar>> lu = window_matrix_lu(table.data(), ld, p);
  if (!lu) return false;
  const std::vector<int> order = lu_column_order(lu->pivots);
  cuda::upload(work.lu.data(), lu->lu.data(), std::size_t(p) * std::size_t(p));
  cuda::upload(work.order.data(), order.data(), order.size());
  cuda::gather_columns(w_.data(), nn, work.order.data(), p, work.z.data());
  cuda::trsm_right(blas_, true, true, true, nn, p, work.lu.data(), p, work.z.data(), nn);
  cuda::trsm_right(blas_, false, true, false, nn, p, work.lu.data(), p, work.z.data(), nn);
  return true;
}

template <class Storage, class LookAheadScalar>
bool CudaDelayedUpdate<Storage, LookAheadScalar>::correct(Array<Storage>& ainvt,
                                                          CorrectionWork& work) const {
  const int nn = n();
  const int m = m_;
  const std::size_t block = std::size_t(nn) * std::size_t(capacity());
  work.y.reserve(block);
  const Storage* columns = nullptr;
  if constexpr (std::is_same_v<Storage, LookAheadScalar>) {
    columns = columns_.data();
  } else {  // mixed: the flush GEMMs run in float on A' and Z rounded to float
    work.columns_store.reserve(block);
    work.z_store.reserve(block);
    cuda::convert(columns_.data(), work.columns_store.data(), long(nn) * m);
    columns = work.columns_store.data();
  }
  if (m == 1) {
    if (!solve_window_rows(work, 1)) return false;
    woodbury_update(ainvt, columns, work, 1);
    return true;
  }
  // Rule 7, the CPU's decisions (delayed_window.hpp, flush_window).
  return flush_window(
      m, w_norm2_, moved_norm2_, [&](Eigen::Index p) { return solve_window_rows(work, int(p)); },
      [&](Eigen::Index p) {
        const double z_norm = double(cuda::nrm2(blas_, int(nn * p), work.z.data()));
        return z_norm * z_norm;
      },
      [&](Eigen::Index p) { woodbury_update(ainvt, columns, work, int(p)); },
      [&](Eigen::Index first) { return apply_moves_singly(ainvt, columns, work, int(first)); });
}

template <class Storage, class LookAheadScalar>
void CudaDelayedUpdate<Storage, LookAheadScalar>::woodbury_update(Array<Storage>& ainvt,
                                                                  const Storage* columns,
                                                                  CorrectionWork& work,
                                                                  int p) const {
  const int nn = n();
  const Storage* z = nullptr;
  if constexpr (std::is_same_v<Storage, LookAheadScalar>) {
    z = work.z.data();
  } else {
    cuda::convert(work.z.data(), work.z_store.data(), long(nn) * p);
    z = work.z_store.data();
  }
  // Y = Ainv A' (Ainv = (Ainv^T)^T), then Ainv U; Ainv^T -= Z Y^T.
  cuda::gemm(blas_, true, false, nn, p, nn, Storage(1), ainvt.data(), nn, columns, nn, Storage(0),
             work.y.data(), nn);
  cuda::subtract_replaced_columns(work.y.data(), nn, p, electron_dev_.data());
  cuda::gemm(blas_, false, true, nn, nn, p, Storage(-1), z, nn, work.y.data(), nn, Storage(1),
             ainvt.data(), nn);
}

template <class Storage, class LookAheadScalar>
bool CudaDelayedUpdate<Storage, LookAheadScalar>::apply_moves_singly(Array<Storage>& ainvt,
                                                                     const Storage* columns,
                                                                     CorrectionWork& work,
                                                                     int first) const {
  // sm_update's arithmetic (linalg.hpp) on the device, with sm_pivot's pivot:
  // x = Ainv a' - e_k, Ainv^T -= row_k x^T / pivot.
  const auto nn = std::size_t(n());
  work.x.reserve(nn);
  work.row.reserve(nn);
  for (int i = first; i < m_; ++i) {
    const std::size_t k = std::size_t(electron_[std::size_t(i)]);
    const Storage* column = columns + std::size_t(i) * nn;
    const Storage* row = ainvt.data() + k * nn;
    double pivot = 0.0;
    if constexpr (std::is_same_v<Storage, LookAheadScalar>) {
      pivot = double(cuda::dot(blas_, n(), row, column));
    } else {  // accumulated in double, as sm_pivot does for mixed
      work.pivot_row.reserve(nn);
      work.pivot_column.reserve(nn);
      cuda::convert(row, work.pivot_row.data(), long(nn));
      cuda::convert(column, work.pivot_column.data(), long(nn));
      pivot = double(cuda::dot(blas_, n(), work.pivot_row.data(), work.pivot_column.data()));
    }
    if (!(std::abs(pivot) > 0) || !std::isfinite(pivot)) return false;
    cuda::gemv(blas_, true, n(), n(), Storage(1), ainvt.data(), n(), column, Storage(0), work.x.data());
    cuda::subtract_replaced_columns(work.x.data(), n(), 1, electron_dev_.data() + i);
    cuda::copy_on_device(work.row.data(), row, nn);
    cuda::gemm(blas_, false, true, n(), n(), 1, Storage(-1.0 / pivot), work.row.data(), n(),
               work.x.data(), n(), Storage(1), ainvt.data(), n());
  }
  return true;
}

template <class Storage, class LookAheadScalar>
MaintainedState CudaDelayedUpdate<Storage, LookAheadScalar>::maintained() const {
  const auto count = std::size_t(n()) * std::size_t(n());
  MatrixX<Storage> ainvt(size(), size());
  if (m_ == 0) {
    cuda::download(ainvt.data(), ainvt_.data(), count);
  } else {  // correct a device copy: observing changes nothing
    Array<Storage> copy(count);
    cuda::copy_on_device(copy.data(), ainvt_.data(), count);
    CorrectionWork work;
    if (!correct(copy, work)) {  // B singular to working precision: what a flush would refactorise
      return {invert_at<Storage>(precision(), matrix()).inverse.template cast<double>(), std::nullopt};
    }
    cuda::download(ainvt.data(), copy.data(), count);
  }
  return {transposed<double>(ainvt), std::nullopt};
}

template class CudaDelayedUpdate<float, float>;
template class CudaDelayedUpdate<float, double>;
template class CudaDelayedUpdate<double, double>;

}  // namespace slaterlab
