#include "slaterlab/strategies/determinant/linalg.hpp"

#include <cblas.h>

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
