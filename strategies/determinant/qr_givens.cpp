#include "slaterlab/strategies/determinant/qr_givens.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <type_traits>

extern "C" {
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau,
             double* work, const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda,
             const float* tau, float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
}

// How the QR updates work (the contract is in the header).
//
// Ratio. With A P = Q R, A^{-1} = P R^{-1} Q^T, so for a proposal (k, a')
//   w   = Q^T a'                         (one GEMV, N^2)
//   rho = e_k^T A^{-1} a' = (R^{-1} w)_j  with j the physical column holding
//                                         logical column k,
// which is det(R + (w - R e_j) e_j^T) / det(R). Only z_j of R z = w is
// needed, so the back substitution stops at row j: (N - j)^2 / 2 flops.
//
// Accept, two schemes (UpdaterOptions::variant picks one; see QrScheme):
//  - delete-append (McDaniel & Wong's scheme, factory name "qr-givens"): delete
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

namespace slaterlab {
namespace {

void geqrf(int n, float* a, float* tau, float* work, int lwork, int* info) {
  sgeqrf_(&n, &n, a, &n, tau, work, &lwork, info);
}
void geqrf(int n, double* a, double* tau, double* work, int lwork, int* info) {
  dgeqrf_(&n, &n, a, &n, tau, work, &lwork, info);
}
void orgqr(int n, float* a, const float* tau, float* work, int lwork, int* info) {
  sorgqr_(&n, &n, &n, a, &n, tau, work, &lwork, info);
}
void orgqr(int n, double* a, const double* tau, double* work, int lwork, int* info) {
  dorgqr_(&n, &n, &n, a, &n, tau, work, &lwork, info);
}

template <class T>
struct HouseholderQr {
  MatrixX<T> q;
  MatrixX<T> r;
  int q_sign = 1;  // det Q = (-1)^(number of reflectors with tau != 0)
};

/// Householder QR (LAPACK geqrf, Q formed by orgqr) of a square matrix.
template <class T>
HouseholderQr<T> householder_qr(MatrixX<T> a) {
  const int n = int(a.rows());
  VectorX<T> tau(n);
  int info = 0;
  T query{};
  geqrf(n, a.data(), tau.data(), &query, -1, &info);
  VectorX<T> work(std::max(1, int(query)));
  geqrf(n, a.data(), tau.data(), work.data(), int(work.size()), &info);
  if (info != 0) throw SingularMatrixError("geqrf failed (info " + std::to_string(info) + ")");

  HouseholderQr<T> f;
  f.r = a.template triangularView<Eigen::Upper>();
  // H = I - tau v v^T reflects (det -1) unless tau = 0, where LAPACK skips it.
  for (int i = 0; i < n; ++i)
    if (tau(i) != T(0)) f.q_sign = -f.q_sign;

  orgqr(n, a.data(), tau.data(), &query, -1, &info);
  work.resize(std::max(1, int(query)));
  orgqr(n, a.data(), tau.data(), work.data(), int(work.size()), &info);
  if (info != 0) throw SingularMatrixError("orgqr failed (info " + std::to_string(info) + ")");
  f.q = std::move(a);
  return f;
}

/// Givens rotation [c s; -s c] mapping (a, b) to (r, 0), r = hypot(a, b) >= 0.
/// hypot avoids the overflow and underflow of sqrt(a^2 + b^2).
template <class T>
void make_givens(T a, T b, T& c, T& s, T& r) {
  if (b == T(0)) {
    c = T(1);
    s = T(0);
    r = a;
    return;
  }
  r = std::hypot(a, b);
  c = a / r;
  s = b / r;
}

QrScheme scheme_from_variant(const std::string& name, const std::string& variant,
                             QrScheme fallback, bool allow_delete_append) {
  if (variant.empty()) return fallback;
  if (variant == "rank1") return QrScheme::rank1;
  if (variant == "delete-append" && allow_delete_append) return QrScheme::delete_append;
  throw std::invalid_argument("strategy '" + name + "' has no variant '" + variant +
                              "' (valid: " +
                              (allow_delete_append ? "delete-append, rank1" : "rank1") + ")");
}

}  // namespace

template <class Storage>
QrUpdater<Storage>::QrUpdater(UpdaterOptions options, QrScheme scheme)
    : UpdaterBase(std::move(options)), scheme_(scheme) {
  // The QR schemes factor and update in one precision: a mixed variant would
  // only round a double factorisation, which buys nothing here.
  const bool is_double = std::is_same_v<Storage, double>;
  if (precision() == Precision::mixed || (precision() == Precision::double_) != is_double) {
    throw std::invalid_argument("QR strategies support precision float or double, got '" +
                                std::string(to_string(precision())) + "'");
  }
}

template <class Storage>
std::string QrUpdater<Storage>::label() const {
  const char* name = scheme_ == QrScheme::delete_append ? "qr-givens-" : "qr-rank1-";
  return name + std::string(to_string(precision()));
}

template <class Storage>
void QrUpdater<Storage>::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  refactorise();
  mutable_counters().recomputes = 0;  // the initial factorisation is not a recompute
}

