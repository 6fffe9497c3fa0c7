#pragma once
// Host-side helpers over the CUDA runtime and cuBLAS, for the CUDA
// strategies and orbital sets (built only with CUDA): error checks that
// throw, an owning device array, a cuBLAS handle and typed cuBLAS overloads
// for float and double. All work runs on the default stream, so every call
// is ordered after the previous one and a device-to-host copy waits for the
// kernels before it.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace slaterlab::cuda {

/// Throws std::runtime_error "CUDA error in <what>: <reason>" unless success.
void check(cudaError_t status, const char* what);
void check(cublasStatus_t status, const char* what);

/// An owning array of `size` T's in device memory (uninitialised).
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t size) : size_(size) {
    if (size > 0) check(cudaMalloc(reinterpret_cast<void**>(&data_), size * sizeof(T)), "cudaMalloc");
  }
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (data_) cudaFree(data_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  /// Reallocates when fewer than `size` elements are held (contents lost).
  void reserve(std::size_t size) {
    if (size_ < size) *this = DeviceArray(size);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// count T's between host and device (blocking, ordered after queued work).
template <class T>
void upload(T* device, const T* host, std::size_t count) {
  check(cudaMemcpy(device, host, count * sizeof(T), cudaMemcpyHostToDevice), "upload");
}
template <class T>
void download(T* host, const T* device, std::size_t count) {
  check(cudaMemcpy(host, device, count * sizeof(T), cudaMemcpyDeviceToHost), "download");
}
template <class T>
void copy_on_device(T* to, const T* from, std::size_t count) {
  check(cudaMemcpy(to, from, count * sizeof(T), cudaMemcpyDeviceToDevice), "device copy");
}

/// A cuBLAS handle (host pointer mode: scalars in and out are host values,
/// so a dot or norm returns once the device has computed it).
class Blas {
 public:
  Blas();
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// Column-major, as Eigen and BLAS: y = alpha op(A) x + beta y, etc.
void gemv(const Blas& b, bool trans, int rows, int cols, float alpha, const float* a, int lda,
          const float* x, float beta, float* y);
void gemv(const Blas& b, bool trans, int rows, int cols, double alpha, const double* a, int lda,
          const double* x, double beta, double* y);
void gemm(const Blas& b, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
          const float* a, int lda, const float* x, int ldb, float beta, float* c, int ldc);
void gemm(const Blas& b, bool trans_a, bool trans_b, int m, int n, int k, double alpha,
          const double* a, int lda, const double* x, int ldb, double beta, double* c, int ldc);
/// X <- X op(T)^{-1} for a triangular m x m T (leading dimension ldt) and
/// X rows x m (leading dimension ldx): a triangular solve from the right.
void trsm_right(const Blas& b, bool lower, bool trans, bool unit, int rows, int m, const float* t,
                int ldt, float* x, int ldx);
void trsm_right(const Blas& b, bool lower, bool trans, bool unit, int rows, int m, const double* t,
                int ldt, double* x, int ldx);
float dot(const Blas& b, int n, const float* x, const float* y);
double dot(const Blas& b, int n, const double* x, const double* y);
float nrm2(const Blas& b, int n, const float* x);
double nrm2(const Blas& b, int n, const double* x);

}  // namespace slaterlab::cuda
