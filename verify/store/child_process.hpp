#pragma once
// Runs a piece of work in a forked child process, so that code that may
// crash or hang (an external kernel under test, libhdf5 on a damaged file)
// cannot take the caller down with it.
//
// Contract of run_in_child(work, timeout):
// - The child runs work() and sends its result (any bytes) back through a
//   pipe, then ends with _exit(0) (no destructors, no atexit handlers, no
//   buffered output flushed twice: the parent flushes its streams before
//   forking).
// - The parent waits at most `timeout_seconds` for the child to finish;
//   past it the child is killed with SIGKILL and the outcome says
//   timed_out.
// - A crash ends the child by its signal, reported in `signal`: the child
//   restores the default action of the crash signals, so that handlers
//   inherited from the parent (a fuzzer's, a sanitizer's) do not run there
//   and write reports of their own. With quiet, the child's stderr goes to
//   /dev/null (a sanitizer's report of damage inside a library is not the
//   user's: the outcome says what happened). An
//   exception escaping work() in the child is reported as its what() in
//   `error`, as is a failure to fork or to make the pipe.
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
