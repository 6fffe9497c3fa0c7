// sm_update (linalg.hpp): the Sherman-Morrison update of the transposed
// inverse, by plain loops at small N, by GEMV and GER in between, and by
// blocks of columns from kSmUpdateBlockedN on.
#include "slaterlab/strategies/determinant/linalg.hpp"

#include "slaterlab/strategies/determinant/cpu_dispatch.hpp"
#include "slaterlab/strategies/determinant/linalg_loops.hpp"

namespace slaterlab {

using namespace linalg_detail;

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

}  // namespace slaterlab
