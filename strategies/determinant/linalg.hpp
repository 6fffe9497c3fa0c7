#pragma once
// Thin, typed wrappers over the BLAS/LAPACK calls the strategies use
// (OpenBLAS: cblas + Fortran LAPACK), plus LU-based inversion. Matrices are
// Eigen column-major, so a column is contiguous and maps to BLAS directly.
// Instantiated for float and double in linalg.cpp (whole-matrix BLAS, LU),
// linalg_blocks.cpp (blocks::), skinny_product.cpp and sm_update.cpp.

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

/// Which code runs an operation of blocks:: below: plain loops, BLAS and
/// LAPACK, or (the default) the one of the two that the operation's size
/// picks. The loops give BLAS's results to rounding: each dot product in
/// 32 / sizeof(T) interleaved partial sums added pairwise at the end, each
/// rank-1 or axpy step a multiply-add (FMA where the CPU has AVX2 and FMA,
/// chosen at run time, as in OpenBLAS's kernels; the build's baseline
/// otherwise); getrf and trtri are LAPACK's unblocked getf2 and trti2 (the
/// same pivot rule, the first largest |entry|). At small sizes a BLAS call's
/// fixed cost (30 to 100 ns, more for LAPACK's) is more than the work.
enum class Kernels { by_size, loops, blas };

/// Operations on raw column-major blocks (leading dimensions lda, ldt, ldx),
/// with the kernels K:
///   gemv  y = alpha op(A) x + beta y, A rows x cols (y not read when beta = 0);
///   ger   A += alpha x y^T, A rows x cols;
///   getrf A = P L U in place (partial pivoting, LAPACK's 1-based ipiv);
///         returns LAPACK's info (> 0: that pivot is exactly zero);
///   trtri the n x n triangle of t inverted in place, the other triangle
///         untouched (unit: the diagonal taken as 1 and not touched); false,
///         t unchanged, on an exactly zero diagonal entry;
///   trmm  X <- alpha op(T) X (left) or alpha X op(T) (right), T triangular
///         (unit as in trtri), X rows x cols.
/// By size, the loops run up to the multiply-adds below (the crossovers,
/// linalg_blocks.cpp); every caller gets the same arithmetic for the
/// same sizes, whatever the data. (GEMM has no loops: OpenBLAS's small-matrix
/// GEMM kernels were faster at every shape a flush has, but for the flush's
/// tall, skinny first product: skinny_transposed_product.)
namespace blocks {
/// gemv and ger: rows cols.
inline constexpr Eigen::Index kLoopLevel2 = 16 * 16;
/// trmm: T's side squared times X's other side, over 2.
inline constexpr Eigen::Index kLoopTrmm = 16 * 8 * 8 / 2;
/// getrf (n^3 / 3) and trtri (n^3 / 6).
inline constexpr Eigen::Index kLoopFactor = 32 * 32 * 32 / 3;
template <class T, Kernels K = Kernels::by_size>
void gemv(bool transpose, Eigen::Index rows, Eigen::Index cols, T alpha, const T* a,
          Eigen::Index lda, const T* x, T beta, T* y);
template <class T, Kernels K = Kernels::by_size>
void ger(Eigen::Index rows, Eigen::Index cols, T alpha, const T* x, const T* y, T* a,
         Eigen::Index lda);
template <class T, Kernels K = Kernels::by_size>
int getrf(Eigen::Index n, T* a, Eigen::Index lda, int* ipiv);
template <class T, Kernels K = Kernels::by_size>
bool trtri(bool lower, bool unit, Eigen::Index n, T* t, Eigen::Index ldt);
template <class T, Kernels K = Kernels::by_size>
void trmm(bool left, bool lower, bool transpose, bool unit, Eigen::Index rows,
          Eigen::Index cols, T alpha, const T* t, Eigen::Index ldt, T* x, Eigen::Index ldx);

/// C = P^T A (m x cols, leading dimension ldc) for a skinny P (n x m, ldp)
/// and A (n x cols, lda): the first product of delayed's flush, the
/// window's new columns against the inverse kept transposed. Each entry is
/// one dot product over n, summed in order (multiply-adds with AVX-512).
/// `packed` holds P^T, m rounded up to whole 64-byte vectors (grown when
/// smaller; no allocation once it is large enough). Any CPU runs it, but
/// only AVX-512's 32 vector registers hold its tiles: elsewhere it is many
/// times slower than GEMM, and skinny_product_beats_blas, which says where
/// it is the faster of the two, never picks it.
template <class T>
void skinny_transposed_product(Eigen::Index n, Eigen::Index cols, Eigen::Index m, const T* p,
                               Eigen::Index ldp, const T* a, Eigen::Index lda, T* c,
                               Eigen::Index ldc, std::vector<T>& packed);
/// Whether skinny_transposed_product beats BLAS's GEMM for C = P^T A with
/// A n x n, in T, on this CPU (the crossovers, skinny_product.cpp).
template <class T>
bool skinny_product_beats_blas(Eigen::Index n, Eigen::Index m);
}  // namespace blocks

/// The Sherman-Morrison update of an inverse kept TRANSPOSED (ainvt =
/// Ainv^T, rows of Ainv contiguous) when column k of A moves `scale` of the
/// way to u (N entries), `den` being that move's denominator:
///   x = scale (Ainv u - e_k),  Ainv^T -= (e_k^T Ainv)^T x^T / den.
/// x and row are workspaces (resized to N). Every caller gets the same
/// arithmetic at a given N and T: for N <= kSmUpdateSmallN plain loops, the
/// GEMV and then the GER (a BLAS call costs more than the work there; with
/// FMA where the CPU has it); up to kSmUpdateBlockedN BLAS GEMV and GER;
/// from there plain loops four columns of Ainv^T at a time, their dot
/// products and then their axpys while they are in L1, so that the inverse
/// is read and written once where GEMV and GER read it twice
/// (docs/benchmarks.md, "Kernel choices by size", has the timings).
template <class T>
void sm_update(MatrixX<T>& ainvt, Eigen::Index k, const T* u, T scale, double den,
               VectorX<T>& x, VectorX<T>& row);
/// Sherman-Morrison's pivot r^T a' with r = row k of Ainv (column k of
/// ainvt): accumulated in double for mixed precision, in T otherwise. sm's
/// ratio, and delayed's moves applied in sm's form, read it this one way.
template <class T>
double sm_pivot(const MatrixX<T>& ainvt, Eigen::Index k, const T* column, Precision precision) {
  const Eigen::Map<const VectorX<T>> a(column, ainvt.rows());
  if (precision == Precision::mixed) {
    return ainvt.col(k).template cast<double>().dot(a.template cast<double>());
  }
  return double(ainvt.col(k).dot(a));
}

/// The largest N that sm_update runs in unblocked loops, and the smallest
/// it runs by blocks of columns (sm_update.cpp says why 24 and 512).
inline constexpr Eigen::Index kSmUpdateSmallN = 24;
inline constexpr Eigen::Index kSmUpdateBlockedN = 512;

/// a^T, each entry converted to To (exactly, where To is as wide). The
/// strategies keep their inverse transposed (rows of Ainv contiguous) and
/// turn it at each refactorisation and each maintained(); a tiled copy,
/// each 32 x 32 tile turned in L1 where Eigen's transposed assignment
/// strides through the whole matrix (several times faster at N >= 1024:
/// docs/benchmarks.md, "Kernel choices by size").
template <class To, class From>
MatrixX<To> transposed(const MatrixX<From>& a);

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
