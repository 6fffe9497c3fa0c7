#include "slaterlab/strategies/orbitals/cuda/bspline_kernels.hpp"

#include <cuda_runtime.h>

#include "slaterlab/strategies/cuda/runtime.hpp"
#include "slaterlab/strategies/orbitals/cuda/bspline_thread.hpp"

namespace slaterlab::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxGridY = 65535;

// blockIdx.x: a block of kThreads orbitals; blockIdx.y (strided): positions.
// Threads 0..2 compute the position's three axes into shared memory; every
// thread then computes its orbital (bspline_thread.hpp).
template <class T, bool kVgl>
__global__ void spline_kernel(SplineTable<T> table, const double* positions, int count, T* v, T* gx,
                              T* gy, T* gz, T* lap) {
  __shared__ SplineAxis<T> axes[3];
  const long g = table.grid;
  const long strides[3] = {g * g * table.npad, g * table.npad, table.npad};
  const long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
  for (int m = blockIdx.y; m < count; m += gridDim.y) {
    if (threadIdx.x < 3) {
      axes[threadIdx.x] = spline_axis<T>(positions[3 * long(m) + threadIdx.x], table.half_width,
                                         table.inv_h, table.grid, strides[threadIdx.x], kVgl);
    }
    __syncthreads();
    if (i < table.npad) {
      const SplinePoint<T> r = spline_point<T, kVgl>(table.coefs, i, axes[0], axes[1], axes[2]);
      const long out = long(m) * table.npad + i;
      store_point<T, kVgl>(r, out, v, gx, gy, gz, lap);
    }
    __syncthreads();  // axes are rewritten for the next position
  }
}

template <class T, bool kVgl>
void launch(const SplineTable<T>& table, const double* positions, int count, T* v, T* gx, T* gy, T* gz,
            T* lap) {
  if (count <= 0) return;
  const dim3 blocks(unsigned((table.npad + kThreads - 1) / kThreads),
                    unsigned(count < kMaxGridY ? count : kMaxGridY));
  spline_kernel<T, kVgl><<<blocks, kThreads>>>(table, positions, count, v, gx, gy, gz, lap);
  check(cudaGetLastError(), kVgl ? "spline_vgl" : "spline_values");
}

}  // namespace

template <class T>
void spline_values(const SplineTable<T>& table, const double* positions, int count, T* v) {
  launch<T, false>(table, positions, count, v, nullptr, nullptr, nullptr, nullptr);
}

template <class T>
void spline_vgl(const SplineTable<T>& table, const double* positions, int count, T* v, T* gx, T* gy,
                T* gz, T* lap) {
  launch<T, true>(table, positions, count, v, gx, gy, gz, lap);
}

template void spline_values<float>(const SplineTable<float>&, const double*, int, float*);
template void spline_values<double>(const SplineTable<double>&, const double*, int, double*);
template void spline_vgl<float>(const SplineTable<float>&, const double*, int, float*, float*, float*,
                                float*, float*);
template void spline_vgl<double>(const SplineTable<double>&, const double*, int, double*, double*,
                                 double*, double*, double*);

}  // namespace slaterlab::cuda
