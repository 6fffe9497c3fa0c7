#include "verify/store/isolated.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

namespace slaterlab {

namespace {

[[noreturn]] void system_failure(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

// Present only in a sanitizer build (a weak reference is null otherwise).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

[[noreturn]] void child(int out, const std::function<void()>& check) noexcept {
  // A crash must end the child with its signal, for the parent to report:
  // handlers inherited from the parent (a fuzzer's, a sanitizer's) must not
  // run here, nor write their crash reports and artifacts.
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE}) ::signal(sig, SIG_DFL);
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
  // What the child would print (a sanitizer's report of libhdf5's damage)
  // is not the user's: its answer goes through the pipe.
  if (const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) ::dup2(null, 2);
  std::string message;
  try {
    check();
    _exit(0);
  } catch (const std::exception& error) {
    message = error.what();
  } catch (...) {
    message = "unknown error";
  }
  for (std::size_t done = 0; done < message.size();) {
    const ssize_t n = ::write(out, message.data() + done, message.size() - done);
    if (n <= 0) break;
    done += std::size_t(n);
  }
  _exit(3);
}

}  // namespace

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
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) system_failure("pipe");
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    errno = error;
    system_failure("fork");
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], check);
  }
  ::close(fds[1]);
  // Read the child's message until it closes the pipe (exits) or time runs out.
  std::string message;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // timeout re-checked above
    char buffer[4096];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child exited (or closed the pipe dying)
    message.append(buffer, std::size_t(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) system_failure("waitpid");
  if (timed_out)
    throw IsolatedFailure(
        fmt::format("the reader did not finish within {} s and was stopped", limit.count()), true);
  if (WIFSIGNALED(status))
    throw IsolatedFailure(
        fmt::format("the reader crashed ({})", sigabbrev_np(WTERMSIG(status)) != nullptr
                                                   ? std::string("SIG") + sigabbrev_np(WTERMSIG(status))
                                                   : "signal " + std::to_string(WTERMSIG(status))),
        true);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  throw IsolatedFailure(message.empty() ? "the reader failed" : message, false);
}

}  // namespace slaterlab
