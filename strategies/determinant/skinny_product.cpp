// blocks::skinny_transposed_product (linalg.hpp): C = P^T A for a skinny P,
// an AVX-512 register-tiled kernel, and where it beats BLAS's GEMM.
#include "slaterlab/strategies/determinant/linalg.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "slaterlab/strategies/determinant/cpu_dispatch.hpp"

namespace slaterlab {

using namespace linalg_detail;

namespace {

using Index = Eigen::Index;

// The flush's first product, C = P^T A with P skinny (blocks::
// skinny_transposed_product). OpenBLAS packs all of A (N x N) into its
// buffers for this shape, far below its GEMM's rate at wide products. Here
// P^T is packed once, m rounded up to whole 64-byte vectors, and a tile of C
// of JB columns by IB vectors stays in registers while A's JB columns stream
// through once: JB broadcasts and IB loads feed JB * IB multiply-adds per
// row of A. With AVX-512's 32 registers the tiles are 12 x 2 and 6 x 4
// (24 accumulators). The rates of both: docs/benchmarks.md, "Kernel
// choices by size".

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

namespace blocks {

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
  // Where the kernel beat OpenBLAS's GEMM for the same C, timed alone
  // (docs/benchmarks.md, "Kernel choices by size"): below m = 8 a vector
  // of rows is mostly padding, at small n the packing does not pay, and at
  // large m P^T no longer stays in L2 beside A's columns. Without AVX-512
  // the tiles spill: BLAS.
  if (!has_avx512f() || m < 8) return false;
  if constexpr (sizeof(T) == sizeof(double)) return n >= 128 && m <= 64;
  return n >= 256 && m <= (n >= 1024 ? 64 : 32);
}
template bool skinny_product_beats_blas<float>(Index, Index);
template bool skinny_product_beats_blas<double>(Index, Index);


}  // namespace blocks

}  // namespace slaterlab
