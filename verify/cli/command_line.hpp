#pragma once
// The `slaterlab` command line as a function: what main() runs, so that a
// program of one's own can register its strategies, workloads and orbital
// sets first and then take the same commands (docs/extending.md;
// tests/extending/extending_test.cpp does). Exit codes: 0 ok, 1 a check
// failed (or a regression), 2 bad input or an I/O error (one line
// `slaterlab: error: ...` on stderr), 70 an internal error, 130
// interrupted (README "Exit codes").

namespace slaterlab {

class MpiSession;

/// Parses argv (argv[0] the program's name) and runs its command: run,
/// table, regress, fuzz or bench. Never throws: every failure ends as one
/// line on stderr and its exit code (under MPI, a rank that fails alone
/// aborts the job). `mpi` is the process's MPI session (main's), or nullptr.
/// One call at a time: it installs SIGINT handlers for run and regress.
int run_command_line(int argc, char** argv, const MpiSession* mpi = nullptr);

}  // namespace slaterlab
