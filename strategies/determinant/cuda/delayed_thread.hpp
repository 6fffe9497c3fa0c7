#pragma once
// The arithmetic of one thread of the CUDA delayed-update kernels
// (delayed_kernels.cu; their contracts are in delayed_kernels.hpp). Host and
// device code (SLATERLAB_HOST_DEVICE), so that tests run exactly what the
// GPU runs on the CPU and compare it with the CPU delayed update.
//
// Each function writes one element, indexed as the kernel's thread;
// preconditions are the kernel's (index in range, device pointers valid on
// the device). Nothing is checked and nothing throws (device code).

#include "slaterlab/strategies/cuda/host_device.hpp"

namespace slaterlab::cuda {

/// out[i] = in[i] rounded to To.
template <class From, class To>
SLATERLAB_HOST_DEVICE inline void convert_at(const From* in, To* out, long i) {
  out[i] = To(in[i]);
}

/// out_i = x_i - delta(k, k_i).
template <class T>
SLATERLAB_HOST_DEVICE inline void subtract_replaced_at(const T* x, T* out, const int* electron, int k, int i) {
  out[i] = x[i] - (electron[i] == k ? T(1) : T(0));
}

/// Element e of the n x m block: out(row, column) = in(row, order[column]).
template <class T>
SLATERLAB_HOST_DEVICE inline void gather_column_at(const T* in, int n, const int* order, T* out, long e) {
  const long row = e % n, column = e / n;
  out[e] = in[row + long(order[column]) * n];
}

/// Element e of the (m + 1) x (m + 1) bordered block, the corner (m, m)
/// excluded (border_corner): B^{-1} + t q^T / s inside, -t / s and -q^T / s
/// on the border, and the new column wa and row ra of W^T A'.
template <class T>
SLATERLAB_HOST_DEVICE inline void border_inverse_at(T* binv, T* wa_table, int ld, const T* t, const T* q,
                                                    const T* wa, const T* ra, int m, T s, long e) {
  const int i = int(e % (m + 1)), j = int(e / (m + 1));
  if (i < m && j < m) {
    binv[i + long(j) * ld] += t[i] * (q[j] / s);
  } else if (i < m) {  // j == m: the new column
    binv[i + long(m) * ld] = -t[i] / s;
    wa_table[i + long(m) * ld] = wa[i];
  } else if (j < m) {  // i == m: the new row
    binv[m + long(j) * ld] = -q[j] / s;
    wa_table[m + long(j) * ld] = ra[j];
  }
}

/// The corner of the bordered block: 1 / s, and rc = r^T a' in W^T A'.
template <class T>
SLATERLAB_HOST_DEVICE inline void border_corner(T* binv, T* wa_table, int ld, int m, T s, T rc) {
  binv[m + long(m) * ld] = T(1) / s;
  wa_table[m + long(m) * ld] = rc;
}

/// Column i of Y = Ainv A' (leading dimension n) minus e_{k_i}.
template <class T>
SLATERLAB_HOST_DEVICE inline void subtract_replaced_column_at(T* y, int n, const int* electron, int i) {
  y[electron[i] + long(i) * n] -= T(1);
}

}  // namespace slaterlab::cuda
