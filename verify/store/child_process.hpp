#pragma once
// Runs a piece of work in a forked child process, so that code that may
// crash or hang (an external kernel under test, libhdf5 on a damaged file)
// cannot take the caller down with it.
//
// Contract of run_in_child(work, timeout):
// - The child runs work(), sends its result (any bytes) back through a pipe
//   and ends with _exit(0) (the parent flushes its streams before forking).
// - The parent waits at most `timeout_seconds`; past it the child is killed
//   (SIGKILL) and the outcome says timed_out.
// - A crash ends the child by its signal, reported in `signal` (the child
//   restores the default action of the crash signals, so inherited fuzzer
//   or sanitizer handlers do not run there). With quiet, the child's stderr
//   goes to /dev/null. An exception escaping work(), or a failure to fork or
//   to make the pipe, is reported in `error`.
// - Exactly one of: completed (result holds what work() returned),
//   signal != 0, timed_out, !error.empty().

#include <functional>
#include <string>

namespace slaterlab {

struct ChildOutcome {
  bool completed = false;
  std::string result;  // work()'s return value when completed
  int signal = 0;      // the signal that killed the child
  bool timed_out = false;
  std::string error;   // an exception in the child, or why no child ran
};

ChildOutcome run_in_child(const std::function<std::string()>& work, double timeout_seconds,
                          bool quiet = false);

}  // namespace slaterlab
