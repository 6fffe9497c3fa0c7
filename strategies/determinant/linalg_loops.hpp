#pragma once
// The plain loops behind linalg.hpp's Kernels::loops and sm_update's small
// and blocked paths, on raw column-major storage: dot products, axpys, GEMV,
// GER, LAPACK's getf2 and trti2, BLAS's trmm, and the fused Sherman-Morrison
// update. Each body is always_inline, for on_this_cpu (cpu_dispatch.hpp) to
// compile it for AVX2 with FMA and for the baseline. Each sums in a fixed
// order, so that one CPU gives the same bits at every call. Internal to
// strategies/determinant (linalg_blocks.cpp, sm_update.cpp).

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace slaterlab::linalg_detail {

using Index = Eigen::Index;

// The plain loops' bodies (Kernels::loops of blocks::, linalg_blocks.cpp). Each is
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

}  // namespace slaterlab::linalg_detail
