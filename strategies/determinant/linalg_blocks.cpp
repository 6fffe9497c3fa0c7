// linalg.hpp's blocks:: dispatch: each operation to the plain loops
// (linalg_loops.hpp) or to BLAS/LAPACK (blas_calls.hpp) by Kernels and size.
#include "slaterlab/strategies/determinant/linalg.hpp"

#include "slaterlab/strategies/determinant/blas_calls.hpp"
#include "slaterlab/strategies/determinant/cpu_dispatch.hpp"
#include "slaterlab/strategies/determinant/linalg_loops.hpp"

namespace slaterlab {

using namespace linalg_detail;

// The crossovers (blocks::kLoopLevel2, kLoopTrmm, kLoopFactor) are where a
// BLAS call's fixed cost stops outweighing its faster inner loops, each
// operation timed alone at the shapes of delayed's window and flush; GEMM
// has none, OpenBLAS's small-matrix kernels being faster at every shape.
// The timings: docs/benchmarks.md, "Kernel choices by size".
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

}  // namespace slaterlab