template <class Storage>
void QrUpdater<Storage>::refactorise() {
  MatrixX<Storage> a = matrix().template cast<Storage>();
  // Checked after rounding: a double entry beyond float's range becomes inf.
  if (!a.allFinite()) throw SingularMatrixError("matrix has a non-finite entry");
  HouseholderQr<Storage> f = householder_qr<Storage>(std::move(a));
  for (Eigen::Index i = 0; i < f.r.rows(); ++i) {
    if (f.r(i, i) == Storage(0)) {
      throw SingularMatrixError("matrix is singular: R(" + std::to_string(i) + "," +
                                std::to_string(i) + ") is exactly zero");
    }
  }
  q_ = std::move(f.q);
  r_ = std::move(f.r);
  q_sign_ = f.q_sign;
  perm_sign_ = 1;
  column_of_.resize(std::size_t(size()));
  std::iota(column_of_.begin(), column_of_.end(), Eigen::Index(0));
  physical_ = column_of_;
  ratio_log_det_ = log_det();
  note_recompute();
}

template <class Storage>
Ratio QrUpdater<Storage>::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  const Eigen::Index n = size();
  column_ = new_column.cast<Storage>();  // buffers keep their size: no allocation per move
  w_.resize(n);
  blas::gemv<Storage>(true, Storage(1), q_, column_.data(), Storage(0), w_.data());
  // rho = (R^{-1} w)_j: back substitution on the trailing block from row j.
  const Eigen::Index j = physical_[std::size_t(k)];
  const Eigen::Index m = n - j;
  z_.resize(n);
  auto z = z_.head(m);
  z = w_.tail(m);
  r_.bottomRightCorner(m, m).template triangularView<Eigen::Upper>().solveInPlace(z);
  pending_ratio_ = double(z(0));
  return classify(pending_ratio_);
}

template <class Storage>
void QrUpdater<Storage>::accept() {
  const Eigen::Index k = pending().k;
  const double rho = pending_ratio_;
  if (commit_pending()) {  // breakdown, or the periodic recompute is due
    refactorise();
    return;
  }
  const Eigen::Index j = physical_[std::size_t(k)];
  if (scheme_ == QrScheme::delete_append) {
    accept_delete_append(j);
  } else {
    accept_rank1(j);
  }
  ratio_log_det_.log_abs += std::log(std::abs(rho));
  if (rho < 0) ratio_log_det_.sign = -ratio_log_det_.sign;
}

template <class Storage>
void QrUpdater<Storage>::rotate(Eigen::Index i, Storage c, Storage s, Eigen::Index from) {
  const Eigen::Index n = size();
  for (Eigen::Index col = from; col < n; ++col) {
    const Storage x = r_(i, col);
    const Storage y = r_(i + 1, col);
    r_(i, col) = c * x + s * y;
    r_(i + 1, col) = c * y - s * x;
  }
  // Q R = (Q G^T)(G R): the same rotation on columns (i, i+1) of Q.
  Storage* qi = q_.col(i).data();
  Storage* qj = q_.col(i + 1).data();
  for (Eigen::Index row = 0; row < n; ++row) {
    const Storage x = qi[row];
    const Storage y = qj[row];
    qi[row] = c * x + s * y;
    qj[row] = c * y - s * x;
  }
}

