#include "slaterlab/strategies/determinant/kernel_call_guard.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cfenv>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "slaterlab/strategies/determinant/external_kernel.hpp"

namespace slaterlab {
namespace {

// ---- surviving a kernel that crashes, hangs or exits ------------------------------
//
// Each call into a kernel runs with handlers for the signals of a crash
// installed and under a watchdog: either jumps back out of the kernel,
// which is then dead (never called again, never destroyed: its memory may
// be corrupt). A best effort for run, regress and bench, which run in one
// process (the fuzzer isolates each case in a child process as well).
//
// The cost per call is two atomic stores and a sigsetjmp without a signal
// mask (no system call), so that the time per move bench reports is the
// kernel's: the handlers are installed once, and a watchdog thread (not a
// timer per call) sends SIGALRM to the calling thread once the deadline of
// the call in progress has passed. Outside a kernel call the handlers put
// back the disposition they replaced and raise the signal again.

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGALRM};
struct sigaction g_previous[std::size(kFaultSignals)];
// The call in progress (slaterlab drives kernels from one thread at a time).
std::atomic<sigjmp_buf*> g_jump{nullptr};
std::atomic<std::int64_t> g_deadline_ns{0};  // steady clock; 0: no call in progress
std::atomic<pthread_t> g_caller{};
std::atomic<int> g_exit_status{0};
std::atomic<const char*> g_exit_function{"exit"};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

extern "C" void on_kernel_fault(int sig) {
  if (sigjmp_buf* jump = g_jump.load()) siglongjmp(*jump, sig);
  // The watchdog's alarm for a call that returned just in time.
  if (sig == SIGALRM) return;
  for (std::size_t i = 0; i < std::size(kFaultSignals); ++i)
    if (kFaultSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  raise(sig);
}

#if defined(__x86_64__) || defined(__i386__)
// MXCSR bits 6 (DAZ), 7-12 (exception masks), 13-14 (rounding), 15 (FTZ);
// bits 0-5 are the sticky exception flags.
constexpr std::uint32_t kMxcsrControl = 0xffc0;
constexpr std::uint32_t kMxcsrDaz = 1u << 6, kMxcsrFtz = 1u << 15;
#endif

}  // namespace

void arm_kernel_guard() {
  static std::vector<char> stack(std::size_t(SIGSTKSZ) * 4);
  // On an alternate stack, so that a kernel's stack overflow is caught too.
  static const bool installed = [] {
    stack_t ss{};
    ss.ss_sp = stack.data();
    ss.ss_size = stack.size();
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_handler = on_kernel_fault;
    sa.sa_flags = SA_ONSTACK | SA_NODEFER;  // no mask to restore after the jump
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < std::size(kFaultSignals); ++i)
      sigaction(kFaultSignals[i], &sa, &g_previous[i]);
    return true;
  }();
  (void)installed;
  // One watchdog thread per process. A forked child has none (fork copies
  // only the calling thread), so the flag is cleared in the child. A
  // getpid() per call to tell instead cost a system call on every ratio and
  // accept: 180-200 ns a move here, 40 % of the C example's move at N = 16
  // (426 against 242 ns in `slaterlab bench`), 5 % of the bordered kernel's
  // at N = 256.
  static std::atomic<bool> watching{false};
  static const bool at_fork = [] {
    pthread_atfork(nullptr, nullptr, [] { watching.store(false); });
    return true;
  }();
  (void)at_fork;
  if (watching.load(std::memory_order_relaxed)) return;
  if (bool expected = false; !watching.compare_exchange_strong(expected, true)) return;
  try {
    std::thread([] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::int64_t deadline = g_deadline_ns.load();
        if (deadline != 0 && now_ns() > deadline &&
            g_deadline_ns.compare_exchange_strong(deadline, 0))
          pthread_kill(g_caller.load(), SIGALRM);
      }
    }).detach();
  } catch (...) {
    watching.store(false);  // no watchdog: the next call tries again
    throw;
  }
}

KernelCallScope::KernelCallScope(sigjmp_buf& jump, double timeout_seconds) {
  g_caller.store(pthread_self());
  g_jump.store(&jump);
  g_deadline_ns.store(now_ns() + std::int64_t(timeout_seconds * 1e9));
}

KernelCallScope::~KernelCallScope() {
  g_deadline_ns.store(0);
  g_jump.store(nullptr);
}

int kernel_exit_status() { return g_exit_status.load(); }
const char* kernel_exit_function() { return g_exit_function.load(); }

void leave_kernel_call_on_exit(const char* function, int status) {
  sigjmp_buf* jump = g_jump.load();
  if (!jump || !pthread_equal(g_caller.load(), pthread_self())) return;
  g_exit_status.store(status);
  g_exit_function.store(function);
  siglongjmp(*jump, kKernelExitJump);
}

FpEnv current_fp_env() {
  FpEnv env;
#if defined(__x86_64__) || defined(__i386__)
  env.sse = _mm_getcsr() & kMxcsrControl;
  __asm__ volatile("fnstcw %0" : "=m"(env.x87));
#else
  env.sse = std::uint32_t(std::fegetround());
#endif
  return env;
}

void restore_fp_env(const FpEnv& env) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr((_mm_getcsr() & ~kMxcsrControl) | env.sse);
  std::uint16_t x87 = env.x87;
  __asm__ volatile("fldcw %0" : : "m"(x87));
#else
  std::fesetround(int(env.sse));
#endif
}

std::string describe_fp_change(const FpEnv& was, const FpEnv& now) {
  char text[96];
  std::string out;
#if defined(__x86_64__) || defined(__i386__)
  if (was.sse != now.sse) {
    std::snprintf(text, sizeof text, "MXCSR 0x%04x -> 0x%04x", unsigned(was.sse), unsigned(now.sse));
    out = text;
    const std::uint32_t set = now.sse & ~was.sse;
    if (set & kMxcsrFtz) out += ", flush-to-zero";
    if (set & kMxcsrDaz) out += ", denormals-are-zero";
    if ((was.sse ^ now.sse) & (3u << 13)) out += ", rounding mode";
    if ((was.sse ^ now.sse) & (0x3fu << 7)) out += ", exception masks";
  }
  if (was.x87 != now.x87) {
    std::snprintf(text, sizeof text, "%sx87 control word 0x%04x -> 0x%04x", out.empty() ? "" : "; ",
                  unsigned(was.x87), unsigned(now.x87));
    out += text;
  }
#else
  std::snprintf(text, sizeof text, "rounding mode %u -> %u", unsigned(was.sse), unsigned(now.sse));
  out = text;
#endif
  return out;
}

}  // namespace slaterlab
