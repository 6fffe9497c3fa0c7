#pragma once
// The small device kernels of the CUDA delayed update (delayed_kernels.cu);
// everything else it does on the device is cuBLAS. Plain declarations over
// device pointers, callable from host C++. Matrices are column-major; the
// window arrays have leading dimension ld = K. `previous[i]` is p(i), the
// earlier window move of the same electron or -1; `electron[i]` is k_i
// (see strategies/determinant/delayed_update.hpp for the algebra).

namespace slaterlab::cuda {

/// out[i] = in[i] rounded to To, i < count.
template <class From, class To>
void convert(const From* in, To* out, long count);

/// out_i = x_i - (x_{p(i)} if p(i) >= 0 else delta(k, k_i)), i < m: c from
/// A'^T r in the ratio (Sherman-Morrison's form of e_k^T Ainv u_i).
template <class T>
void subtract_replaced(const T* x, T* out, const int* previous, const int* electron, int m, int k);

/// b_j = wa_j - (wa_table(j, p) if p >= 0 else delta(k_j, k)), j < m: B's
/// new column for a move of electron k whose last window move is p.
template <class T>
void border_column(const T* wa, const T* wa_table, int ld, const int* electron, int m, int p, int k,
                   T* b);

/// ||B'^{-1}||_F^2 of the bordered inverse, formed without changing B^{-1}:
/// sum_{i,j<m} (binv(i,j) + t_i q_j / s)^2 + (||t||^2 + ||q||^2 + 1) / s^2,
/// accumulated in double into *out (device).
template <class T>
void bordered_inverse_norm2(const T* binv, int ld, const T* t, const T* q, int m, double s,
                            double* out);

/// Borders B^{-1} (m x m) to (m + 1) x (m + 1) with pivot s:
/// [[B^{-1} + t q^T / s, -t / s], [-q^T / s, 1 / s]], and W^T A' with the new
/// row ra (A'^T r), column wa (W^T a') and corner rc (r^T a'). m = 0 opens a
/// window: binv(0,0) = 1/s, wa_table(0,0) = rc.
template <class T>
void border_inverse(T* binv, T* wa_table, int ld, const T* t, const T* q, const T* wa, const T* ra,
                    int m, T s, T rc);

/// Y = Ainv A' (n x m, leading dimension n) becomes Ainv U: column i minus
/// column p(i) for a repeated electron, minus e_{k_i} for a first move;
/// per row, i descending, so that column p(i) < i is still Ainv a'_{p(i)}.
template <class T>
void subtract_replaced_columns(T* y, int n, int m, const int* previous, const int* electron);

}  // namespace slaterlab::cuda
