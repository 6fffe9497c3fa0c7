#pragma once
// The CUDA delayed-update kernels' launches emulated on the host: every
// thread's arithmetic (strategies/determinant/cuda/delayed_thread.hpp) run
// one thread after another over host arrays, with the contracts of
// delayed_kernels.hpp. delayed_threads_on_host.cpp is compiled by nvcc where
// CUDA is built (as host code of the same __host__ __device__ functions),
// by the C++ compiler otherwise.

namespace slaterlab::testing {

template <class T>
void subtract_replaced_on_host(const T* x, T* out, const int* electron, int m, int k);

template <class T>
void gather_columns_on_host(const T* in, int n, const int* order, int m, T* out);

template <class T>
void border_inverse_on_host(T* binv, T* wa_table, int ld, const T* t, const T* q, const T* wa, const T* ra,
                            int m, T s, T rc);

template <class T>
void subtract_replaced_columns_on_host(T* y, int n, int m, const int* electron);

}  // namespace slaterlab::testing
