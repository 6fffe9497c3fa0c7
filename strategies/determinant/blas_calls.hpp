#pragma once
// The BLAS and LAPACK calls behind linalg.hpp's Kernels::blas (OpenBLAS:
// cblas for gemv, ger and trmm; Fortran LAPACK for getrf and trtri) on raw
// column-major storage, typed for float and double. Internal to
// strategies/determinant (linalg.cpp, linalg_blocks.cpp).
// lapack_getrf returns LAPACK's info (> 0: U(info, info) is exactly zero);
// lapack_trtri returns false where the triangle is singular.

#include <cblas.h>

#include <Eigen/Core>

#include <type_traits>

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void strtri_(const char* uplo, const char* diag, const int* n, float* a, const int* lda, int* info);
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda,
             int* info);
}

namespace slaterlab::linalg_detail {

using Index = Eigen::Index;

template <class T>
void blas_gemv(bool t, Eigen::Index rows, Eigen::Index cols, T alpha, const T* a, Eigen::Index lda,
          const T* x, T beta, T* y) {
  const auto op = t ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(CblasColMajor, op, int(rows), int(cols), alpha, a, int(lda), x, 1, beta, y, 1);
  } else {
    cblas_dgemv(CblasColMajor, op, int(rows), int(cols), alpha, a, int(lda), x, 1, beta, y, 1);
  }
}

template <class T>
void blas_ger(Eigen::Index rows, Eigen::Index cols, T alpha, const T* x, const T* y, T* a,
         Eigen::Index lda) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sger(CblasColMajor, int(rows), int(cols), alpha, x, 1, y, 1, a, int(lda));
  } else {
    cblas_dger(CblasColMajor, int(rows), int(cols), alpha, x, 1, y, 1, a, int(lda));
  }
}

template <class T>
int lapack_getrf(Eigen::Index n, T* a, Eigen::Index lda, int* ipiv) {
  const int size = int(n), ld = int(lda);
  int info = 0;
  if constexpr (std::is_same_v<T, float>) {
    sgetrf_(&size, &size, a, &ld, ipiv, &info);
  } else {
    dgetrf_(&size, &size, a, &ld, ipiv, &info);
  }
  return info;
}

template <class T>
bool lapack_trtri(bool lower, bool unit, Eigen::Index n, T* t, Eigen::Index ldt) {
  const char uplo = lower ? 'L' : 'U', diag = unit ? 'U' : 'N';
  const int size = int(n), ld = int(ldt);
  int info = 0;
  if constexpr (std::is_same_v<T, float>) {
    strtri_(&uplo, &diag, &size, t, &ld, &info);
  } else {
    dtrtri_(&uplo, &diag, &size, t, &ld, &info);
  }
  return info == 0;
}

template <class T>
void blas_trmm(bool left, bool lower, bool transpose, bool unit, Eigen::Index rows,
          Eigen::Index cols, T alpha, const T* t, Eigen::Index ldt, T* x, Eigen::Index ldx) {
  const auto side = left ? CblasLeft : CblasRight;
  const auto uplo = lower ? CblasLower : CblasUpper;
  const auto op = transpose ? CblasTrans : CblasNoTrans;
  const auto diag = unit ? CblasUnit : CblasNonUnit;
  if constexpr (std::is_same_v<T, float>) {
    cblas_strmm(CblasColMajor, side, uplo, op, diag, int(rows), int(cols), alpha, t, int(ldt), x,
                int(ldx));
  } else {
    cblas_dtrmm(CblasColMajor, side, uplo, op, diag, int(rows), int(cols), alpha, t, int(ldt), x,
                int(ldx));
  }
}

}  // namespace slaterlab::linalg_detail
