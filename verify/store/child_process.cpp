#include "verify/store/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <exception>
#include <iostream>

namespace slaterlab {
namespace {

/// Writes all of `data`; false if the pipe broke.
bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += std::size_t(n);
  }
  return true;
}

// Present only in a sanitizer build (a weak reference is null otherwise).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

[[noreturn]] void child(int fd, const std::function<std::string()>& work, bool quiet) {
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE}) ::signal(sig, SIG_DFL);
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
  if (quiet) {
    if (const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC); null >= 0) ::dup2(null, 2);
  }
  std::string message;
  char tag = 'R';
  try {
    message = work();
  } catch (const std::exception& e) {
    tag = 'E';
    message = e.what();
  } catch (...) {
    tag = 'E';
    message = "unknown exception";
  }
  write_all(fd, std::string(1, tag) + message);
  ::close(fd);
  ::_exit(0);
}

}  // namespace

ChildOutcome run_in_child(const std::function<std::string()>& work, double timeout_seconds,
                          bool quiet) {
  ChildOutcome out;
  int fds[2];
  if (::pipe(fds) != 0) {
    out.error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return out;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.error = std::string("cannot fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], work, quiet);
  }
  ::close(fds[1]);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  std::string data;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      out.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min<long long>(left, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its end: done or dead
    data.append(buffer, std::size_t(n));
  }
  ::close(fds[0]);
  if (out.timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (out.timed_out) return out;
  if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  } else if (data.empty()) {
    out.error = "the child ended without a result (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
  } else if (data[0] == 'E') {
    out.error = data.substr(1);
  } else {
    out.completed = true;
    out.result = data.substr(1);
  }
  return out;
}

}  // namespace slaterlab
