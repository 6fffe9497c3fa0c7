#pragma once
// The stencil of one coordinate of a tricubic B-spline (bspline.hpp): which
// 4 nodes it reads and their weights B_a(t), B_a'(t), B_a''(t), in double.
// One definition for the CPU kernels, the CUDA kernels (compiled by nvcc as
// host and device code) and the tests' error bounds, so that all of them
// read the same nodes with the same weights.

#include <math.h>

#include "slaterlab/strategies/cuda/host_device.hpp"

namespace slaterlab {

/// Nodes (indices mod G) and weights of one coordinate.
struct SplineStencil {
  int node[4];
  double w[4], dw[4], d2w[4];  // B_a(t), d/dx, d^2/dx^2 (times 1/h, 1/h^2)
};

/// The stencil at x (finite) on G nodes x_j = -L + j h, inv_h = 1/h;
/// positions outside [-L, L) wrap periodically. dw and d2w are filled only
/// when `derivatives`.
SLATERLAB_HOST_DEVICE inline SplineStencil spline_stencil(double x, double half_width, double inv_h,
                                                          int g, bool derivatives) {
  const double gd = double(g);
  double u = (x + half_width) * inv_h;
  if (!(u >= 0.0 && u < gd)) {  // outside the box: wrap periodically (fmod is exact)
    u = ::fmod(u, gd);
    if (u < 0.0) u += gd;
  }
  const double fl = ::floor(u);
  const double t = u - fl;
  int i0 = int(fl);
  if (i0 >= g) i0 -= g;  // u + G may round up to exactly G
  SplineStencil s{};
  for (int k = 0; k < 4; ++k) {
    int j = i0 - 1 + k;  // in [-1, G + 2): one correction suffices (G >= 4)
    if (j < 0) j += g;
    else if (j >= g) j -= g;
    s.node[k] = j;
  }
  const double r = 1.0 - t, t2 = t * t, t3 = t2 * t;
  s.w[0] = r * r * r / 6.0;
  s.w[1] = (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0;
  s.w[2] = (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0;
  s.w[3] = t3 / 6.0;
  if (derivatives) {
    const double ih2 = inv_h * inv_h;
    s.dw[0] = -0.5 * r * r * inv_h;
    s.dw[1] = (1.5 * t2 - 2.0 * t) * inv_h;
    s.dw[2] = (-1.5 * t2 + t + 0.5) * inv_h;
    s.dw[3] = 0.5 * t2 * inv_h;
    s.d2w[0] = r * ih2;
    s.d2w[1] = (3.0 * t - 2.0) * ih2;
    s.d2w[2] = (1.0 - 3.0 * t) * ih2;
    s.d2w[3] = t * ih2;
  }
  return s;
}

}  // namespace slaterlab
