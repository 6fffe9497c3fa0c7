#pragma once
// The CUDA B-spline kernels' launches emulated on the host: every thread's
// arithmetic (strategies/orbitals/cuda/bspline_thread.hpp), run one thread
// after another over host arrays in the layout of bspline_kernels.hpp.
// bspline_threads_on_host.cpp is compiled by nvcc where CUDA is built (as
// host code of the same __host__ __device__ functions), by the C++ compiler
// otherwise.

#include "slaterlab/strategies/orbitals/cuda/bspline_kernels.hpp"

namespace slaterlab::testing {

/// As cuda::spline_values, with host pointers.
template <class T>
void spline_values_on_host(const cuda::SplineTable<T>& table, const double* positions, int count, T* v);

/// As cuda::spline_vgl, with host pointers.
template <class T>
void spline_vgl_on_host(const cuda::SplineTable<T>& table, const double* positions, int count, T* v, T* gx,
                        T* gy, T* gz, T* lap);

}  // namespace slaterlab::testing
