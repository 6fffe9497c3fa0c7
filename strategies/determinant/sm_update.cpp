// sm_update (linalg.hpp): the Sherman-Morrison update of the transposed
// inverse, by plain loops at small N, by GEMV and GER in between, and by
// blocks of columns from kSmUpdateBlockedN on.
#include "slaterlab/strategies/determinant/linalg.hpp"

#include "slaterlab/strategies/determinant/cpu_dispatch.hpp"
#include "slaterlab/strategies/determinant/linalg_loops.hpp"

namespace slaterlab {

using namespace linalg_detail;

// The small-N crossover (kSmUpdateSmallN): below it a BLAS call's fixed
// cost is most of a small move's. The blocked crossover (kSmUpdateBlockedN):
// by blocks of columns (rank1_by_blocks_body) the update reads the inverse
// once instead of three times, which pays once the inverse no longer stays
// in cache. Both timed in sm's walk and alone: docs/benchmarks.md, "Kernel
// choices by size".
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

}  // namespace slaterlab
