#pragma once
// `slaterlab bench`: throughput of the determinant-update strategies against
// this machine's limits, measured in one run with Google Benchmark.
//
// Update cases, updates/<strategy label>/N:<N>: a long walk of accepted
// column replacements (100% acceptance, the DMC-like setting of McDaniel
// et al., J. Chem. Phys. 147, 174107 (2017), Sec. III), electron k = move mod N, each new column iid N(0,1) from a
// pool of N + 1 columns used in turn (two columns of the current matrix are
// then never the same pool column: they were written fewer than N moves
// apart). The strategy is reset once, untimed; the timed part runs whole
// windows (K moves for delayed, one move otherwise, so every GEMM flush is
// inside) until --seconds of CPU time have passed. items_per_second is moves
// per second. Sizes N = 256, 1024, 2048, 4096 (--n picks some), float and
// double: sm, delayed K = 1, 2, 4, ..., 256 (incremental) and 1, 4, 16, 64,
// 256 (naive), qr-givens.
//
// Limits, measured in the same run (best of repeated timings, cached, so a
// filtered run measures what its cases need):
//   limits/gemm-<p>/N:<N>        GEMM C -= A B^T, N x N x 256 (the flush's
//                                shape at the largest K): flop/s;
//   limits/gemv-ger-<p>/N:<N>    sm's kernel, GEMV + GER on an N x N matrix:
//                                bytes/s counting 3 N^2 entries;
//   limits/stream-triad          a = b + s c over 3 x 64 MiB: memory bytes/s.
// Counters of an update case:
//   bound       moves/s the case's bound allows: delayed (both variants)
//               GEMM flop/s / (4 N^2) (the flush's flops per move; the
//               look-ahead's O(N K) is not counted, so it shows as a
//               shortfall); sm the memory bandwidth / (3 N^2 sizeof(T)) (GEMV
//               reads Ainv, GER reads and writes it). qr-givens has none.
//   of_bound    moves/s / bound.
//   vs_sm       moves/s / sm's moves/s at the same N and precision (when sm
//               ran earlier in the run).
//   breakdowns, guard_flushes  sanity: either puts extra work in the timing.
//
// References: reference/lu-double/N:<N> (a double LU, the unit of cost),
// reference/certified-log-det/N:1024 (Arb, counters certified_bits and
// cost_vs_lu) and reference/mp-reset/N:512 (the lockstep runner's mp
// reference at reset: 50-digit LU and inverse; cost_vs_lu).
//
// B-spline: bspline/vgl-<p>/N:<N> evaluates value, gradient and Laplacian of
// N harmonic-oscillator orbitals at random positions; counters bytes_per_s
// (64 Npad sizeof(T) stencil bytes per position, the kernel's traffic) and
// of_bandwidth (against limits/stream-triad).
//
// Where a CUDA device is present, GPU cases are added (otherwise stderr
// says once why not): updates/delayed-cuda-<K>-<p>/N:<N> (K = 64, 256;
// float, double, mixed) at the run's sizes from 1024 on, walked as the CPU
// cases (vs_sm against the CPU's sm), and the orbital cases of
// bench_orbitals.hpp.
//
// BLAS runs single-threaded: run_bench() calls openblas_set_num_threads(1)
// before any benchmark (OPENBLAS_NUM_THREADS set from inside the program is
// too late: OpenBLAS reads it when the library is loaded). The BLAS thread
// count is recorded in the benchmark context.

#include <iosfwd>

namespace slaterlab {

/// Registers and runs the benchmarks. argv[0] is the program name; the
/// other arguments are this bench's own options (--n=LIST, --seconds=T; see
/// bench_usage) and Google Benchmark flags (--benchmark_filter,
/// --benchmark_format, --benchmark_out, ...). Returns 0, or 2 with a message
/// on stderr when an argument is neither.
int run_bench(int argc, char** argv);

/// The bench's own options, for --help.
const char* bench_usage();

}  // namespace slaterlab
