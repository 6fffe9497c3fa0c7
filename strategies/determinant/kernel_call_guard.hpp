#pragma once
// What keeps one call into an external kernel from taking slaterlab with it
// (the adapter, external_kernel.cpp, wraps every call in it).
//
// - A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS)
//   inside the call, or a call still running at its deadline (a watchdog thread sends SIGALRM),
//   jumps back to the sigsetjmp the caller made before the call, with the
//   signal as its value.
// - exit(), _exit(), _Exit() or quick_exit() inside the call jumps back with
//   kKernelExitJump, where the program routes those functions through
//   leave_kernel_call_on_exit (the `slaterlab` command does:
//   verify/cli/kernel_exit.cpp); no at-exit handler has run by then.
// - The floating-point environment (SSE MXCSR and x87 control word on x86,
//   the rounding mode elsewhere) is read before the call and compared
//   after it: FpEnv.
// One kernel call at a time per process (slaterlab drives kernels from one
// thread); a forked child arms its own watchdog at its first call.

#include <setjmp.h>

#include <cstdint>
#include <string>

namespace slaterlab {

/// The siglongjmp value of an exit inside a kernel call (no signal has it).
constexpr int kKernelExitJump = 1 << 16;

/// Installs the signal handlers and starts the watchdog (once per process).
void arm_kernel_guard();

/// The call in progress, from construction to destruction: where a crash,
/// a time-out or an exit jumps to, and the call's deadline.
class KernelCallScope {
 public:
  KernelCallScope(sigjmp_buf& jump, double timeout_seconds);
  ~KernelCallScope();
  KernelCallScope(const KernelCallScope&) = delete;
  KernelCallScope& operator=(const KernelCallScope&) = delete;
};

/// The status the kernel passed to exit() at the last kKernelExitJump, and
/// the function it called ("exit", "_exit", ...).
int kernel_exit_status();
const char* kernel_exit_function();

/// The part of the floating-point environment a kernel must leave as it
/// found it: the control bits (rounding, flush-to-zero, denormals-are-zero,
/// exception masks, x87 precision), not the sticky exception flags, which
/// any arithmetic raises.
struct FpEnv {
  std::uint32_t sse = 0;  // MXCSR & kMxcsrControl (x86), else the fegetround() mode
  std::uint16_t x87 = 0;  // x87 control word (x86 only)
  bool operator==(const FpEnv&) const = default;
};
FpEnv current_fp_env();
/// Puts the control bits back, leaving the exception flags as they are.
void restore_fp_env(const FpEnv& env);
/// "MXCSR 0x1f80 -> 0x9fc0: flush-to-zero, denormals-are-zero".
std::string describe_fp_change(const FpEnv& was, const FpEnv& now);

}  // namespace slaterlab
