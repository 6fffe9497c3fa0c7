#include "slaterlab/strategies/orbitals/cuda/bspline_kernels.hpp"

#include <cuda_runtime.h>

#include "slaterlab/strategies/cuda/runtime.hpp"
#include "slaterlab/strategies/orbitals/bspline_weights.hpp"

namespace slaterlab::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxGridY = 65535;

/// The 4 stencil points and weights of one dimension at one coordinate.
template <class T>
struct Axis {
  long offset[4];         // node index (mod G) times the dimension's stride
  T w[4], dw[4], d2w[4];  // B_a(t), d/dx, d^2/dx^2
};

// The CPU kernel's stencil (bspline_weights.hpp) in double, rounded once to
// T, so both read the same weights (up to the FMA contraction nvcc may
// apply to the double arithmetic).
template <class T>
__device__ Axis<T> axis(double x, double half_width, double inv_h, int g, long stride, bool derivatives) {
  const SplineStencil s = spline_stencil(x, half_width, inv_h, g, derivatives);
  Axis<T> a;
  for (int k = 0; k < 4; ++k) {
    a.offset[k] = long(s.node[k]) * stride;
    a.w[k] = T(s.w[k]);
    a.dw[k] = T(s.dw[k]);
    a.d2w[k] = T(s.d2w[k]);
  }
  return a;
}

// blockIdx.x: a block of kThreads orbitals; blockIdx.y (strided): positions.
// Threads 0..2 compute the position's three axes into shared memory; every
// thread then accumulates its orbital over the 64 stencil nodes in T, in the
// CPU kernel's order (16 (a, b) rows, each a contracted z stencil).
template <class T, bool kVgl>
__global__ void spline_kernel(SplineTable<T> table, const double* positions, int count, T* v, T* gx,
                              T* gy, T* gz, T* lap) {
  __shared__ Axis<T> axes[3];
  const long g = table.grid;
  const long strides[3] = {g * g * table.npad, g * table.npad, table.npad};
  const long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
  for (int m = blockIdx.y; m < count; m += gridDim.y) {
    if (threadIdx.x < 3) {
      axes[threadIdx.x] = axis<T>(positions[3 * long(m) + threadIdx.x], table.half_width, table.inv_h,
                                  table.grid, strides[threadIdx.x], kVgl);
    }
    __syncthreads();
    if (i < table.npad) {
      const Axis<T>& x = axes[0];
      const Axis<T>& y = axes[1];
      const Axis<T>& z = axes[2];
      T av = 0, agx = 0, agy = 0, agz = 0, alap = 0;
      for (int a = 0; a < 4; ++a) {
        for (int b = 0; b < 4; ++b) {
          const T* p = table.coefs + x.offset[a] + y.offset[b] + i;
          const T q0 = __ldg(p + z.offset[0]), q1 = __ldg(p + z.offset[1]);
          const T q2 = __ldg(p + z.offset[2]), q3 = __ldg(p + z.offset[3]);
          const T wab = x.w[a] * y.w[b];
          const T s0 = z.w[0] * q0 + z.w[1] * q1 + z.w[2] * q2 + z.w[3] * q3;
          av += wab * s0;
          if constexpr (kVgl) {
            const T s1 = z.dw[0] * q0 + z.dw[1] * q1 + z.dw[2] * q2 + z.dw[3] * q3;
            const T s2 = z.d2w[0] * q0 + z.d2w[1] * q1 + z.d2w[2] * q2 + z.d2w[3] * q3;
            agx += (x.dw[a] * y.w[b]) * s0;
            agy += (x.w[a] * y.dw[b]) * s0;
            agz += wab * s1;
            alap += (x.d2w[a] * y.w[b] + x.w[a] * y.d2w[b]) * s0 + wab * s2;
          }
        }
      }
      const long out = long(m) * table.npad + i;
      v[out] = av;
      if constexpr (kVgl) {
        gx[out] = agx;
        gy[out] = agy;
        gz[out] = agz;
        lap[out] = alap;
      }
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
