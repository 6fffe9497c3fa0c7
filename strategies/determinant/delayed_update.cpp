#include "strategies/determinant/delayed_update.hpp"

#include <cblas.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
}

namespace slaterlab {
namespace {

// BLAS-2 on sub-blocks (raw pointer + leading dimension): the window uses the
// leading m columns of N x K and K x K arrays.

/// y = alpha op(A) x + beta y, A rows x cols with leading dimension lda.
void gemv_block(bool trans, Eigen::Index rows, Eigen::Index cols, float alpha, const float* a,
                Eigen::Index lda, const float* x, float beta, float* y) {
  cblas_sgemv(CblasColMajor, trans ? CblasTrans : CblasNoTrans, int(rows), int(cols), alpha, a,
              int(lda), x, 1, beta, y, 1);
}
void gemv_block(bool trans, Eigen::Index rows, Eigen::Index cols, double alpha,
                const double* a, Eigen::Index lda, const double* x, double beta, double* y) {
  cblas_dgemv(CblasColMajor, trans ? CblasTrans : CblasNoTrans, int(rows), int(cols), alpha, a,
              int(lda), x, 1, beta, y, 1);
}

/// A += alpha x y^T, A rows x cols with leading dimension lda.
void ger_block(Eigen::Index rows, Eigen::Index cols, float alpha, const float* x,
               const float* y, float* a, Eigen::Index lda) {
  cblas_sger(CblasColMajor, int(rows), int(cols), alpha, x, 1, y, 1, a, int(lda));
}
void ger_block(Eigen::Index rows, Eigen::Index cols, double alpha, const double* x,
               const double* y, double* a, Eigen::Index lda) {
  cblas_dger(CblasColMajor, int(rows), int(cols), alpha, x, 1, y, 1, a, int(lda));
}

void getrf(int n, float* a, int lda, int* ipiv, int* info) {
  sgetrf_(&n, &n, a, &lda, ipiv, info);
}
void getrf(int n, double* a, int lda, int* ipiv, int* info) {
  dgetrf_(&n, &n, a, &lda, ipiv, info);
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

template <class Storage, class Look>
DelayedUpdate<Storage, Look>::DelayedUpdate(UpdaterOptions options)
    : UpdaterBase(std::move(options)), variant_(parse_delayed_variant(this->options().variant)) {}

template <class Storage, class Look>
std::string DelayedUpdate<Storage, Look>::label() const {
  std::string s = "delayed-" + std::to_string(options().k) + "-" + std::string(to_string(precision()));
  if (variant_ == DelayedVariant::naive) s += "-naive";
  return s;
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  const Eigen::Index n = a.rows();
  const Eigen::Index kmax = capacity();
  u_.setZero(n, kmax);
  w_.setZero(n, kmax);
  if (variant_ == DelayedVariant::incremental) {
    binv_.setZero(kmax, kmax);
  } else {
    b_.setZero(kmax, kmax);
    bordered_.setZero(kmax, kmax);
    pivots_.assign(std::size_t(kmax), 0);
  }
  du_.setZero(n);
  row_.setZero(n);
  b_col_.setZero(kmax);
  c_row_.setZero(kmax);
  t_.setZero(kmax);
  q_.setZero(kmax);
  flush_work_.y.setZero(n, kmax);
  flush_work_.z.setZero(n, kmax);
  if constexpr (!std::is_same_v<Storage, Look>) {
    flush_work_.z_store.setZero(n, kmax);
    flush_work_.u_store.setZero(n, kmax);
  }
  proposal_open_ = false;
  refactorise();
  mutable_counters().recomputes = 0;  // the initial factorisation is not a recompute
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::refactorise() {
  Inversion<Storage> inv = precision() == Precision::mixed ? invert<Storage, double>(matrix())
                                                           : invert<Storage, Storage>(matrix());
  // Same LU and inverse as sm, transposed once here (O(N^2) next to the
  // O(N^3) factorisation) so that rows of Ainv are contiguous afterwards.
  ainvt_ = inv.inverse.transpose();
  log_det_ = inv.log_det;
  m_ = 0;
  log_det_b_ = {};
  note_recompute();
}

template <class Storage, class Look>
Ratio DelayedUpdate<Storage, Look>::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  proposal_open_ = true;
  const Eigen::Index n = size();
  // u against the column as it stands (the exact matrix holds every accepted
  // move, those still in the window included), formed in double.
  du_ = (new_column - matrix().col(k)).template cast<Look>();
  row_ = ainvt_.col(k).template cast<Look>();
  d_ = Look(1) + row_.dot(du_);
  if (m_ > 0) {
    gemv_block(true, n, m_, Look(1), w_.data(), n, du_.data(), Look(0), b_col_.data());
    gemv_block(true, n, m_, Look(1), u_.data(), n, row_.data(), Look(0), c_row_.data());
  }
  pending_ratio_ = variant_ == DelayedVariant::incremental ? incremental_ratio() : naive_ratio();
  return classify(pending_ratio_);
}

template <class Storage, class Look>
double DelayedUpdate<Storage, Look>::incremental_ratio() {
  pivot_ = d_;
  if (m_ > 0) {
    gemv_block(false, m_, m_, Look(1), binv_.data(), capacity(), b_col_.data(), Look(0),
               t_.data());
    pivot_ -= c_row_.head(m_).dot(t_.head(m_));
  }
  return double(pivot_);
}

template <class Storage, class Look>
double DelayedUpdate<Storage, Look>::naive_ratio() {
  // Bordered matrix B' = [[B, b], [c^T, d]], packed with leading dimension m+1.
  const Eigen::Index m = m_;
  const Eigen::Index ld = m + 1;
  Look* bp = bordered_.data();
  for (Eigen::Index j = 0; j < m; ++j) {
    for (Eigen::Index i = 0; i < m; ++i) bp[i + j * ld] = b_(i, j);
    bp[m + j * ld] = c_row_(j);
    bp[j + m * ld] = b_col_(j);
  }
  bp[m + m * ld] = d_;
  int info = 0;
  getrf(int(ld), bp, int(ld), pivots_.data(), &info);
  log_det_b_new_ = info > 0 ? LogDet{-std::numeric_limits<double>::infinity(), 0}
                            : log_det_of_lu(bp, int(ld), int(ld), pivots_.data());
  if (log_det_b_new_.sign == 0) return 0.0;  // B' exactly singular: a breakdown
  return double(log_det_b_new_.sign * log_det_b_.sign) *
         std::exp(log_det_b_new_.log_abs - log_det_b_.log_abs);
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::accept() {
  const double rho = pending_ratio_;
  if (commit_pending()) {  // breakdown, or the periodic recompute is due
    proposal_open_ = false;
    refactorise();
    return;
  }
  proposal_open_ = false;
  if (variant_ == DelayedVariant::incremental) {
    border_inverse();
  } else {
    border_matrix();
  }
  u_.col(m_) = du_;
  w_.col(m_) = row_;
  ++m_;
  log_det_.log_abs += std::log(std::abs(rho));
  if (rho < 0) log_det_.sign = -log_det_.sign;
  if (m_ == capacity()) apply_window();
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::border_inverse() {
  // B'^{-1} = [[B^{-1} + t q^T / s, -t / s], [-q^T / s, 1 / s]], s = rho.
  const Eigen::Index m = m_;
  const Eigen::Index ld = capacity();
  const Look s = pivot_;
  if (m > 0) {
    gemv_block(true, m, m, Look(1), binv_.data(), ld, c_row_.data(), Look(0), q_.data());
    ger_block(m, m, Look(1) / s, t_.data(), q_.data(), binv_.data(), ld);
    for (Eigen::Index i = 0; i < m; ++i) {
      binv_(i, m) = -t_(i) / s;
      binv_(m, i) = -q_(i) / s;
    }
  }
  binv_(m, m) = Look(1) / s;
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::border_matrix() {
  const Eigen::Index m = m_;
  for (Eigen::Index i = 0; i < m; ++i) {
    b_(i, m) = b_col_(i);
    b_(m, i) = c_row_(i);
  }
  b_(m, m) = d_;
  log_det_b_ = log_det_b_new_;
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::reject() {
  drop_pending();
  proposal_open_ = false;
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::flush() {
  if (proposal_open_) throw ProtocolError("flush: a ratio() is waiting for accept/reject");
  if (m_ > 0) apply_window();
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::apply_window() {
  correct(ainvt_, flush_work_);
  m_ = 0;
  log_det_b_ = {};
  ++mutable_counters().flushes;
}

template <class Storage, class Look>
void DelayedUpdate<Storage, Look>::correct(MatrixX<Storage>& ainvt, CorrectionWork& work) const {
  const Eigen::Index n = size();
  const Eigen::Index m = m_;
  const Eigen::Index ld = capacity();

  // B^{-1}: kept (incremental) or from an LU of B at flush time (naive).
  const Look* binv = binv_.data();
  Eigen::Index ld_binv = ld;
  if (variant_ == DelayedVariant::naive) {
    work.window_inverse = lu_inverse<Look>(lu_factor<Look>(b_.topLeftCorner(m, m)));
    binv = work.window_inverse.data();
    ld_binv = m;
  }

  // Z = W B^{-T} (N x m), in Look precision.
  if (work.z.rows() != n || work.z.cols() < m) work.z.resize(n, m);
  blas::gemm<Look>(false, true, n, m, m, Look(1), w_.data(), n, binv, ld_binv, Look(0),
                   work.z.data(), n);

  const Storage* u = nullptr;
  const Storage* z = nullptr;
  if constexpr (std::is_same_v<Storage, Look>) {
    u = u_.data();
    z = work.z.data();
  } else {
    if (work.u_store.rows() != n || work.u_store.cols() < m) work.u_store.resize(n, m);
    if (work.z_store.rows() != n || work.z_store.cols() < m) work.z_store.resize(n, m);
    work.u_store.leftCols(m) = u_.leftCols(m).template cast<Storage>();
    work.z_store.leftCols(m) = work.z.leftCols(m).template cast<Storage>();
    u = work.u_store.data();
    z = work.z_store.data();
  }

  // Y = Ainv U = (Ainv^T)^T U (N x m), then Ainv^T -= Z Y^T. A window of one
  // is a rank-1 update: GEMV + GER, as sm (BLAS GEMM is slow on N x N x 1).
  if (work.y.rows() != n || work.y.cols() < m) work.y.resize(n, m);
  if (m == 1) {
    blas::gemv<Storage>(true, Storage(1), ainvt, u, Storage(0), work.y.data());
    blas::ger<Storage>(Storage(-1), z, work.y.data(), ainvt);
    return;
  }
  blas::gemm<Storage>(true, false, n, m, n, Storage(1), ainvt.data(), n, u, n, Storage(0),
                      work.y.data(), n);
  blas::gemm<Storage>(false, true, n, n, m, Storage(-1), z, n, work.y.data(), n, Storage(1),
                      ainvt.data(), n);
}

template <class Storage, class Look>
MaintainedState DelayedUpdate<Storage, Look>::maintained() const {
  if (m_ == 0) return {ainvt_.transpose().template cast<double>(), std::nullopt};
  MatrixX<Storage> ainvt = ainvt_;
  CorrectionWork work;
  correct(ainvt, work);
  return {ainvt.transpose().template cast<double>(), std::nullopt};
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
