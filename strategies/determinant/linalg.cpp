#include "slaterlab/strategies/determinant/linalg.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <string>

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work,
             const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
}

namespace slaterlab {
namespace blas {

template <>
void gemv<float>(bool t, float alpha, const MatrixX<float>& a, const float* x, float beta,
                 float* y) {
  cblas_sgemv(CblasColMajor, t ? CblasTrans : CblasNoTrans, int(a.rows()), int(a.cols()),
              alpha, a.data(), int(a.rows()), x, 1, beta, y, 1);
}
template <>
void gemv<double>(bool t, double alpha, const MatrixX<double>& a, const double* x,
                  double beta, double* y) {
  cblas_dgemv(CblasColMajor, t ? CblasTrans : CblasNoTrans, int(a.rows()), int(a.cols()),
              alpha, a.data(), int(a.rows()), x, 1, beta, y, 1);
}
template <>
void ger<float>(float alpha, const float* x, const float* y, MatrixX<float>& a) {
  cblas_sger(CblasColMajor, int(a.rows()), int(a.cols()), alpha, x, 1, y, 1, a.data(),
             int(a.rows()));
}
template <>
void ger<double>(double alpha, const double* x, const double* y, MatrixX<double>& a) {
  cblas_dger(CblasColMajor, int(a.rows()), int(a.cols()), alpha, x, 1, y, 1, a.data(),
             int(a.rows()));
}
template <>
void gemm<float>(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k,
                 float alpha, const float* a, Eigen::Index lda, const float* b,
                 Eigen::Index ldb, float beta, float* c, Eigen::Index ldc) {
  cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
template <>
void gemm<double>(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k,
                  double alpha, const double* a, Eigen::Index lda, const double* b,
                  Eigen::Index ldb, double beta, double* c, Eigen::Index ldc) {
  cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

}  // namespace blas

namespace {

/// sm_update's arithmetic at small N on raw column-major storage. Each dot
/// product runs in 32 / sizeof(T) interleaved partial sums (a fixed order,
/// which the compiler can keep in one vector register), added pairwise at
/// the end; the rank-1 update is an AXPY per column.
template <class T>
[[gnu::always_inline]] inline void small_sm_update(T* ainvt, Eigen::Index n, Eigen::Index k,
                                                   const T* u, T scale, T alpha, T* x,
                                                   T* row) {
  constexpr int kLanes = 32 / sizeof(T);
  for (Eigen::Index j = 0; j < n; ++j) {
    const T* column = ainvt + j * n;
    T sums[kLanes] = {};
    Eigen::Index m = 0;
    for (; m + kLanes <= n; m += kLanes)
      for (int l = 0; l < kLanes; ++l) sums[l] += column[m + l] * u[m + l];
    T tail = 0;
    for (; m < n; ++m) tail += column[m] * u[m];
    for (int width = kLanes / 2; width > 0; width /= 2)
      for (int l = 0; l < width; ++l) sums[l] += sums[l + width];
    x[j] = sums[0] + tail;
  }
  x[k] -= T(1);
  if (scale != T(1))
    for (Eigen::Index j = 0; j < n; ++j) x[j] *= scale;
  std::copy_n(ainvt + k * n, n, row);
  // Column j of Ainv^T (row j of Ainv) gains alpha x_j row, as GER does.
  for (Eigen::Index j = 0; j < n; ++j) {
    T* column = ainvt + j * n;
    const T f = alpha * x[j];
    for (Eigen::Index i = 0; i < n; ++i) column[i] += f * row[i];
  }
}

// The same code twice: for x86-64 with AVX2 and FMA (a multiply-add rounded
// once, as in OpenBLAS's kernels), chosen at run time, and for the baseline
// the project is built for.
template <class T>
[[gnu::target("avx2,fma")]] void small_sm_update_fma(T* ainvt, Eigen::Index n, Eigen::Index k,
                                                     const T* u, T scale, T alpha, T* x,
                                                     T* row) {
  small_sm_update(ainvt, n, k, u, scale, alpha, x, row);
}
template <class T>
void small_sm_update_baseline(T* ainvt, Eigen::Index n, Eigen::Index k, const T* u, T scale,
                              T alpha, T* x, T* row) {
  small_sm_update(ainvt, n, k, u, scale, alpha, x, row);
}

bool has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace

// The small-N crossover (kSmUpdateSmallN), on this project's machine
// (AVX-512, OpenBLAS's SKYLAKEX kernels): with the loops above, sm's move in
// `slaterlab bench` takes 0.7 to 0.85 of its time with the BLAS calls at N
// = 16 to 24 in double and 0.4 to 0.5 in float (a BLAS call's fixed cost is
// most of a small move's). Timed alone, the two are level at N = 32 in
// double; in float the loops stay ahead to N = 64 (0.75 of BLAS's time),
// but one crossover keeps the arithmetic of the nightly study's sizes
// (N >= 32) BLAS's.
template <class T>
void sm_update(MatrixX<T>& ainvt, Eigen::Index k, const T* u, T scale, double den,
               VectorX<T>& x, VectorX<T>& row) {
  const Eigen::Index n = ainvt.rows();
  x.resize(n);
  row.resize(n);
  const T alpha = T(-1.0 / den);
  if (n <= kSmUpdateSmallN) {
    (has_avx2_fma() ? small_sm_update_fma<T> : small_sm_update_baseline<T>)(
        ainvt.data(), n, k, u, scale, alpha, x.data(), row.data());
    return;
  }
  row = ainvt.col(k);
  blas::gemv<T>(true, T(1), ainvt, u, T(0), x.data());
  x(k) -= T(1);
  if (scale != T(1)) x *= scale;
  blas::ger<T>(alpha, row.data(), x.data(), ainvt);
}

template void sm_update<float>(MatrixX<float>&, Eigen::Index, const float*, float, double,
                               VectorX<float>&, VectorX<float>&);
template void sm_update<double>(MatrixX<double>&, Eigen::Index, const double*, double, double,
                                VectorX<double>&, VectorX<double>&);

namespace {

void getrf(int n, float* a, int* ipiv, int* info) { sgetrf_(&n, &n, a, &n, ipiv, info); }
void getrf(int n, double* a, int* ipiv, int* info) { dgetrf_(&n, &n, a, &n, ipiv, info); }
void getri(int n, float* a, const int* ipiv, float* work, int lwork, int* info) {
  sgetri_(&n, a, &n, ipiv, work, &lwork, info);
}
void getri(int n, double* a, const int* ipiv, double* work, int lwork, int* info) {
  dgetri_(&n, a, &n, ipiv, work, &lwork, info);
}

}  // namespace

template <class T>
LuFactors<T> lu_factor(MatrixX<T> a) {
  if (a.rows() != a.cols()) throw ProtocolError("lu_factor: matrix is not square");
  if (!a.allFinite()) throw SingularMatrixError("matrix has a non-finite entry");
  const int n = int(a.rows());
  LuFactors<T> f{std::move(a), Eigen::VectorXi(n), {}};
  int info = 0;
  getrf(n, f.lu.data(), f.pivots.data(), &info);
  if (info > 0) {
    throw SingularMatrixError("matrix is singular: LU pivot U(" + std::to_string(info) + "," +
                              std::to_string(info) + ") is exactly zero");
  }
  // Accumulate log|U_ii| in double even for float factors: the sum of N logs
  // would otherwise lose digits the factors themselves do not.
  double log_abs = 0.0;
  int sign = 1;
  for (int i = 0; i < n; ++i) {
    const double u = double(f.lu(i, i));
    log_abs += std::log(std::abs(u));
    if (u < 0) sign = -sign;
    if (f.pivots(i) != i + 1) sign = -sign;
  }
  f.log_det = {log_abs, sign};
  return f;
}

std::vector<int> lu_column_order(const Eigen::VectorXi& pivots) {
  std::vector<int> order(std::size_t(pivots.size()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  for (std::size_t i = 0; i < order.size(); ++i) std::swap(order[i], order[std::size_t(pivots(Eigen::Index(i)) - 1)]);
  return order;
}

template <class T>
MatrixX<T> lu_inverse(LuFactors<T> f) {
  const int n = int(f.lu.rows());
  int info = 0;
  T query{};
  getri(n, f.lu.data(), f.pivots.data(), &query, -1, &info);
  VectorX<T> work(std::max(1, int(query)));
  getri(n, f.lu.data(), f.pivots.data(), work.data(), int(work.size()), &info);
  if (info != 0) throw SingularMatrixError("getri failed: matrix is singular");
  return std::move(f.lu);
}

template <class Storage, class Compute>
Inversion<Storage> invert(const Eigen::MatrixXd& a) {
  auto factors = lu_factor<Compute>(a.cast<Compute>());
  const LogDet log_det = factors.log_det;
  return {lu_inverse<Compute>(std::move(factors)).template cast<Storage>(), log_det};
}

template LuFactors<float> lu_factor<float>(MatrixX<float>);
template LuFactors<double> lu_factor<double>(MatrixX<double>);
template MatrixX<float> lu_inverse<float>(LuFactors<float>);
template MatrixX<double> lu_inverse<double>(LuFactors<double>);
template Inversion<float> invert<float, float>(const Eigen::MatrixXd&);
template Inversion<float> invert<float, double>(const Eigen::MatrixXd&);
template Inversion<double> invert<double, double>(const Eigen::MatrixXd&);

}  // namespace slaterlab