template <class Storage>
void QrUpdater<Storage>::accept_delete_append(Eigen::Index j) {
  const Eigen::Index n = size();
  const Eigen::Index k = column_of_[std::size_t(j)];
  // Shift physical columns j+1..n-1 one to the left (column-major: one
  // contiguous block; the destination starts before the source, so a forward
  // copy is safe). Columns j..n-2 are now upper Hessenberg.
  std::copy(r_.data() + (j + 1) * n, r_.data() + n * n, r_.data() + j * n);
  for (Eigen::Index c = j; c + 1 < n; ++c) {
    Storage cs, sn, rr;
    make_givens(r_(c, c), r_(c + 1, c), cs, sn, rr);
    rotate(c, cs, sn, c + 1);
    r_(c, c) = rr;
    r_(c + 1, c) = Storage(0);
    // Q changed, so rotate Q^T a' along instead of recomputing it (O(1)).
    const Storage x = w_(c);
    const Storage y = w_(c + 1);
    w_(c) = cs * x + sn * y;
    w_(c + 1) = cs * y - sn * x;
  }
  r_.col(n - 1) = w_;
  // Logical column k moves from position j to the end: a cycle of length
  // n - j, whose sign is (-1)^(n - j - 1).
  column_of_.erase(column_of_.begin() + j);
  column_of_.push_back(k);
  for (Eigen::Index p = j; p < n; ++p) physical_[std::size_t(column_of_[std::size_t(p)])] = p;
  if ((n - j - 1) % 2 != 0) perm_sign_ = -perm_sign_;
}

template <class Storage>
void QrUpdater<Storage>::accept_rank1(Eigen::Index j) {
  const Eigen::Index n = size();
  // A + u e_j^T = Q (R + v e_j^T), v = Q^T u = w - R e_j: R with column j
  // replaced by w (header). Sweep 1: rotations on rows (i, i+1), bottom up
  // from the last row to row j, fold w's entries below row j into row j;
  // rows i > j pick up a subdiagonal entry in column i. Rows above j and the
  // columns left of j are untouched.
  r_.col(j) = w_;
  for (Eigen::Index i = n - 2; i >= j; --i) {
    Storage cs, sn, rr;
    make_givens(r_(i, j), r_(i + 1, j), cs, sn, rr);
    r_(i, j) = rr;
    r_(i + 1, j) = Storage(0);
    rotate(i, cs, sn, std::max(i, j + 1));
  }
  // Sweep 2: rotations on rows (i, i+1), top down, remove the subdiagonal
  // of the trailing block.
  for (Eigen::Index i = j + 1; i + 1 < n; ++i) {
    Storage cs, sn, rr;
    make_givens(r_(i, i), r_(i + 1, i), cs, sn, rr);
    rotate(i, cs, sn, i + 1);
    r_(i, i) = rr;
    r_(i + 1, i) = Storage(0);
  }
}

template <class Storage>
void QrUpdater<Storage>::reject() {
  drop_pending();
}

template <class Storage>
LogDet QrUpdater<Storage>::log_det() const {
  // det A = det Q * det R * sign(P); the logs are summed in double so the
  // sum of N terms loses nothing the float factors still hold.
  LogDet d{0.0, q_sign_ * perm_sign_};
  for (Eigen::Index i = 0; i < r_.rows(); ++i) {
    const double rii = double(r_(i, i));
    d.log_abs += std::log(std::abs(rii));
    if (rii < 0) d.sign = -d.sign;
    if (rii == 0) d.sign = 0;
  }
  return d;
}

template <class Storage>
MaintainedState QrUpdater<Storage>::maintained() const {
  return {std::nullopt,
          QrFactors{q_.template cast<double>(), r_.template cast<double>(), column_of_}};
}

template <class Storage>
QrGivens<Storage>::QrGivens(UpdaterOptions options)
    : QrUpdater<Storage>(options, scheme_from_variant("qr-givens", options.variant,
                                                      QrScheme::delete_append, true)) {}

template <class Storage>
QrRank1<Storage>::QrRank1(UpdaterOptions options)
    : QrUpdater<Storage>(options,
                         scheme_from_variant("qr-rank1", options.variant, QrScheme::rank1,
                                             false)) {}

template class QrUpdater<float>;
template class QrUpdater<double>;
template class QrGivens<float>;
template class QrGivens<double>;
template class QrRank1<float>;
template class QrRank1<double>;

}  // namespace slaterlab
