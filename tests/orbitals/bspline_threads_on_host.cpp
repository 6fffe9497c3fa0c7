#include "tests/orbitals/bspline_threads_on_host.hpp"

#include "slaterlab/strategies/orbitals/cuda/bspline_thread.hpp"

namespace slaterlab::testing {
namespace {

// spline_kernel's grid: the position's three axes, then one thread per
// padded orbital.
template <class T, bool kVgl>
void launch_on_host(const cuda::SplineTable<T>& table, const double* positions, int count, T* v, T* gx,
                    T* gy, T* gz, T* lap) {
  const long g = table.grid;
  const long strides[3] = {g * g * table.npad, g * table.npad, table.npad};
  for (int m = 0; m < count; ++m) {
    cuda::SplineAxis<T> axes[3];
    for (int d = 0; d < 3; ++d)
      axes[d] = cuda::spline_axis<T>(positions[3 * long(m) + d], table.half_width, table.inv_h, table.grid,
                                     strides[d], kVgl);
    for (long i = 0; i < table.npad; ++i) {
      const cuda::SplinePoint<T> r = cuda::spline_point<T, kVgl>(table.coefs, i, axes[0], axes[1], axes[2]);
      const long out = long(m) * table.npad + i;
      cuda::store_point<T, kVgl>(r, out, v, gx, gy, gz, lap);
    }
  }
}

}  // namespace

template <class T>
void spline_values_on_host(const cuda::SplineTable<T>& table, const double* positions, int count, T* v) {
  launch_on_host<T, false>(table, positions, count, v, nullptr, nullptr, nullptr, nullptr);
}

template <class T>
void spline_vgl_on_host(const cuda::SplineTable<T>& table, const double* positions, int count, T* v, T* gx,
                        T* gy, T* gz, T* lap) {
  launch_on_host<T, true>(table, positions, count, v, gx, gy, gz, lap);
}

template void spline_values_on_host<float>(const cuda::SplineTable<float>&, const double*, int, float*);
template void spline_values_on_host<double>(const cuda::SplineTable<double>&, const double*, int, double*);
template void spline_vgl_on_host<float>(const cuda::SplineTable<float>&, const double*, int, float*, float*,
                                        float*, float*, float*);
template void spline_vgl_on_host<double>(const cuda::SplineTable<double>&, const double*, int, double*,
                                         double*, double*, double*, double*);

}  // namespace slaterlab::testing
