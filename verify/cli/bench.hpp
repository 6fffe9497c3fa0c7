#pragma once
// `slaterlab bench`: throughput of the determinant-update strategies with
// Google Benchmark, in column updates per second (items_per_second), the
// measure of the delayed-update paper (seed 004, Sec. III).
//
// One benchmark iteration is a full sweep: every electron k = 0..N-1 in turn
// proposes a new column (ratio) and is accepted (100% acceptance, as the
// paper's DMC-like setting), then flush() applies what is still queued, so
// the delayed look-ahead and every GEMM flush are inside the timing. Each
// iteration starts from the same matrix (reset() runs with the timer paused,
// so drift never accumulates over iterations and the O(N^3) factorisation is
// not counted). Data: iid N(0,1) matrix and columns, fixed seeds.
//
// Cases: sm, delayed (incremental) and delayed (naive) at N = 256 and 1024,
// K = 1, 16, 64, 256, in double and float; names are
//   updates/<strategy label>/N:<N>
// e.g. updates/delayed-64-double/N:1024, updates/sm-float/N:256.
//
// Where a CUDA device is present, GPU cases are added (otherwise stderr
// says once why not): delayed-cuda (K = 64, 256; float, double, mixed)
// against sm and delayed-64 on the CPU at N = 1024, 2048, 4096, 1024 moves
// per iteration, and the orbital cases of bench_orbitals.hpp.
//
// BLAS runs single-threaded: run_bench() calls openblas_set_num_threads(1)
// before any benchmark (setting OPENBLAS_NUM_THREADS from inside the program
// is too late: OpenBLAS reads it when the library is loaded). The BLAS
// thread count is recorded in the benchmark context.

namespace slaterlab {

/// Registers and runs the update benchmarks. argv[0] is the program name,
/// the other arguments are Google Benchmark flags (--benchmark_filter,
/// --benchmark_repetitions, --benchmark_format, ...). Returns 0, or 2 when
/// an argument is not a Google Benchmark flag.
int run_bench(int argc, char** argv);

}  // namespace slaterlab
