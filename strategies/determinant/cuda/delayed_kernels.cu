#include "slaterlab/strategies/determinant/cuda/delayed_kernels.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "slaterlab/strategies/cuda/runtime.hpp"
#include "slaterlab/strategies/determinant/cuda/delayed_thread.hpp"

namespace slaterlab::cuda {
namespace {

constexpr int kThreads = 256;

int blocks_for(long count) { return int((count + kThreads - 1) / kThreads); }

void check_launch(const char* what) { check(cudaGetLastError(), what); }

// The kernels launch one thread per element (grid-strided where the count
// may exceed the grid); the arithmetic is delayed_thread.hpp's.
template <class From, class To>
__global__ void convert_kernel(const From* in, To* out, long count) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < count; i += long(gridDim.x) * blockDim.x)
    convert_at(in, out, i);
}

template <class T>
__global__ void subtract_replaced_kernel(const T* x, T* out, const int* electron, int m, int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) subtract_replaced_at(x, out, electron, k, i);
}

template <class T>
__global__ void gather_columns_kernel(const T* in, int n, const int* order, int m, T* out) {
  const long count = long(n) * m;
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x)
    gather_column_at(in, n, order, out, e);
}

template <class T>
__global__ void border_inverse_kernel(T* binv, T* wa_table, int ld, const T* t, const T* q,
                                      const T* wa, const T* ra, int m, T s) {
  // The corner is set by the caller's second launch, so that no thread reads
  // what another writes.
  const long e = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (e < long(m + 1) * (m + 1)) border_inverse_at(binv, wa_table, ld, t, q, wa, ra, m, s, e);
}

template <class T>
__global__ void corner_kernel(T* binv, T* wa_table, int ld, int m, T s, T rc) {
  border_corner(binv, wa_table, ld, m, s, rc);
}

template <class T>
__global__ void subtract_replaced_columns_kernel(T* y, int n, int m, const int* electron) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) subtract_replaced_column_at(y, n, electron, i);
}

}  // namespace

template <class From, class To>
void convert(const From* in, To* out, long count) {
  if (count <= 0) return;
  const int blocks = blocks_for(count) < 4096 ? blocks_for(count) : 4096;
  convert_kernel<<<blocks, kThreads>>>(in, out, count);
  check_launch("convert");
}

template <class T>
void subtract_replaced(const T* x, T* out, const int* electron, int m, int k) {
  if (m <= 0) return;
  subtract_replaced_kernel<<<blocks_for(m), kThreads>>>(x, out, electron, m, k);
  check_launch("subtract_replaced");
}

template <class T>
void gather_columns(const T* in, int n, const int* order, int m, T* out) {
  if (m == 0) return;
  gather_columns_kernel<<<std::min(blocks_for(long(n) * m), 4096), kThreads>>>(in, n, order, m, out);
  check_launch("gather_columns");
}

template <class T>
void border_inverse(T* binv, T* wa_table, int ld, const T* t, const T* q, const T* wa, const T* ra,
                    int m, T s, T rc) {
  if (m > 0) {
    border_inverse_kernel<<<blocks_for(long(m + 1) * (m + 1)), kThreads>>>(binv, wa_table, ld, t, q,
                                                                           wa, ra, m, s);
    check_launch("border_inverse");
  }
  corner_kernel<<<1, 1>>>(binv, wa_table, ld, m, s, rc);
  check_launch("border_inverse corner");
}

template <class T>
void subtract_replaced_columns(T* y, int n, int m, const int* electron) {
  if (m <= 0) return;
  subtract_replaced_columns_kernel<<<blocks_for(m), kThreads>>>(y, n, m, electron);
  check_launch("subtract_replaced_columns");
}

template void convert<double, float>(const double*, float*, long);
template void convert<float, double>(const float*, double*, long);
template void convert<float, float>(const float*, float*, long);
template void convert<double, double>(const double*, double*, long);

#define SLATERLAB_DELAYED_KERNELS(T)                                                              \
  template void subtract_replaced<T>(const T*, T*, const int*, int, int);                        \
  template void gather_columns<T>(const T*, int, const int*, int, T*);                          \
  template void border_inverse<T>(T*, T*, int, const T*, const T*, const T*, const T*, int, T, T); \
  template void subtract_replaced_columns<T>(T*, int, int, const int*);
SLATERLAB_DELAYED_KERNELS(float)
SLATERLAB_DELAYED_KERNELS(double)
#undef SLATERLAB_DELAYED_KERNELS

}  // namespace slaterlab::cuda
