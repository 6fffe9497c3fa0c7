#include "slaterlab/strategies/determinant/linalg.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work,
             const int* lwork, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
void strtri_(const char* uplo, const char* diag, const int* n, float* a, const int* lda, int* info);
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda,
             int* info);
}

namespace slaterlab {
namespace blas {

// The whole-matrix forms are the block forms' BLAS kernels (blocks::, below).
template <class T>
void gemv(bool t, T alpha, const MatrixX<T>& a, const T* x, T beta, T* y) {
  blocks::gemv<T, Kernels::blas>(t, a.rows(), a.cols(), alpha, a.data(), a.rows(), x, beta, y);
}
template <class T>
void ger(T alpha, const T* x, const T* y, MatrixX<T>& a) {
  blocks::ger<T, Kernels::blas>(a.rows(), a.cols(), alpha, x, y, a.data(), a.rows());
}
template void gemv<float>(bool, float, const MatrixX<float>&, const float*, float, float*);
template void gemv<double>(bool, double, const MatrixX<double>&, const double*, double, double*);
template void ger<float>(float, const float*, const float*, MatrixX<float>&);
template void ger<double>(double, const double*, const double*, MatrixX<double>&);
template <>
void gemm<float>(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k,
                 float alpha, const float* a, Eigen::Index lda, const float* b,
                 Eigen::Index ldb, float beta, float* c, Eigen::Index ldc) {
  cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
template <>
void gemm<double>(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k,
                  double alpha, const double* a, Eigen::Index lda, const double* b,
                  Eigen::Index ldb, double beta, double* c, Eigen::Index ldc) {
  cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

}  // namespace blas

namespace {

using Index = Eigen::Index;

// Kernels::blas: the BLAS and LAPACK calls.

template <class T>
void blas_gemv(bool t, Eigen::Index rows, Eigen::Index cols, T alpha, const T* a, Eigen::Index lda,
          const T* x, T beta, T* y) {
  const auto op = t ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(CblasColMajor, op, int(rows), int(cols), alpha, a, int(lda), x, 1, beta, y, 1);
  } else {
    cblas_dgemv(CblasColMajor, op, int(rows), int(cols), alpha, a, int(lda), x, 1, beta, y, 1);
  }
}

template <class T>
void blas_ger(Eigen::Index rows, Eigen::Index cols, T alpha, const T* x, const T* y, T* a,
         Eigen::Index lda) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sger(CblasColMajor, int(rows), int(cols), alpha, x, 1, y, 1, a, int(lda));
  } else {
    cblas_dger(CblasColMajor, int(rows), int(cols), alpha, x, 1, y, 1, a, int(lda));
  }
}

template <class T>
int lapack_getrf(Eigen::Index n, T* a, Eigen::Index lda, int* ipiv) {
  const int size = int(n), ld = int(lda);
  int info = 0;
  if constexpr (std::is_same_v<T, float>) {
    sgetrf_(&size, &size, a, &ld, ipiv, &info);
  } else {
    dgetrf_(&size, &size, a, &ld, ipiv, &info);
  }
  return info;
}

template <class T>
bool lapack_trtri(bool lower, bool unit, Eigen::Index n, T* t, Eigen::Index ldt) {
  const char uplo = lower ? 'L' : 'U', diag = unit ? 'U' : 'N';
  const int size = int(n), ld = int(ldt);
  int info = 0;
  if constexpr (std::is_same_v<T, float>) {
    strtri_(&uplo, &diag, &size, t, &ld, &info);
  } else {
    dtrtri_(&uplo, &diag, &size, t, &ld, &info);
  }
  return info == 0;
}

template <class T>
void blas_trmm(bool left, bool lower, bool transpose, bool unit, Eigen::Index rows,
          Eigen::Index cols, T alpha, const T* t, Eigen::Index ldt, T* x, Eigen::Index ldx) {
  const auto side = left ? CblasLeft : CblasRight;
  const auto uplo = lower ? CblasLower : CblasUpper;
  const auto op = transpose ? CblasTrans : CblasNoTrans;
  const auto diag = unit ? CblasUnit : CblasNonUnit;
  if constexpr (std::is_same_v<T, float>) {
    cblas_strmm(CblasColMajor, side, uplo, op, diag, int(rows), int(cols), alpha, t, int(ldt), x,
                int(ldx));
  } else {
    cblas_dtrmm(CblasColMajor, side, uplo, op, diag, int(rows), int(cols), alpha, t, int(ldt), x,
                int(ldx));
  }
}

// The plain loops' bodies (Kernels::loops of blocks::, below). Each is
// compiled twice, for x86-64 with AVX2 and FMA (a multiply-add rounded once,
// as in OpenBLAS's kernels) and for the baseline the project is built for,
// and chosen at run time (on_this_cpu); sm_update's small path is made of
// the same bodies.

/// 32 bytes of T (4 doubles, 8 floats): one AVX2 register, two SSE2 ones
/// in the baseline build; GCC vector types, for accumulate_columns to hold
/// a block of y in registers across A's columns.
template <class T>
using Lanes [[gnu::vector_size(32)]] = T;
template <class T>
constexpr int kLanes = int(32 / sizeof(T));

/// v = p[0 .. kLanes), and back (unaligned; out-parameters, as a vector
/// returned by value outside an AVX function changes the ABI).
template <class T, class V>
[[gnu::always_inline]] inline void load_lanes(V& v, const T* p) {
  std::memcpy(&v, p, sizeof v);
}
template <class T, class V>
[[gnu::always_inline]] inline void store_lanes(T* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

/// A dot product's kLanes partial sums added pairwise, then the tail
/// x[from..n) . y[from..n): every dot product of the loops ends this way.
template <class T>
[[gnu::always_inline]] inline T finish_dot(T (&sums)[kLanes<T>], const T* x, const T* y,
                                           Index from, Index n) {
  T tail = 0;
  for (Index m = from; m < n; ++m) tail += x[m] * y[m];
  for (int width = kLanes<T> / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) sums[l] += sums[l + width];
  return sums[0] + tail;
}

/// x^T y, n entries, in kLanes interleaved partial sums (a fixed order,
/// which the compiler keeps in one vector register) added pairwise at the
/// end, then the tail.
template <class T>
[[gnu::always_inline]] inline T dot_body(const T* x, const T* y, Index n) {
  T sums[kLanes<T>] = {};
  Index m = 0;
  for (; m + kLanes<T> <= n; m += kLanes<T>)
    for (int l = 0; l < kLanes<T>; ++l) sums[l] += x[m + l] * y[m + l];
  return finish_dot(sums, x, y, m, n);
}

/// y_j = alpha a_j^T x + beta y_j (y_j not read when beta = 0) for the
/// cols columns a_j = a + j lda.
template <class T>
[[gnu::always_inline]] inline void column_dots(Index rows, Index cols, T alpha, const T* a,
                                               Index lda, const T* x, T beta, T* y) {
  for (Index j = 0; j < cols; ++j) {
    const T d = alpha * dot_body(a + j * lda, x, rows);
    y[j] = beta == T(0) ? d : d + beta * y[j];
  }
}

/// y += f x, n entries.
template <class T>
[[gnu::always_inline]] inline void axpy_body(Index n, T f, const T* x, T* y) {
  for (Index i = 0; i < n; ++i) y[i] += f * x[i];
}

/// y = beta y (y not read when beta = 0).
template <class T>
[[gnu::always_inline]] inline void scale_body(Index n, T beta, T* y) {
  if (beta == T(0)) {
    std::fill_n(y, n, T(0));
  } else if (beta != T(1)) {
    for (Index i = 0; i < n; ++i) y[i] *= beta;
  }
}

/// y += sum_l coef(l) A(:, l), A rows x cols: the axpys in order of l,
/// with 4 vector registers of y held across them (the same sums, in the
/// same order, as one axpy after the other).
template <class T, class Coef>
[[gnu::always_inline]] inline void accumulate_columns(Index rows, Index cols, const Coef& coef,
                                                      const T* a, Index lda, T* y) {
  constexpr int kVectors = 4;
  constexpr Index kBlock = kVectors * kLanes<T>;
  Index i0 = 0;
  for (; i0 + kBlock <= rows; i0 += kBlock) {
    Lanes<T> acc[kVectors];
    for (int v = 0; v < kVectors; ++v) load_lanes(acc[v], y + i0 + v * kLanes<T>);
    for (Index l = 0; l < cols; ++l) {
      const T f = coef(l);
      const T* column = a + i0 + l * lda;
      for (int v = 0; v < kVectors; ++v) {
        Lanes<T> av;
        load_lanes(av, column + v * kLanes<T>);
        acc[v] += f * av;
      }
    }
    for (int v = 0; v < kVectors; ++v) store_lanes(y + i0 + v * kLanes<T>, acc[v]);
  }
  if (i0 == rows) return;
  for (Index l = 0; l < cols; ++l) axpy_body(rows - i0, T(coef(l)), a + i0 + l * lda, y + i0);
}

template <class T>
[[gnu::always_inline]] inline void gemv_body(bool t, Index rows, Index cols, T alpha, const T* a,
                                             Index lda, const T* x, T beta, T* y) {
  if (t) {
    column_dots(rows, cols, alpha, a, lda, x, beta, y);
    return;
  }
  scale_body(rows, beta, y);
  accumulate_columns(rows, cols, [&](Index l) { return alpha * x[l]; }, a, lda, y);
}

/// Column j of A gains (alpha y_j) x, as BLAS's GER forms it.
template <class T>
[[gnu::always_inline]] inline void ger_body(Index rows, Index cols, T alpha, const T* x,
                                            const T* y, T* a, Index lda) {
  for (Index j = 0; j < cols; ++j) axpy_body(rows, alpha * y[j], x, a + j * lda);
}

/// LAPACK's getf2: column by column, the first largest |entry| as pivot,
/// the column below it scaled by the pivot's reciprocal (divided where the
/// reciprocal would overflow), then the rank-1 update of the rest.
template <class T>
[[gnu::always_inline]] inline int getrf_body(Index n, T* a, Index lda, int* ipiv) {
  int info = 0;
  for (Index j = 0; j < n; ++j) {
    T* cj = a + j * lda;
    Index p = j;
    for (Index i = j + 1; i < n; ++i)
      if (std::abs(cj[i]) > std::abs(cj[p])) p = i;
    ipiv[j] = int(p + 1);
    if (cj[p] != T(0)) {
      if (p != j)
        for (Index c = 0; c < n; ++c) std::swap(a[j + c * lda], a[p + c * lda]);
      if (std::abs(cj[j]) >= std::numeric_limits<T>::min()) {
        const T r = T(1) / cj[j];
        for (Index i = j + 1; i < n; ++i) cj[i] *= r;
      } else {
        for (Index i = j + 1; i < n; ++i) cj[i] /= cj[j];
      }
    } else if (info == 0) {
      info = int(j + 1);
    }
    for (Index c = j + 1; c < n; ++c)
      axpy_body(n - j - 1, -a[j + c * lda], cj + j + 1, a + j + 1 + c * lda);
  }
  return info;
}

/// LAPACK's trti2: column j of the inverse is -x_jj times the inverse's
/// leading (upper) or trailing (lower) block applied to T's column, that
/// block already inverted (trmv's column form).
template <class T>
[[gnu::always_inline]] inline bool trtri_body(bool lower, bool unit, Index n, T* t, Index ldt) {
  if (!unit)
    for (Index j = 0; j < n; ++j)
      if (t[j + j * ldt] == T(0)) return false;
  for (Index step = 0; step < n; ++step) {
    const Index j = lower ? n - 1 - step : step;
    T* tjj = t + j + j * ldt;
    T scale = T(-1);
    if (!unit) {
      *tjj = T(1) / *tjj;
      scale = -*tjj;
    }
    if (lower) {  // x = T(j+1:, j), the block X(j+1:, j+1:) lower
      const Index len = n - 1 - j;
      T* x = tjj + 1;
      const T* block = tjj + 1 + ldt;
      for (Index c = len - 1; c >= 0; --c) {
        const T xc = x[c];
        axpy_body(len - 1 - c, xc, block + c + 1 + c * ldt, x + c + 1);
        if (!unit) x[c] = xc * block[c + c * ldt];
      }
      for (Index i = 0; i < len; ++i) x[i] *= scale;
    } else {  // x = T(:j, j), the block X(:j, :j) upper
      T* x = t + j * ldt;
      for (Index c = 0; c < j; ++c) {
        const T xc = x[c];
        axpy_body(c, xc, t + c * ldt, x);
        if (!unit) x[c] = xc * t[c + c * ldt];
      }
      for (Index i = 0; i < j; ++i) x[i] *= scale;
    }
  }
  return true;
}

/// BLAS's trmm. On the right, column j of X op(T) is sum_l X(:, l) op(T)(l, j)
/// over l <= j (op(T) upper: columns from the last) or l >= j (lower: from
/// the first), so each is formed before the columns it reads are
/// overwritten; on the left, entry i of op(T) x likewise from the top or
/// the bottom.
template <class T>
[[gnu::always_inline]] inline void trmm_body(bool left, bool lower, bool transpose, bool unit,
                                             Index rows, Index cols, T alpha, const T* t,
                                             Index ldt, T* x, Index ldx) {
  const bool upper = lower == transpose;  // op(T) upper triangular
  const auto op = [&](Index i, Index l) { return transpose ? t[l + i * ldt] : t[i + l * ldt]; };
  const auto diagonal = [&](Index i) { return unit ? T(1) : t[i + i * ldt]; };
  if (!left) {
    for (Index step = 0; step < cols; ++step) {
      const Index j = upper ? cols - 1 - step : step;
      T* xj = x + j * ldx;
      const T d = alpha * diagonal(j);
      for (Index i = 0; i < rows; ++i) xj[i] *= d;
      const Index first = upper ? 0 : j + 1, last = upper ? j : cols;
      for (Index l = first; l < last; ++l) axpy_body(rows, alpha * op(l, j), x + l * ldx, xj);
    }
    return;
  }
  for (Index j = 0; j < cols; ++j) {
    T* xj = x + j * ldx;
    for (Index step = 0; step < rows; ++step) {
      const Index i = upper ? step : rows - 1 - step;
      T sum = diagonal(i) * xj[i];
      const Index first = upper ? i + 1 : 0, last = upper ? rows : i;
      for (Index l = first; l < last; ++l) sum += op(i, l) * xj[l];
      xj[i] = alpha * sum;
    }
  }
}

/// sm_update's arithmetic at small N on raw column-major storage: x = A^T u
/// by dot products, then the rank-1 update, an AXPY per column.
template <class T>
[[gnu::always_inline]] inline void sm_update_body(T* ainvt, Index n, Index k, const T* u,
                                                  T scale, T alpha, T* x, T* row) {
  gemv_body(true, n, n, T(1), ainvt, n, u, T(0), x);
  x[k] -= T(1);
  if (scale != T(1))
    for (Index j = 0; j < n; ++j) x[j] *= scale;
  std::copy_n(ainvt + k * n, n, row);
  // Column j of Ainv^T (row j of Ainv) gains alpha x_j row, as GER does.
  ger_body(n, n, alpha, row, x, ainvt, n);
}

/// x_j = scale (a_j^T u - delta_jk) from the dot product a_j^T u.
template <class T>
[[gnu::always_inline]] inline T sm_coefficient(T dot, Index j, Index k, T scale) {
  if (j == k) dot -= T(1);
  return scale == T(1) ? dot : dot * scale;
}

/// sm_update from kSmUpdateBlockedN on: the rank-1 update one block of four
/// columns of Ainv^T at a time, each block's x_j = scale (a_j^T u - delta_jk)
/// (four dot products sharing u's loads, each in kLanes partial sums added
/// pairwise) and then its axpys with the old row k, while the block is in
/// L1 or L2 (4 N entries). GEMV then GER read the inverse twice and write it
/// once; this reads and writes it once, which is what the update costs once
/// Ainv^T no longer fits in cache.
template <class T>
[[gnu::always_inline]] inline void rank1_by_blocks_body(T* ainvt, Index n, Index k, const T* u,
                                                        T scale, T alpha, T* x, const T* row) {
  constexpr int kColumns = 4;
  constexpr int L = kLanes<T>;
  Index j = 0;
  for (; j + kColumns <= n; j += kColumns) {
    T* a = ainvt + j * n;
    Lanes<T> acc[kColumns] = {};
    Index i = 0;
    for (; i + L <= n; i += L) {
      Lanes<T> uv;
      load_lanes(uv, u + i);
      for (int c = 0; c < kColumns; ++c) {
        Lanes<T> av;
        load_lanes(av, a + c * n + i);
        acc[c] += av * uv;
      }
    }
    for (int c = 0; c < kColumns; ++c) {
      T sums[L];
      store_lanes(sums, acc[c]);
      x[j + c] = sm_coefficient(finish_dot(sums, a + c * n, u, i, n), j + c, k, scale);
    }
    for (int c = 0; c < kColumns; ++c) axpy_body(n, alpha * x[j + c], row, a + c * n);
  }
  for (; j < n; ++j) {
    x[j] = sm_coefficient(dot_body(ainvt + j * n, u, n), j, k, scale);
    axpy_body(n, alpha * x[j], row, ainvt + j * n);
  }
}

bool has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

template <auto Body, class... Args>
[[gnu::target("avx2,fma")]] auto with_fma(Args... args) {
  return Body(args...);
}
template <auto Body, class... Args>
auto with_baseline(Args... args) {
  return Body(args...);
}
/// Body(args...) compiled for this CPU.
template <auto Body, class... Args>
auto on_this_cpu(Args... args) {
  return has_avx2_fma() ? with_fma<Body>(args...) : with_baseline<Body>(args...);
}


// The flush's first product, C = P^T A with P skinny (blocks::
// skinny_transposed_product). OpenBLAS packs all of A (N x N) into its
// buffers for this shape and reaches 30-40 GFLOP/s at m = 13 to 16 (N = 256
// to 2048, one thread; its GEMM with m >= 128 reaches 70). Here P^T is
// packed once, m rounded up to whole 64-byte vectors, and a tile of C of
// JB columns by IB vectors stays in registers while A's JB columns stream
// through once: JB broadcasts and IB loads feed JB * IB multiply-adds per
// row of A. With AVX-512's 32 registers the tiles are 12 x 2 and 6 x 4
// (24 accumulators), 74 GFLOP/s at m = 16 (N = 256 to 2048).

/// 64 bytes of T (8 doubles, 16 floats): one AVX-512 register.
template <class T>
using Vector64 [[gnu::vector_size(64)]] = T;
template <class T>
constexpr Index kLanes64 = Index(64 / sizeof(T));

/// Columns c[.. + jb * ldc] rows [i0, i0 + width) of C = P^T A for JB
/// columns of A, from packed P^T (row l at packed + l * mp).
template <class T, int JB, int IB>
[[gnu::always_inline]] inline void skinny_tile(Index n, const T* a, Index lda, const T* packed,
                                               Index mp, Index i0, Index width, T* c, Index ldc) {
  // The tile's loops unrolled whatever the optimisation level, so that the
  // accumulators stay in registers (at -O2 GCC 12 leaves them in memory).
  Vector64<T> acc[JB][IB];
#pragma GCC unroll 16
  for (int j = 0; j < JB; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < IB; ++v) acc[j][v] = Vector64<T>{};
  for (Index l = 0; l < n; ++l) {
    Vector64<T> pv[IB];
#pragma GCC unroll 4
    for (int v = 0; v < IB; ++v) std::memcpy(&pv[v], packed + l * mp + i0 + v * kLanes64<T>, 64);
#pragma GCC unroll 16
    for (int j = 0; j < JB; ++j) {
      const T s = a[l + j * lda];
#pragma GCC unroll 4
      for (int v = 0; v < IB; ++v) acc[j][v] += s * pv[v];
    }
  }
  for (int j = 0; j < JB; ++j) {
    T out[IB * kLanes64<T>];
    for (int v = 0; v < IB; ++v) std::memcpy(out + v * kLanes64<T>, &acc[j][v], 64);
    std::copy_n(out, std::min(width, IB * kLanes64<T>), c + j * ldc + i0);
  }
}

/// All of C's rows for JB columns: tiles of 4, 2 and 1 vectors of rows.
template <class T, int JB>
[[gnu::always_inline]] inline void skinny_columns(Index n, Index m, const T* a, Index lda,
                                                  const T* packed, Index mp, T* c, Index ldc) {
  constexpr Index L = kLanes64<T>;
  Index i0 = 0;
  if constexpr (JB % 2 == 0) {
    for (; m - i0 >= 4 * L; i0 += 4 * L) {
      skinny_tile<T, JB / 2, 4>(n, a, lda, packed, mp, i0, 4 * L, c, ldc);
      skinny_tile<T, JB / 2, 4>(n, a + JB / 2 * lda, lda, packed, mp, i0, 4 * L, c + JB / 2 * ldc, ldc);
    }
  }
  for (; m - i0 > L; i0 += 2 * L) skinny_tile<T, JB, 2>(n, a, lda, packed, mp, i0, m - i0, c, ldc);
  if (i0 < m) skinny_tile<T, JB, 1>(n, a, lda, packed, mp, i0, m - i0, c, ldc);
}

template <class T>
[[gnu::always_inline]] inline void skinny_product_body(Index n, Index cols, Index m, const T* p,
                                                       Index ldp, const T* a, Index lda, T* c,
                                                       Index ldc, T* packed) {
  const Index mp = (m + kLanes64<T> - 1) / kLanes64<T> * kLanes64<T>;
  for (Index l = 0; l < n; ++l) {
    for (Index i = 0; i < m; ++i) packed[l * mp + i] = p[l + i * ldp];
    std::fill(packed + l * mp + m, packed + (l + 1) * mp, T(0));
  }
  constexpr int kColumns = 12;
  Index j = 0;
  for (; j + kColumns <= cols; j += kColumns)
    skinny_columns<T, kColumns>(n, m, a + j * lda, lda, packed, mp, c + j * ldc, ldc);
  for (; j < cols; ++j) skinny_columns<T, 1>(n, m, a + j * lda, lda, packed, mp, c + j * ldc, ldc);
}

bool has_avx512f() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

template <auto Body, class... Args>
[[gnu::target("avx512f")]] auto with_avx512(Args... args) {
  return Body(args...);
}

}  // namespace

// The crossovers (blocks::kLoopLevel2, kLoopTrmm, kLoopFactor), each
// operation timed alone at the shapes of delayed's window and flush (N = 16
// to 128, m = 2 to 64) on this project's machine (AVX-512, OpenBLAS 0.3.21's
// SKYLAKEX kernels, one thread): the loops of gemv were faster up to about
// 256 multiply-adds (N = 16, m = 16: 77 ns transposed against BLAS's 55, 27
// not transposed against 69), of GER up to 16 x 16 (44 against 71 ns in
// double; faster at every size in float), of TRMM up to 16 x 8 (112 against
// 104 ns, and 37 against 88 at 16 x 4), of getrf up to n = 32 (0.49 against
// 0.92 us at n = 16, 2.5 against 3.8 at 32) and of trtri up to 64 (0.47
// against 0.61 us at 16). GEMM has none: OpenBLAS's small-matrix kernels
// took 119 and 299 ns for the flush's two 16 x 16 x 16 products, plain
// loops 413 and 1176.
namespace blocks {
namespace {
constexpr bool use_loops(Kernels kernels, Index work, Index limit) {
  return kernels == Kernels::loops || (kernels == Kernels::by_size && work <= limit);
}
}  // namespace

template <class T, Kernels K>
void gemv(bool transpose, Index rows, Index cols, T alpha, const T* a, Index lda, const T* x,
          T beta, T* y) {
  if (use_loops(K, rows * cols, kLoopLevel2)) {
    on_this_cpu<gemv_body<T>>(transpose, rows, cols, alpha, a, lda, x, beta, y);
  } else {
    blas_gemv<T>(transpose, rows, cols, alpha, a, lda, x, beta, y);
  }
}
template <class T, Kernels K>
void ger(Index rows, Index cols, T alpha, const T* x, const T* y, T* a, Index lda) {
  if (use_loops(K, rows * cols, kLoopLevel2)) {
    on_this_cpu<ger_body<T>>(rows, cols, alpha, x, y, a, lda);
  } else {
    blas_ger<T>(rows, cols, alpha, x, y, a, lda);
  }
}
template <class T, Kernels K>
int getrf(Index n, T* a, Index lda, int* ipiv) {
  if (use_loops(K, n * n * n / 3, kLoopFactor)) return on_this_cpu<getrf_body<T>>(n, a, lda, ipiv);
  return lapack_getrf<T>(n, a, lda, ipiv);
}
template <class T, Kernels K>
bool trtri(bool lower, bool unit, Index n, T* t, Index ldt) {
  if (use_loops(K, n * n * n / 6, kLoopFactor))
    return on_this_cpu<trtri_body<T>>(lower, unit, n, t, ldt);
  return lapack_trtri<T>(lower, unit, n, t, ldt);
}
template <class T, Kernels K>
void trmm(bool left, bool lower, bool transpose, bool unit, Index rows, Index cols, T alpha,
          const T* t, Index ldt, T* x, Index ldx) {
  const Index side = left ? rows : cols;  // T is side x side
  if (use_loops(K, side * side * (left ? cols : rows) / 2, kLoopTrmm)) {
    on_this_cpu<trmm_body<T>>(left, lower, transpose, unit, rows, cols, alpha, t, ldt, x, ldx);
  } else {
    blas_trmm<T>(left, lower, transpose, unit, rows, cols, alpha, t, ldt, x, ldx);
  }
}

template <class T>
void skinny_transposed_product(Index n, Index cols, Index m, const T* p, Index ldp, const T* a,
                               Index lda, T* c, Index ldc, std::vector<T>& packed) {
  if (cols == 0 || m == 0) return;
  if (n == 0) {  // an empty inner dimension: C = 0, as GEMM gives
    for (Index j = 0; j < cols; ++j) std::fill_n(c + j * ldc, m, T(0));
    return;
  }
  const Index mp = (m + kLanes64<T> - 1) / kLanes64<T> * kLanes64<T>;
  if (packed.size() < std::size_t(n * mp)) packed.resize(std::size_t(n * mp));
  if (has_avx512f()) {
    with_avx512<skinny_product_body<T>>(n, cols, m, p, ldp, a, lda, c, ldc, packed.data());
  } else {
    on_this_cpu<skinny_product_body<T>>(n, cols, m, p, ldp, a, lda, c, ldc, packed.data());
  }
}
template void skinny_transposed_product<float>(Index, Index, Index, const float*, Index,
                                               const float*, Index, float*, Index,
                                               std::vector<float>&);
template void skinny_transposed_product<double>(Index, Index, Index, const double*, Index,
                                                const double*, Index, double*, Index,
                                                std::vector<double>&);

template <class T>
bool skinny_product_beats_blas(Index n, Index m) {
  // Measured against OpenBLAS's GEMM for the same C (A n x n, one thread,
  // this project's machine, best of several): in double the kernel is
  // 1.05-2.4 times faster for m = 8 to 64 at n = 128 to 2048 (and up to 96
  // from n = 256), slower below m = 8 (0.4-0.6: a vector of 8 rows mostly
  // padding) and at n <= 64 for m <= 16, and 0.66 at n = 2048, m = 128,
  // where P^T no longer stays in L2 beside A's columns. In float (16 lanes)
  // it is 1.01-1.3 times faster for m = 8 to 32 at n = 256 and 512 but not
  // at 48 (0.95), 1.03-1.5 for m = 8 to 64 from n = 1024, and at n <= 128
  // mostly slower. Without AVX-512 the tiles spill: BLAS.
  if (!has_avx512f() || m < 8) return false;
  if constexpr (sizeof(T) == sizeof(double)) return n >= 128 && m <= 64;
  return n >= 256 && m <= (n >= 1024 ? 64 : 32);
}
template bool skinny_product_beats_blas<float>(Index, Index);
template bool skinny_product_beats_blas<double>(Index, Index);

#define SLATERLAB_BLOCKS(T, K)                                                                 \
  template void gemv<T, K>(bool, Index, Index, T, const T*, Index, const T*, T, T*);          \
  template void ger<T, K>(Index, Index, T, const T*, const T*, T*, Index);                    \
  template int getrf<T, K>(Index, T*, Index, int*);                                           \
  template bool trtri<T, K>(bool, bool, Index, T*, Index);                                    \
  template void trmm<T, K>(bool, bool, bool, bool, Index, Index, T, const T*, Index, T*, Index);
SLATERLAB_BLOCKS(float, Kernels::by_size)
SLATERLAB_BLOCKS(double, Kernels::by_size)
SLATERLAB_BLOCKS(float, Kernels::loops)
SLATERLAB_BLOCKS(double, Kernels::loops)
SLATERLAB_BLOCKS(float, Kernels::blas)
SLATERLAB_BLOCKS(double, Kernels::blas)
#undef SLATERLAB_BLOCKS

}  // namespace blocks


// The small-N crossover (kSmUpdateSmallN), on this project's machine
// (AVX-512, OpenBLAS's SKYLAKEX kernels): with the loops above, sm's move in
// `slaterlab bench` takes 0.7 to 0.85 of its time with the BLAS calls at N
// = 16 to 24 in double and 0.4 to 0.5 in float (a BLAS call's fixed cost is
// most of a small move's). The blocked crossover (kSmUpdateBlockedN): by
// blocks of columns (rank1_by_blocks_body) the update takes 0.78-0.90 of
// GEMV's and GER's time at N = 512, 0.70 at 768, 0.74-0.78 at 1024 and
// 0.44-0.80 at 2048 (one pass over the inverse instead of three, double,
// timed alone in two runs; the memory bandwidth moves between runs); up to
// N = 384, where the inverse stays in cache, the two are level timed
// alone, but sm's move in `slaterlab bench`'s walk at N = 256 ran 4-5 %
// slower blocked (moves per second, three interleaved runs), and at N <= 24
// the blocked loops are 5-30 % slower than the unblocked ones.
template <class T>
void sm_update(MatrixX<T>& ainvt, Eigen::Index k, const T* u, T scale, double den,
               VectorX<T>& x, VectorX<T>& row) {
  const Eigen::Index n = ainvt.rows();
  x.resize(n);
  row.resize(n);
  const T alpha = T(-1.0 / den);
  if (n <= kSmUpdateSmallN) {
    on_this_cpu<sm_update_body<T>>(ainvt.data(), n, k, u, scale, alpha, x.data(), row.data());
    return;
  }
  row = ainvt.col(k);
  if (n >= kSmUpdateBlockedN) {
    on_this_cpu<rank1_by_blocks_body<T>>(ainvt.data(), n, k, u, scale, alpha, x.data(),
                                         static_cast<const T*>(row.data()));
    return;
  }
  blas::gemv<T>(true, T(1), ainvt, u, T(0), x.data());
  x(k) -= T(1);
  if (scale != T(1)) x *= scale;
  blas::ger<T>(alpha, row.data(), x.data(), ainvt);
}

template void sm_update<float>(MatrixX<float>&, Eigen::Index, const float*, float, double,
                               VectorX<float>&, VectorX<float>&);
template void sm_update<double>(MatrixX<double>&, Eigen::Index, const double*, double, double,
                                VectorX<double>&, VectorX<double>&);

namespace {

void getri(int n, float* a, const int* ipiv, float* work, int lwork, int* info) {
  sgetri_(&n, a, &n, ipiv, work, &lwork, info);
}
void getri(int n, double* a, const int* ipiv, double* work, int lwork, int* info) {
  dgetri_(&n, a, &n, ipiv, work, &lwork, info);
}

}  // namespace

template <class T>
LuFactors<T> lu_factor(MatrixX<T> a) {
  if (a.rows() != a.cols()) throw ProtocolError("lu_factor: matrix is not square");
  if (!a.allFinite()) throw SingularMatrixError("matrix has a non-finite entry");
  const int n = int(a.rows());
  LuFactors<T> f{std::move(a), Eigen::VectorXi(n), {}};
  const int info = lapack_getrf<T>(n, f.lu.data(), n, f.pivots.data());
  if (info > 0) {
    throw SingularMatrixError("matrix is singular: LU pivot U(" + std::to_string(info) + "," +
                              std::to_string(info) + ") is exactly zero");
  }
  // Accumulate log|U_ii| in double even for float factors: the sum of N logs
  // would otherwise lose digits the factors themselves do not.
  double log_abs = 0.0;
  int sign = 1;
  for (int i = 0; i < n; ++i) {
    const double u = double(f.lu(i, i));
    log_abs += std::log(std::abs(u));
    if (u < 0) sign = -sign;
    if (f.pivots(i) != i + 1) sign = -sign;
  }
  f.log_det = {log_abs, sign};
  return f;
}

std::vector<int> lu_column_order(const Eigen::VectorXi& pivots) {
  std::vector<int> order(std::size_t(pivots.size()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  for (std::size_t i = 0; i < order.size(); ++i) std::swap(order[i], order[std::size_t(pivots(Eigen::Index(i)) - 1)]);
  return order;
}

template <class T>
MatrixX<T> lu_inverse(LuFactors<T> f) {
  const int n = int(f.lu.rows());
  int info = 0;
  T query{};
  getri(n, f.lu.data(), f.pivots.data(), &query, -1, &info);
  VectorX<T> work(std::max(1, int(query)));
  getri(n, f.lu.data(), f.pivots.data(), work.data(), int(work.size()), &info);
  if (info != 0) throw SingularMatrixError("getri failed: matrix is singular");
  return std::move(f.lu);
}

template <class Storage, class Compute>
Inversion<Storage> invert(const Eigen::MatrixXd& a) {
  auto factors = lu_factor<Compute>(a.cast<Compute>());
  const LogDet log_det = factors.log_det;
  return {lu_inverse<Compute>(std::move(factors)).template cast<Storage>(), log_det};
}

template <class To, class From>
MatrixX<To> transposed(const MatrixX<From>& a) {
  constexpr Index kTile = 32;  // two 8 KiB tiles in double: both stay in L1
  MatrixX<To> t(a.cols(), a.rows());
  for (Index j0 = 0; j0 < a.cols(); j0 += kTile) {
    const Index j1 = std::min(j0 + kTile, a.cols());
    for (Index i0 = 0; i0 < a.rows(); i0 += kTile) {
      const Index i1 = std::min(i0 + kTile, a.rows());
      for (Index i = i0; i < i1; ++i)
        for (Index j = j0; j < j1; ++j) t(j, i) = To(a(i, j));
    }
  }
  return t;
}

template MatrixX<float> transposed<float, float>(const MatrixX<float>&);
template MatrixX<double> transposed<double, double>(const MatrixX<double>&);
template MatrixX<double> transposed<double, float>(const MatrixX<float>&);
template LuFactors<float> lu_factor<float>(MatrixX<float>);
template LuFactors<double> lu_factor<double>(MatrixX<double>);
template MatrixX<float> lu_inverse<float>(LuFactors<float>);
template MatrixX<double> lu_inverse<double>(LuFactors<double>);
template Inversion<float> invert<float, float>(const Eigen::MatrixXd&);
template Inversion<float> invert<float, double>(const Eigen::MatrixXd&);
template Inversion<double> invert<double, double>(const Eigen::MatrixXd&);

}  // namespace slaterlab
