// The check of a fuzz run's arguments before any work (contract in
// fuzz_args.hpp).

#include "verify/properties/fuzz_args.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "verify/run/plan.hpp"

namespace slaterlab {

namespace fs = std::filesystem;

namespace {

void check_corpus_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    throw std::invalid_argument("corpus directory '" + dir +
                                "' does not exist (create it, or pass --corpus DIR)");
  }
  if (!fs::is_directory(dir, ec)) {
    throw std::invalid_argument("corpus directory '" + dir + "' is not a directory");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw std::invalid_argument("corpus directory '" + dir + "' is not writable");
  }
}

}  // namespace

void validate_fuzz_args(const FuzzArgs& args) {
  if (args.cases && args.seconds) {
    throw std::invalid_argument("--cases and --seconds exclude each other (give one)");
  }
  if (args.cases && *args.cases < 1) {
    throw std::invalid_argument(fmt::format("--cases must be >= 1, got {}", *args.cases));
  }
  if (args.seconds && !(*args.seconds > 0)) {
    throw std::invalid_argument(fmt::format("--seconds must be > 0, got {}", *args.seconds));
  }
  // Deadlines are steady-clock time points (64-bit nanoseconds, 292 years):
  // a longer time would overflow them.
  constexpr double kMaxSeconds = 1e9;
  if (args.seconds && !(*args.seconds <= kMaxSeconds)) {
    throw std::invalid_argument(
        fmt::format("--seconds must be at most {:g}, got {}", kMaxSeconds, *args.seconds));
  }
  if (!(args.shrink_seconds >= 0 && args.shrink_seconds <= kMaxSeconds)) {
    throw std::invalid_argument(fmt::format("--shrink-seconds must lie in [0, {:g}], got {}",
                                            kMaxSeconds, args.shrink_seconds));
  }
  if (args.max_n < 1) {
    throw std::invalid_argument(fmt::format("--max-n must be >= 1, got {}", args.max_n));
  }
  const double available = available_memory_bytes();
  const double largest = std::floor(std::sqrt(available / kFuzzBytesPerEntry));
  if (double(args.max_n) > largest) {
    throw std::invalid_argument(fmt::format(
        "--max-n {} is too large for the memory available: a case of size N needs about {} N^2 "
        "bytes, and {} is available, enough for N <= {:.0f}",
        args.max_n, kFuzzBytesPerEntry, format_bytes(available), largest));
  }
  check_corpus_dir(args.corpus);
}

}  // namespace slaterlab
