#include "verify/store/isolated.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <string>

#include "verify/store/child_process.hpp"

namespace slaterlab {

namespace {

std::atomic<bool> g_isolation{true};
std::atomic<long long> g_fixed_limit{0};  // seconds; 0: by size

}  // namespace

void set_file_isolation(bool on, std::optional<std::chrono::seconds> limit) noexcept {
  g_isolation.store(on);
  g_fixed_limit.store(limit ? limit->count() : 0);
}

void check_file_isolated(const std::filesystem::path& path, const std::function<void()>& read) {
  if (!g_isolation.load()) return;
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(path, error);
  const long long fixed = g_fixed_limit.load();
  try {
    check_isolated(read, std::chrono::seconds(fixed > 0 ? fixed
                                                        : 60 + (error ? 0 : bytes) / 50'000'000));
  } catch (const IsolatedFailure& failure) {
    if (!failure.crashed()) throw;
    throw IsolatedFailure(
        fmt::format("the file is damaged: {} inside the HDF5 library", failure.what()), true);
  }
}

void check_isolated(const std::function<void()>& check, std::chrono::seconds limit) {
  const ChildOutcome outcome = run_in_child(
      [&] {
        check();
        return std::string();
      },
      double(limit.count()), /*quiet=*/true);
  if (outcome.completed) return;
  if (outcome.timed_out)
    throw IsolatedFailure(
        fmt::format("the reader did not finish within {} s and was stopped", limit.count()), true);
  if (outcome.signal != 0) {
    const char* name = sigabbrev_np(outcome.signal);
    throw IsolatedFailure(fmt::format("the reader crashed ({})",
                                      name != nullptr ? std::string("SIG") + name
                                                      : "signal " + std::to_string(outcome.signal)),
                          true);
  }
  throw IsolatedFailure(outcome.error.empty() ? "the reader failed" : outcome.error, false);
}

}  // namespace slaterlab
