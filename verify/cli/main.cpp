// slaterlab: the command line (command_line.hpp), with the process-wide
// settings that only a program's main may make.

#include <malloc.h>

#include "verify/cli/command_line.hpp"
#include "verify/run/mpi_run.hpp"

extern "C" void openblas_set_num_threads(int);

int main(int argc, char** argv) {
  // One BLAS thread: results are reproducible and timings are per core.
  openblas_set_num_threads(1);
  // Checkpoints and references allocate N x N temporaries (8 MiB at
  // N = 1024) again and again. glibc returns them to the kernel when freed
  // (mmap above its threshold, heap trimming below), so each one is
  // page-faulted and zeroed anew: 12 % of a study's time at N = 1024, and
  // 88 s of system time in experiments/large-n.toml. Kept in the heap
  // (no mmap, no trimming) they are reused; the peak memory is the same.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const slaterlab::MpiSession mpi(argc, argv);
  return slaterlab::run_command_line(argc, argv, &mpi);
}
