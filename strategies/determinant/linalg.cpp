// linalg.hpp's whole-matrix BLAS forms (blas::) and the LU factorisation,
// inverse and log-det (LAPACK getrf, getri), with the tiled transpose.
#include "slaterlab/strategies/determinant/linalg.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "slaterlab/strategies/determinant/blas_calls.hpp"

extern "C" {
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work,
             const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
}

namespace slaterlab {
namespace blas {

// The whole-matrix forms are the block forms' BLAS kernels (blocks::, linalg_blocks.cpp).
template <class T>
void gemv(bool t, T alpha, const MatrixX<T>& a, const T* x, T beta, T* y) {
  blocks::gemv<T, Kernels::blas>(t, a.rows(), a.cols(), alpha, a.data(), a.rows(), x, beta, y);
}
template <class T>
void ger(T alpha, const T* x, const T* y, MatrixX<T>& a) {
  blocks::ger<T, Kernels::blas>(a.rows(), a.cols(), alpha, x, y, a.data(), a.rows());
}
template void gemv<float>(bool, float, const MatrixX<float>&, const float*, float, float*);
template void gemv<double>(bool, double, const MatrixX<double>&, const double*, double, double*);
template void ger<float>(float, const float*, const float*, MatrixX<float>&);
template void ger<double>(double, const double*, const double*, MatrixX<double>&);
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

using namespace linalg_detail;

namespace {

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
  const int info = lapack_getrf<T>(n, f.lu.data(), n, f.pivots.data());
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

template <class To, class From>
MatrixX<To> transposed(const MatrixX<From>& a) {
  constexpr Index kTile = 32;  // two 8 KiB tiles in double: both stay in L1
  MatrixX<To> t(a.cols(), a.rows());
  for (Index j0 = 0; j0 < a.cols(); j0 += kTile) {
    const Index j1 = std::min(j0 + kTile, a.cols());
    for (Index i0 = 0; i0 < a.rows(); i0 += kTile) {
      const Index i1 = std::min(i0 + kTile, a.rows());
      for (Index i = i0; i < i1; ++i)
        for (Index j = j0; j < j1; ++j) t(j, i) = To(a(i, j));
    }
  }
  return t;
}

template MatrixX<float> transposed<float, float>(const MatrixX<float>&);
template MatrixX<double> transposed<double, double>(const MatrixX<double>&);
template MatrixX<double> transposed<double, float>(const MatrixX<float>&);
template LuFactors<float> lu_factor<float>(MatrixX<float>);
template LuFactors<double> lu_factor<double>(MatrixX<double>);
template MatrixX<float> lu_inverse<float>(LuFactors<float>);
template MatrixX<double> lu_inverse<double>(LuFactors<double>);
template Inversion<float> invert<float, float>(const Eigen::MatrixXd&);
template Inversion<float> invert<float, double>(const Eigen::MatrixXd&);
template Inversion<double> invert<double, double>(const Eigen::MatrixXd&);

}  // namespace slaterlab
