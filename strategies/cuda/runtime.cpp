#include "slaterlab/strategies/cuda/runtime.hpp"

#include <stdexcept>
#include <string>

namespace slaterlab::cuda {
namespace {

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
}

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS error in ") + what + ": " +
                             cublasGetStatusString(status));
}

Blas::Blas() {
  check(cublasCreate(&handle_), "cublasCreate");
  check(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
}

Blas::~Blas() { cublasDestroy(handle_); }

void gemv(const Blas& b, bool trans, int rows, int cols, float alpha, const float* a, int lda,
          const float* x, float beta, float* y) {
  check(cublasSgemv(b.get(), op(trans), rows, cols, &alpha, a, lda, x, 1, &beta, y, 1), "Sgemv");
}
void gemv(const Blas& b, bool trans, int rows, int cols, double alpha, const double* a, int lda,
          const double* x, double beta, double* y) {
  check(cublasDgemv(b.get(), op(trans), rows, cols, &alpha, a, lda, x, 1, &beta, y, 1), "Dgemv");
}
void gemm(const Blas& b, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
          const float* a, int lda, const float* x, int ldb, float beta, float* c, int ldc) {
  check(cublasSgemm(b.get(), op(trans_a), op(trans_b), m, n, k, &alpha, a, lda, x, ldb, &beta, c, ldc),
        "Sgemm");
}
void gemm(const Blas& b, bool trans_a, bool trans_b, int m, int n, int k, double alpha,
          const double* a, int lda, const double* x, int ldb, double beta, double* c, int ldc) {
  check(cublasDgemm(b.get(), op(trans_a), op(trans_b), m, n, k, &alpha, a, lda, x, ldb, &beta, c, ldc),
        "Dgemm");
}
namespace {
cublasFillMode_t fill(bool lower) { return lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
cublasDiagType_t diag(bool unit) { return unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }
}  // namespace

void trsm_right(const Blas& b, bool lower, bool trans, bool unit, int rows, int m, const float* t,
                int ldt, float* x, int ldx) {
  const float one = 1;
  check(cublasStrsm(b.get(), CUBLAS_SIDE_RIGHT, fill(lower), op(trans), diag(unit), rows, m, &one, t,
                    ldt, x, ldx),
        "Strsm");
}
void trsm_right(const Blas& b, bool lower, bool trans, bool unit, int rows, int m, const double* t,
                int ldt, double* x, int ldx) {
  const double one = 1;
  check(cublasDtrsm(b.get(), CUBLAS_SIDE_RIGHT, fill(lower), op(trans), diag(unit), rows, m, &one, t,
                    ldt, x, ldx),
        "Dtrsm");
}
float dot(const Blas& b, int n, const float* x, const float* y) {
  float r = 0;
  check(cublasSdot(b.get(), n, x, 1, y, 1, &r), "Sdot");
  return r;
}
double dot(const Blas& b, int n, const double* x, const double* y) {
  double r = 0;
  check(cublasDdot(b.get(), n, x, 1, y, 1, &r), "Ddot");
  return r;
}
float nrm2(const Blas& b, int n, const float* x) {
  float r = 0;
  check(cublasSnrm2(b.get(), n, x, 1, &r), "Snrm2");
  return r;
}
double nrm2(const Blas& b, int n, const double* x) {
  double r = 0;
  check(cublasDnrm2(b.get(), n, x, 1, &r), "Dnrm2");
  return r;
}

}  // namespace slaterlab::cuda
