#pragma once
// Reading an untrusted HDF5 file in a child process.
//
// libhdf5 1.10 trusts sizes stored inside a file: a damaged byte (the stored
// length of a variable-length string, a B-tree node) can overflow a buffer
// inside the library or loop forever, and no check made through its public
// API can see it first. check_isolated() runs a check (normally the very
// reader about to be used) in a forked child: a crash or a hang then ends the
// child, and the caller reports the file as damaged instead of dying.
//
// Contract:
// - check runs in the child only; its side effects stay there. The child
//   exits with _exit, so no destructor or at-exit handler of the parent runs.
// - Returns when check returned normally.
// - Throws IsolatedFailure when check threw (what() is the exception's
//   message, passed through a pipe), when the child was killed by a signal
//   ("the reader crashed (SIGSEGV)") or ran past `limit` (then killed).
// - A child that cannot be started (no fork, no pipe) is IsolatedFailure
//   (not crashed) naming why. The child is run_in_child's (child_process.hpp).
// Call from one thread at a time; the child inherits only this thread.

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>

namespace slaterlab {

class IsolatedFailure : public std::runtime_error {
 public:
  /// crashed: killed by a signal or a timeout (not a message from check).
  IsolatedFailure(const std::string& what, bool crashed)
      : std::runtime_error(what), crashed_(crashed) {}
  bool crashed() const noexcept { return crashed_; }

 private:
  bool crashed_;
};

void check_isolated(const std::function<void()>& check, std::chrono::seconds limit);

/// check_isolated for a reader of the file at path, with a time limit of a
/// minute plus a second per 50 MB of it (far slower than any disk this runs
/// on). A crash or a hang is rethrown as IsolatedFailure whose what() reads
/// "the file is damaged: the reader crashed (SIGSEGV) inside the HDF5
/// library", for the caller to prefix with the file.
void check_file_isolated(const std::filesystem::path& path, const std::function<void()>& read);

/// Whether check_file_isolated forks (on by default). The fuzz targets of
/// the readers (tests/fuzz/) turn it off for structure-aware inputs, so that
/// the sanitizers see the readers' own bugs in-process, and on for
/// byte-level damage, which only this defence can meet. limit, when given,
/// replaces the size-based time limit (small files read in milliseconds).
void set_file_isolation(bool on, std::optional<std::chrono::seconds> limit = std::nullopt) noexcept;

}  // namespace slaterlab
