#pragma once
// The limits of slaterlab bench (bench.cpp's file comment): GEMM flop/s,
// GEMV + GER bytes/s, the memory bandwidth (stream triad) and the textbook
// Sherman-Morrison loop's moves/s, each the best of repeated timings for
// bench_options().seconds, measured once per (N, T) and cached; and their
// limits/ cases. T is float or double. Internal to verify/cli.

#include <Eigen/Core>

namespace slaterlab::bench_detail {

/// GEMM flop/s, C(N x N) -= A(N x 256) B(N x 256)^T, cached per (N, T).
template <class T>
double gemm_rate(Eigen::Index n);

/// Memory bandwidth in bytes/s: a = b + s c over three 64 MiB double arrays
/// (far beyond any cache), 24 bytes per element (write-allocate not counted).
double triad_rate();

/// The textbook Sherman-Morrison loop's moves/s on the update cases' walk.
template <class T>
double sm_loop_rate(Eigen::Index n);

/// Registers limits/sm-loop, limits/gemm and limits/gemv-ger at size n.
template <class T>
void register_limits(Eigen::Index n);

}  // namespace slaterlab::bench_detail
