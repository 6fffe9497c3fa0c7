#include "tests/determinant/delayed_threads_on_host.hpp"

#include "slaterlab/strategies/determinant/cuda/delayed_thread.hpp"

namespace slaterlab::testing {

template <class T>
void subtract_replaced_on_host(const T* x, T* out, const int* electron, int m, int k) {
  for (int i = 0; i < m; ++i) cuda::subtract_replaced_at(x, out, electron, k, i);
}

template <class T>
void gather_columns_on_host(const T* in, int n, const int* order, int m, T* out) {
  for (long e = 0; e < long(n) * m; ++e) cuda::gather_column_at(in, n, order, out, e);
}

// As on the device: every element but the corner, then the corner (a second
// launch there).
template <class T>
void border_inverse_on_host(T* binv, T* wa_table, int ld, const T* t, const T* q, const T* wa, const T* ra,
                            int m, T s, T rc) {
  if (m > 0)
    for (long e = 0; e < long(m + 1) * (m + 1); ++e)
      cuda::border_inverse_at(binv, wa_table, ld, t, q, wa, ra, m, s, e);
  cuda::border_corner(binv, wa_table, ld, m, s, rc);
}

template <class T>
void subtract_replaced_columns_on_host(T* y, int n, int m, const int* electron) {
  for (int i = 0; i < m; ++i) cuda::subtract_replaced_column_at(y, n, electron, i);
}

#define SLATERLAB_DELAYED_ON_HOST(T)                                                               \
  template void subtract_replaced_on_host<T>(const T*, T*, const int*, int, int);                 \
  template void gather_columns_on_host<T>(const T*, int, const int*, int, T*);                   \
  template void border_inverse_on_host<T>(T*, T*, int, const T*, const T*, const T*, const T*, int, T, \
                                          T);                                                      \
  template void subtract_replaced_columns_on_host<T>(T*, int, int, const int*);
SLATERLAB_DELAYED_ON_HOST(float)
SLATERLAB_DELAYED_ON_HOST(double)
#undef SLATERLAB_DELAYED_ON_HOST

}  // namespace slaterlab::testing
