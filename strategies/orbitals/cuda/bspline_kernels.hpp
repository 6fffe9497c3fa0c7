#pragma once
// Tricubic B-spline kernels on a CUDA device (bspline_kernels.cu), on the
// coefficient table of BsplineOrbitals<T> copied as it is: node (ix, iy, iz),
// orbital i at ((ix G + iy) G + iz) Npad + i, orbital index fastest. One
// thread per orbital and position, so a warp reads 32 consecutive orbitals
// of one stencil node (coalesced). Plain declarations over device pointers.

namespace slaterlab::cuda {

/// The table and grid the kernels read.
template <class T>
struct SplineTable {
  const T* coefs = nullptr;  // G^3 Npad, device
  int grid = 0;              // G
  long npad = 0;             // Npad
  double half_width = 0;     // L
  double inv_h = 0;          // 1 / spacing
};

/// Values of all Npad orbitals at `count` positions (device, x y z per
/// position, finite) into v (device, count x Npad: v[m Npad + i]).
template <class T>
void spline_values(const SplineTable<T>& table, const double* positions, int count, T* v);

/// Values, gradient components and Laplacians, each count x Npad as v.
template <class T>
void spline_vgl(const SplineTable<T>& table, const double* positions, int count, T* v, T* gx, T* gy,
                T* gz, T* lap);

}  // namespace slaterlab::cuda
