#pragma once
// The small device kernels of the CUDA delayed update (delayed_kernels.cu);
// everything else it does on the device is cuBLAS. Plain declarations over
// device pointers, callable from host C++. Matrices are column-major; the
// window arrays have leading dimension ld = K. `electron[i]` is k_i, the
// electron of window move i; a window holds each electron once (see
// strategies/determinant/delayed_update.hpp for the algebra).

namespace slaterlab::cuda {

/// out[i] = in[i] rounded to To, i < count.
template <class From, class To>
void convert(const From* in, To* out, long count);

/// out_i = x_i - delta(k, k_i), i < m: c from A'^T r in the ratio
/// (Sherman-Morrison's form of e_k^T Ainv u_i).
template <class T>
void subtract_replaced(const T* x, T* out, const int* electron, int m, int k);

/// out(:, j) = in(:, order[j]) for n-row column-major blocks, j < m: the
/// flush's W P (the LU's row swaps of B applied to W's columns).
template <class T>
void gather_columns(const T* in, int n, const int* order, int m, T* out);

/// Borders B^{-1} (m x m) to (m + 1) x (m + 1) with pivot s:
/// [[B^{-1} + t q^T / s, -t / s], [-q^T / s, 1 / s]], and W^T A' with the new
/// row ra (A'^T r), column wa (W^T a') and corner rc (r^T a'). m = 0 opens a
/// window: binv(0,0) = 1/s, wa_table(0,0) = rc.
template <class T>
void border_inverse(T* binv, T* wa_table, int ld, const T* t, const T* q, const T* wa, const T* ra,
                    int m, T s, T rc);

/// Y = Ainv A' (n x m, leading dimension n) becomes Ainv U: column i minus
/// e_{k_i} (Ainv a_{k_i,0} = e_{k_i}, Sherman-Morrison's form).
template <class T>
void subtract_replaced_columns(T* y, int n, int m, const int* electron);

}  // namespace slaterlab::cuda
