#pragma once
// Thin, typed wrappers over the BLAS/LAPACK calls the strategies use
// (OpenBLAS: cblas + Fortran LAPACK), plus LU-based inversion. Matrices are
// Eigen column-major, so a column is contiguous and maps to BLAS directly.
// Instantiated for float and double in linalg.cpp.

#include <Eigen/Core>

#include <vector>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"

namespace slaterlab {

template <class T>
using MatrixX = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using VectorX = Eigen::Matrix<T, Eigen::Dynamic, 1>;

namespace blas {
/// y = alpha * op(A) x + beta * y, op(A) = A or A^T.
template <class T>
void gemv(bool transpose, T alpha, const MatrixX<T>& a, const T* x, T beta, T* y);
/// A += alpha * x y^T.
template <class T>
void ger(T alpha, const T* x, const T* y, MatrixX<T>& a);
/// C = alpha * op(A) op(B) + beta * C on raw column-major blocks
/// (m x n result, inner dimension k, leading dimensions lda, ldb, ldc).
template <class T>
void gemm(bool trans_a, bool trans_b, Eigen::Index m, Eigen::Index n, Eigen::Index k,
          T alpha, const T* a, Eigen::Index lda, const T* b, Eigen::Index ldb, T beta,
          T* c, Eigen::Index ldc);
}  // namespace blas

/// The Sherman-Morrison update of an inverse kept TRANSPOSED (ainvt =
/// Ainv^T, rows of Ainv contiguous) when column k of A moves `scale` of the
/// way to u (N entries), `den` being that move's denominator:
///   x = scale (Ainv u - e_k),  Ainv^T -= (e_k^T Ainv)^T x^T / den.
/// x and row are workspaces (resized to N). Every caller gets the same
/// arithmetic at a given N and T: for N <= kSmUpdateSmallN plain loops (a
/// BLAS call costs more than the work there; with FMA where the CPU has
/// it), above it BLAS GEMV and GER.
template <class T>
void sm_update(MatrixX<T>& ainvt, Eigen::Index k, const T* u, T scale, double den,
               VectorX<T>& x, VectorX<T>& row);
/// The largest N that sm_update runs without BLAS (linalg.cpp says why 24).
inline constexpr Eigen::Index kSmUpdateSmallN = 24;

/// LU with partial pivoting (LAPACK getrf) in precision T.
template <class T>
struct LuFactors {
  MatrixX<T> lu;
  Eigen::VectorXi pivots;  // LAPACK's 1-based ipiv
  LogDet log_det;          // sum log|U_ii|, sign from U and the row swaps
};

/// Factorises `a` (already in precision T). Throws SingularMatrixError on an
/// exactly zero pivot or a non-finite entry.
template <class T>
LuFactors<T> lu_factor(MatrixX<T> a);

/// The column order of X P for the permutation P of B = P L U: column j of
/// X P is column order[j] of X (LAPACK's row swaps, applied in turn).
std::vector<int> lu_column_order(const Eigen::VectorXi& pivots);

/// A^{-1} from its LU factors (LAPACK getri).
template <class T>
MatrixX<T> lu_inverse(LuFactors<T> factors);

/// Inverse and log-det of `a` computed in precision Compute, rounded to
/// precision Storage (Compute = double, Storage = float is the mixed scheme).
template <class Storage>
struct Inversion {
  MatrixX<Storage> inverse;
  LogDet log_det;
};
template <class Storage, class Compute = Storage>
Inversion<Storage> invert(const Eigen::MatrixXd& a);

/// The refactorisation of the inverse-updating strategies at precision p:
/// invert<Storage, Storage>, or for mixed (Storage = float) the LU in double
/// rounded to float.
template <class Storage>
Inversion<Storage> invert_at(Precision p, const Eigen::MatrixXd& a) {
  return p == Precision::mixed ? invert<Storage, double>(a) : invert<Storage, Storage>(a);
}

}  // namespace slaterlab
