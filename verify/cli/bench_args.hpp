#pragma once
// slaterlab bench's own options (bench.hpp's usage): the sizes, the CPU
// seconds per case, the external kernels with their --kernel-option values,
// and the output formats Google Benchmark is asked for. take_bench_options
// takes ours out of argv (the library's stay), and refuses, with a message,
// a bad value, a kernel that does not load, or one that refuses an option
// combination at a precision it declares. Internal to verify/cli.

#include <Eigen/Core>

#include <string>
#include <utility>
#include <vector>

namespace slaterlab::bench_detail {

struct BenchOptions {
  std::vector<Eigen::Index> sizes{16, 21, 32, 64, 128, 256, 1024, 2048, 4096};
  double seconds = 0.3;  // CPU time per measured case
  // External kernel libraries (--kernel), each with the values of the
  // --kernel-option=KEY=V1,V2,... given after it, key by key.
  struct Kernel {
    std::string library;
    std::vector<std::pair<std::string, std::vector<std::string>>> options;
  };
  std::vector<Kernel> kernels;
  // Google Benchmark's --benchmark_format / --benchmark_out_format, peeked
  // at (they stay in argv for the library) so that csv gets our reporter.
  std::string display_format = "console";
  std::string file_format = "json";
  bool file_out = false;  // --benchmark_out given
};

/// The options of this process's run (one bench per process).
BenchOptions& bench_options();

/// Every combination of a kernel's --kernel-option values, one value per
/// key, in the order given (a single empty set without the option).
std::vector<std::vector<std::pair<std::string, std::string>>> kernel_option_sets(
    const BenchOptions::Kernel& kernel);

/// Takes --n=LIST, --seconds=T, --kernel=PATH and --kernel-option=KEY=LIST
/// (also as two arguments) out of argv; false with a message for a bad value.
bool take_bench_options(int& argc, char** argv, BenchOptions& options, std::string& error);

}  // namespace slaterlab::bench_detail
