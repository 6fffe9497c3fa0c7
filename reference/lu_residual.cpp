// The double LU and its dd residual (lu_residual.hpp).

#include "slaterlab/reference/lu_residual.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "slaterlab/reference/mp.hpp"

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
}

namespace slaterlab::reference::detail {

double norm_1(const Eigen::MatrixXd& m) { return m.cwiseAbs().colwise().sum().maxCoeff(); }
// Row sums gathered a column at a time: Eigen's rowwise() reduction walks
// a column-major matrix row by row, at a fifth of this speed.
double norm_inf(const Eigen::MatrixXd& m) {
  if (m.size() == 0) return 0.0;
  Eigen::VectorXd sums = m.col(0).cwiseAbs();
  for (Eigen::Index j = 1; j < m.cols(); ++j) sums += m.col(j).cwiseAbs();
  return sums.maxCoeff();
}

double frobenius_bound(const Eigen::MatrixXd& m) {
  const double largest = m.cwiseAbs().maxCoeff();
  if (!(largest > 0)) return largest;  // zero, or NaN passed on
  int e = 0;
  std::frexp(largest, &e);  // largest < 2^e
  const double scale = std::ldexp(1.0, e), count = double(m.size());
  // (x 2^-e)^2 <= 1; each square and addition errs by u times its result or
  // 2^-1074, so the sum of count squares by gamma_{2 count} and count 2^-1073.
  const double sum = (m * std::ldexp(1.0, -e)).squaredNorm();
  const double padded = (sum + count * 0x1p-1073) * (1 + dd::gamma(2 * count));
  return scale * std::sqrt(padded) * (1 + kU);
}

DoubleLu double_lu(const Eigen::MatrixXd& a) {
  if (!a.allFinite()) throw SingularMatrixError("fast reference: the matrix has non-finite entries");
  DoubleLu f{a, std::vector<int>(std::size_t(a.rows()))};
  const int n = int(a.rows());
  int info = 0;
  dgetrf_(&n, &n, f.lu.data(), &n, f.pivots.data(), &info);
  if (info > 0) {
    throw SingularMatrixError("fast reference: exactly zero pivot " + std::to_string(info) +
                              " in the double LU");
  }
  return f;
}

Eigen::MatrixXd lu_inverse(const DoubleLu& f) {
  Eigen::MatrixXd x = f.lu;
  const int n = int(x.rows());
  int info = 0, lwork = -1;
  double query = 0;
  dgetri_(&n, x.data(), &n, f.pivots.data(), &query, &lwork, &info);
  lwork = std::max(1, int(query));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgetri_(&n, x.data(), &n, f.pivots.data(), work.data(), &lwork, &info);
  if (info > 0) throw SingularMatrixError("fast reference: singular U in the double inverse");
  return x;
}

/// M^{-1} = (L U)^{-1} from getri's A^{-1} = M^{-1} P: the row swaps of P,
/// undone as column swaps in the order LAPACK made them.
Eigen::MatrixXd unpermuted_inverse(const Eigen::MatrixXd& x, const std::vector<int>& pivots) {
  Eigen::MatrixXd m = x;
  for (int i = 0; i < int(pivots.size()); ++i) {
    const int p = pivots[std::size_t(i)] - 1;
    if (p != i) m.col(i).swap(m.col(p));
  }
  return m;
}

Eigen::MatrixXd permuted_rows(const Eigen::MatrixXd& a, const std::vector<int>& pivots,
                              int& swap_sign) {
  // The swaps applied to row indices first, then one gather per column
  // (swapping rows of a column-major matrix in place strides through memory).
  std::vector<Eigen::Index> from(pivots.size());
  for (std::size_t i = 0; i < from.size(); ++i) from[i] = Eigen::Index(i);
  swap_sign = 1;
  for (std::size_t i = 0; i < pivots.size(); ++i) {
    const std::size_t p = std::size_t(pivots[i] - 1);
    if (p != i) {
      std::swap(from[i], from[p]);
      swap_sign = -swap_sign;
    }
  }
  Eigen::MatrixXd pa(a.rows(), a.cols());
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    for (Eigen::Index i = 0; i < a.rows(); ++i) pa(i, j) = a(from[std::size_t(i)], j);
  }
  return pa;
}

double trace_of_abs_product(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q) {
  return p.cwiseAbs().cwiseProduct(q.cwiseAbs().transpose()).sum();
}


LuResidual lu_residual(const Eigen::MatrixXd& a) {
  const int n = int(a.rows());
  LuResidual r;
  // Every N x N matrix allocated before any O(N^3) work: a size that does
  // not fit fails at once, not after minutes of factorisation.
  for (Eigen::MatrixXd* m : {&r.l, &r.pa, &r.minv, &r.eh, &r.el, &r.f, &r.lu_abs, &r.luf_abs}) {
    m->resize(n, n);
  }
  r.lu = double_lu(a);
  const Eigen::MatrixXd& lu = r.lu.lu;
  r.x = lu_inverse(r.lu);
  r.minv = unpermuted_inverse(r.x, r.lu.pivots);
  r.pa = permuted_rows(a, r.lu.pivots, r.swap_sign);
  r.l = lu;
  r.l.diagonal().setOnes();  // residual_gemm reads only i >= k of a lower factor
  dd::residual_gemm(n, n, n, r.l.data(), n, dd::Shape::lower, lu.data(), n, dd::Shape::upper,
                    r.pa.data(), n, r.eh.data(), r.el.data(), n);
  r.f = r.eh;
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0, lu.data(),
              n, r.f.data(), n);
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, n, 1.0,
              lu.data(), n, r.f.data(), n);
  for (int i = 0; i < n; ++i) r.trace = dd::add(r.trace, r.f(i, i));
  r.trace2 = r.f.cwiseProduct(r.f.transpose()).sum();
  const Eigen::MatrixXd abs_l = r.l.cwiseAbs();
  const Eigen::MatrixXd abs_u = lu.triangularView<Eigen::Upper>().toDenseMatrix().cwiseAbs();
  r.lu_abs = abs_u;
  cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0,
              abs_l.data(), n, r.lu_abs.data(), n);
  r.luf_abs = r.f.cwiseAbs();
  cblas_dtrmm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, n, 1.0,
              abs_u.data(), n, r.luf_abs.data(), n);
  cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0,
              abs_l.data(), n, r.luf_abs.data(), n);
  return r;
}

}  // namespace slaterlab::reference::detail
