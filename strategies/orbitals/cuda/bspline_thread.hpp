#pragma once
// The arithmetic of one thread of the CUDA B-spline kernels
// (bspline_kernels.cu): the stencil of one coordinate, and one orbital's
// value (and gradient and Laplacian) at one position, summed over the 64
// stencil nodes in T in the CPU kernel's order (16 (a, b) rows, each a
// contracted z stencil). Host and device code (SLATERLAB_HOST_DEVICE), so
// that tests run exactly what the GPU runs on the CPU and compare it with
// BsplineOrbitals<T>'s kernels.
//
// Preconditions: the table layout of bspline_kernels.hpp; x finite; i <
// Npad. Nothing is checked and nothing throws (device code).

#include "slaterlab/strategies/cuda/host_device.hpp"
#include "slaterlab/strategies/orbitals/bspline_weights.hpp"

namespace slaterlab::cuda {

/// The 4 stencil points and weights of one dimension at one coordinate.
template <class T>
struct SplineAxis {
  long offset[4];         // node index (mod G) times the dimension's stride
  T w[4], dw[4], d2w[4];  // B_a(t), d/dx, d^2/dx^2 (zero without derivatives)
};

/// The CPU kernel's stencil (bspline_weights.hpp) in double, rounded once to
/// T, so that both read the same weights (up to the FMA contraction nvcc
/// may apply to the double arithmetic).
template <class T>
SLATERLAB_HOST_DEVICE inline SplineAxis<T> spline_axis(double x, double half_width, double inv_h, int g,
                                                       long stride, bool derivatives) {
  const SplineStencil s = spline_stencil(x, half_width, inv_h, g, derivatives);
  SplineAxis<T> a;
  for (int k = 0; k < 4; ++k) {
    a.offset[k] = long(s.node[k]) * stride;
    a.w[k] = T(s.w[k]);
    a.dw[k] = T(s.dw[k]);
    a.d2w[k] = T(s.d2w[k]);
  }
  return a;
}

/// One orbital at one position; gx..lap are left 0 without kVgl.
template <class T>
struct SplinePoint {
  T v = 0, gx = 0, gy = 0, gz = 0, lap = 0;
};

/// A read of the coefficient table: through the read-only data cache on the
/// device, a plain load on the host.
template <class T>
SLATERLAB_HOST_DEVICE inline T load_coefficient(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

/// Orbital i at the position whose axes are x, y, z; `coefs` is the table.
template <class T, bool kVgl>
SLATERLAB_HOST_DEVICE inline SplinePoint<T> spline_point(const T* coefs, long i, const SplineAxis<T>& x,
                                                         const SplineAxis<T>& y, const SplineAxis<T>& z) {
  SplinePoint<T> r;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      const T* p = coefs + x.offset[a] + y.offset[b] + i;
      const T q0 = load_coefficient(p + z.offset[0]), q1 = load_coefficient(p + z.offset[1]);
      const T q2 = load_coefficient(p + z.offset[2]), q3 = load_coefficient(p + z.offset[3]);
      const T wab = x.w[a] * y.w[b];
      const T s0 = z.w[0] * q0 + z.w[1] * q1 + z.w[2] * q2 + z.w[3] * q3;
      r.v += wab * s0;
      if constexpr (kVgl) {
        const T s1 = z.dw[0] * q0 + z.dw[1] * q1 + z.dw[2] * q2 + z.dw[3] * q3;
        const T s2 = z.d2w[0] * q0 + z.d2w[1] * q1 + z.d2w[2] * q2 + z.d2w[3] * q3;
        r.gx += (x.dw[a] * y.w[b]) * s0;
        r.gy += (x.w[a] * y.dw[b]) * s0;
        r.gz += wab * s1;
        r.lap += (x.d2w[a] * y.w[b] + x.w[a] * y.d2w[b]) * s0 + wab * s2;
      }
    }
  }
  return r;
}

/// Writes r as element `out` of the output arrays (gx..lap only with kVgl).
template <class T, bool kVgl>
SLATERLAB_HOST_DEVICE inline void store_point(const SplinePoint<T>& r, long out, T* v, T* gx, T* gy, T* gz,
                                              T* lap) {
  v[out] = r.v;
  if constexpr (kVgl) {
    gx[out] = r.gx;
    gy[out] = r.gy;
    gz[out] = r.gz;
    lap[out] = r.lap;
  }
}

}  // namespace slaterlab::cuda
