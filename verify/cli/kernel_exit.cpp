// The `slaterlab` command's exit(), _exit(), _Exit() and quick_exit(): an
// external kernel that calls one of them inside a call into it ends that
// call as a finding (leave_kernel_call_on_exit, external_kernel.hpp)
// instead of ending slaterlab, with no at-exit handler run; anywhere else
// they are the C library's. The executable exports them
// (verify/CMakeLists.txt), so that a kernel's calls, and those of the
// libraries it uses (a Fortran STOP in libgfortran), bind here. The C
// library's own are looked up once, before main, never after a fork.

#include <dlfcn.h>

#include <cstdlib>

#include "slaterlab/strategies/determinant/external_kernel.hpp"

namespace {

using ExitFunction = void (*)(int);

ExitFunction next_function(const char* name) {
  return reinterpret_cast<ExitFunction>(dlsym(RTLD_NEXT, name));
}

struct CLibraryExits {
  ExitFunction exit = next_function("exit");
  ExitFunction exit_now = next_function("_exit");
  ExitFunction exit_c99 = next_function("_Exit");
  ExitFunction quick_exit = next_function("quick_exit");
};

const CLibraryExits& c_library() {
  static const CLibraryExits exits;
  return exits;
}
// Looked up before main: a forked child then never calls dlsym (which locks).
[[maybe_unused]] const CLibraryExits& g_looked_up = c_library();

[[noreturn]] void end(const char* name, ExitFunction real, int status) {
  slaterlab::leave_kernel_call_on_exit(name, status);
  real(status);
  __builtin_unreachable();
}

}  // namespace

extern "C" {
void exit(int status) noexcept { end("exit", c_library().exit, status); }
void _exit(int status) noexcept { end("_exit", c_library().exit_now, status); }
void _Exit(int status) noexcept { end("_Exit", c_library().exit_c99, status); }
void quick_exit(int status) noexcept { end("quick_exit", c_library().quick_exit, status); }
}
