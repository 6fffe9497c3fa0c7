#pragma once
// `slaterlab bench`: throughput of the determinant-update strategies against
// this machine's limits, measured in one run with Google Benchmark.
//
// Cases: updates/<strategy label>/N:<N> (an external kernel's with its
// --kernel-option values: updates/<label>/<key>:<value>/N:<N>; a long walk of accepted column
// replacements, float and double, N = 256 to 4096; items_per_second is moves
// per second), limits/* (GEMM, GEMV + GER, stream triad, measured in the same
// run), reference/*, bspline/*, the electron gas's B-spline orbitals
// (orbitals/gas-bspline-*), and GPU cases where a CUDA device is present. Counters: bound, of_bound, vs_sm, vs_probe, N, K, breakdowns, window.
// BLAS runs single-threaded. docs/benchmarks.md describes the cases and
// counters; bench.cpp how each is measured.

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
