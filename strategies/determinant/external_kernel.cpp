#include "slaterlab/strategies/determinant/external_kernel.hpp"

#include <dlfcn.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

namespace slaterlab {
namespace {

[[noreturn]] void bad_library(const std::string& path, const std::string& what) {
  throw std::invalid_argument("kernel library '" + path + "': " + what);
}

std::string sha256_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_library(path, "cannot be read");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    bad_library(path, "SHA-256 unavailable (OpenSSL)");
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
    EVP_DigestUpdate(ctx.get(), buffer, std::size_t(in.gcount()));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  std::string hex;
  char byte[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", digest[i]);
    hex += byte;
  }
  return hex;
}

KernelLibrary open_library(const std::string& given) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path path = fs::absolute(given, ec);
  if (ec || !fs::exists(path, ec)) bad_library(given, "no such file");
  if (!fs::is_regular_file(path, ec)) bad_library(given, "not a regular file");
  // Absolute, so that dlopen never searches the library path instead.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    bad_library(given, std::string("not a loadable shared object (") + (why ? why : "dlopen failed") +
                           ")");
  }
  auto entry = reinterpret_cast<slaterlab_kernel_entry>(dlsym(handle, SLATERLAB_KERNEL_ENTRY));
  if (!entry) {
    bad_library(given, "does not export '" SLATERLAB_KERNEL_ENTRY
                       "' (the entry point of slaterlab/kernel.h)");
  }
  const slaterlab_kernel_api* api = entry();
  if (!api) bad_library(given, "'" SLATERLAB_KERNEL_ENTRY "' returned no table");
  if (api->abi_version != SLATERLAB_KERNEL_ABI_VERSION) {
    bad_library(given, "built for kernel ABI version " + std::to_string(api->abi_version) +
                           ", this slaterlab reads version " +
                           std::to_string(SLATERLAB_KERNEL_ABI_VERSION));
  }
  const std::pair<const char*, bool> required[] = {
      {"create", api->create != nullptr}, {"destroy", api->destroy != nullptr},
      {"reset", api->reset != nullptr},   {"ratio", api->ratio != nullptr},
      {"accept", api->accept != nullptr}, {"reject", api->reject != nullptr},
      {"log_det", api->log_det != nullptr}};
  for (const auto& [name, set] : required)
    if (!set) bad_library(given, std::string("its table does not set '") + name + "'");
  if (!api->name || !*api->name) bad_library(given, "its table has no name");
  // The library stays loaded: kernels and their table live in it.
  return {path.string(), sha256_of(path.string()), api->name, api->version ? api->version : "",
          api};
}

Precision from_abi(int p) {
  return p == SLATERLAB_FLOAT ? Precision::single
                              : p == SLATERLAB_MIXED ? Precision::mixed : Precision::double_;
}

int to_abi(Precision p) {
  return p == Precision::single ? SLATERLAB_FLOAT
                                : p == Precision::mixed ? SLATERLAB_MIXED : SLATERLAB_DOUBLE;
}

std::vector<Precision> declared_precisions(const slaterlab_kernel_api& api) {
  if (api.precisions == 0) return {Precision::double_};
  std::vector<Precision> out;
  for (int p : {SLATERLAB_FLOAT, SLATERLAB_DOUBLE, SLATERLAB_MIXED})
    if (api.precisions & SLATERLAB_PRECISION_BIT(p)) out.push_back(from_abi(p));
  return out;
}

/// A group-name-safe form of the kernel's name for labels.
std::string label_word(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.';
    out += plain ? c : '_';
  }
  return out;
}

// ---- surviving a kernel that crashes or hangs ----------------------------------
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

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM};
struct sigaction g_previous[std::size(kFaultSignals)];
// The call in progress (slaterlab drives kernels from one thread at a time).
std::atomic<sigjmp_buf*> g_jump{nullptr};
std::atomic<std::int64_t> g_deadline_ns{0};  // steady clock; 0: no call in progress
std::atomic<pthread_t> g_caller{};

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

/// Installs the handlers (on an alternate stack, so that a kernel's stack
/// overflow is caught too) and starts the watchdog, once per process (a
/// forked child starts its own watchdog: threads do not survive fork).
void arm_guard() {
  static std::vector<char> stack(std::size_t(SIGSTKSZ) * 4);
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

const KernelLibrary& library_of(const UpdaterOptions& o) {
  if (o.library.empty()) throw std::invalid_argument("strategy 'kernel' needs 'library' (the shared library)");
  return load_kernel_library(o.library);
}

}  // namespace

double kernel_call_timeout(Eigen::Index n) {
  if (const char* given = std::getenv("SLATERLAB_KERNEL_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(given, &end);
    if (end != given && seconds > 0) return seconds;
  }
  // The heaviest call is a refactorisation, 2/3 N^3 flops (reset, a cycle);
  // 10 Mflop/s is a hundred times slower than a plain loop here, and 10 s
  // covers any start-up.
  const double n3 = double(n) * double(n) * double(n);
  return 10.0 + n3 / 1e7;
}

std::string describe_signal(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  const char* text = strsignal(signal);
  return std::string("SIG") + (abbrev ? abbrev : std::to_string(signal)) + " (" +
         (text ? text : "unknown signal") + ")";
}

const KernelLibrary& load_kernel_library(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, KernelLibrary> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;
  return loaded.emplace(path, open_library(path)).first->second;
}

ExternalKernel::ExternalKernel(UpdaterOptions options)
    : UpdaterBase(std::move(options)), library_(library_of(this->options())) {
  const auto precisions = declared_precisions(*library_.api);
  if (std::find(precisions.begin(), precisions.end(), precision()) == precisions.end()) {
    throw std::invalid_argument("kernel '" + library_.name + "' (" + library_.path +
                                ") does not support precision '" +
                                std::string(to_string(precision())) + "'");
  }
  // Options the kernel rejects are bad input of the study: found here, at
  // validation, by a probe instance.
  void* probe = create(1);
  guarded("destroy", [&] {
    library_.api->destroy(probe);
    return 0;
  });
}

ExternalKernel::~ExternalKernel() {
  if (!kernel_ || dead_) return;
  try {
    guarded("destroy", [&] {
      library_.api->destroy(kernel_);
      return 0;
    });
  } catch (const std::exception&) {
    // A kernel that crashes in destroy has nothing left to judge.
  }
}

template <class Call>
int ExternalKernel::guarded(const char* name, Call call) const {
  if (dead_) {
    throw std::runtime_error("kernel '" + library_.name + "' " + name + ": not called (it " + *dead_ +
                             ")");
  }
  arm_guard();
  sigjmp_buf jump;
  g_caller.store(pthread_self());
  g_jump.store(&jump);
  g_deadline_ns.store(now_ns() + std::int64_t(timeout_ * 1e9));
  struct Disarm {
    ~Disarm() {
      g_deadline_ns.store(0);
      g_jump.store(nullptr);
    }
  } disarm;
  if (const int sig = sigsetjmp(jump, 0)) {
    dead_ = sig == SIGALRM
                ? fmt_timeout(name)
                : "crashed in " + std::string(name) + ": " + describe_signal(sig);
    throw std::runtime_error("kernel '" + library_.name + "' " + *dead_);
  }
  message_[0] = '\0';
  return call();
}

std::string ExternalKernel::fmt_timeout(const char* name) const {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3g", timeout_);
  return "hung in " + std::string(name) + ": no return within " + seconds + " s (SIGALRM)";
}

void* ExternalKernel::create(int n) const {
  std::vector<slaterlab_option> pass;
  for (const auto& [key, value] : options().kernel_options) pass.push_back({key.c_str(), value.c_str()});
  void* kernel = nullptr;
  guarded("create", [&] {
    kernel = library_.api->create(n, to_abi(precision()), options().breakdown, int(pass.size()),
                                  pass.data(), message_);
    return 0;
  });
  message_[SLATERLAB_MESSAGE_SIZE - 1] = '\0';
  if (!kernel) {
    throw std::invalid_argument("kernel '" + library_.name + "' (" + library_.path +
                                "): create failed: " + message_);
  }
  return kernel;
}

std::string ExternalKernel::label() const {
  return "kernel-" + label_word(library_.name) + "-" + std::string(to_string(precision()));
}

void ExternalKernel::check(int status, const char* call) const {
  if (status == SLATERLAB_OK || status == SLATERLAB_BREAKDOWN) return;
  message_[SLATERLAB_MESSAGE_SIZE - 1] = '\0';
  const std::string what = "kernel '" + library_.name + "' " + call + ": " +
                           (message_[0] ? message_ : "status " + std::to_string(status));
  if (status == SLATERLAB_SINGULAR) throw SingularMatrixError(what);
  if (status == SLATERLAB_BAD_ARGUMENT) throw ProtocolError(what);
  throw std::runtime_error(what);
}

void ExternalKernel::restart() {
  check(guarded("reset", [&] { return library_.api->reset(kernel_, matrix().data(), int(size()), message_); }),
        "reset");
}

void ExternalKernel::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  timeout_ = kernel_call_timeout(size());
  if (!kernel_ || kernel_n_ != size()) {
    if (kernel_) {
      void* old = std::exchange(kernel_, nullptr);
      guarded("destroy", [&] {
        library_.api->destroy(old);
        return 0;
      });
    }
    kernel_ = create(int(size()));
    kernel_n_ = size();
  }
  restart();
}

Ratio ExternalKernel::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  double value = 0.0;
  const int status = guarded(
      "ratio", [&] { return library_.api->ratio(kernel_, int(k), new_column.data(), &value, message_); });
  check(status, "ratio");
  return classify(value, status == SLATERLAB_BREAKDOWN);
}

void ExternalKernel::accept() {
  if (commit_pending()) {  // a breakdown, or the recompute cadence: from the exact matrix
    check(guarded("reject", [&] { return library_.api->reject(kernel_, message_); }), "reject");
    restart();
    note_recompute();
    return;
  }
  check(guarded("accept", [&] { return library_.api->accept(kernel_, message_); }), "accept");
}

void ExternalKernel::reject() {
  drop_pending();
  check(guarded("reject", [&] { return library_.api->reject(kernel_, message_); }), "reject");
}

void ExternalKernel::flush() {
  if (!library_.api->flush) return;  // nothing is ever queued
  check(guarded("flush", [&] { return library_.api->flush(kernel_, message_); }), "flush");
}

LogDet ExternalKernel::log_det() const {
  double log_abs = 0.0;
  int sign = 0;
  check(guarded("log_det", [&] { return library_.api->log_det(kernel_, &log_abs, &sign, message_); }),
        "log_det");
  return {log_abs, sign > 0 ? 1 : sign < 0 ? -1 : 0};
}

MaintainedState ExternalKernel::maintained() const {
  if (!library_.api->inverse) return {};
  Eigen::MatrixXd inverse(size(), size());
  check(guarded("inverse",
                [&] { return library_.api->inverse(kernel_, inverse.data(), int(size()), message_); }),
        "inverse");
  return {std::move(inverse), std::nullopt};
}

CycleRatio ExternalKernel::apply_cycle(const std::vector<ColumnUpdate>& updates) {
  if (!library_.api->apply_cycle) return DeterminantUpdater::apply_cycle(updates);
  const Eigen::Index n = size();
  Eigen::MatrixXd columns(n, Eigen::Index(updates.size()));
  std::vector<int> electrons;
  for (std::size_t u = 0; u < updates.size(); ++u) {
    // Validates k and the column, and keeps the exact matrix in step.
    begin_proposal(updates[u].k, updates[u].column);
    commit_pending();
    columns.col(Eigen::Index(u)) = updates[u].column;
    electrons.push_back(int(updates[u].k));
  }
  double value = 0.0;
  const int status = guarded("apply_cycle", [&] {
    return library_.api->apply_cycle(kernel_, int(updates.size()), columns.data(), int(n),
                                     electrons.data(), &value, message_);
  });
  check(status, "apply_cycle");
  const Ratio r = classify(value, status == SLATERLAB_BREAKDOWN);
  if (r.breakdown) {  // as an accepted breakdown: from the exact matrix after the cycle
    restart();
    note_recompute();
  }
  return {r.value, r.breakdown, {}};
}

StrategyTraits external_kernel_traits() {
  StrategyTraits t;
  t.precisions = {Precision::single, Precision::double_, Precision::mixed};
  t.loads_library = true;
  t.declared = [](const UpdaterOptions& o) {
    StrategyTraits d = external_kernel_traits();
    const slaterlab_kernel_api& api = *library_of(o).api;
    d.precisions = declared_precisions(api);
    d.carries_updates = api.carries_updates != 0;
    if (api.default_breakdown > 0) d.default_breakdown = api.default_breakdown;
    if (api.apply_cycle) d.cycles = StrategyTraits::Cycles::whole;
    return d;
  };
  t.provenance = [](const UpdaterOptions& o) {
    const KernelLibrary& lib = library_of(o);
    return std::vector<std::pair<std::string, std::string>>{{"library", lib.path},
                                                           {"library_sha256", lib.sha256},
                                                           {"kernel_name", lib.name},
                                                           {"kernel_version", lib.version}};
  };
  return t;
}

std::unique_ptr<DeterminantUpdater> make_external_kernel(const UpdaterOptions& options) {
  return std::make_unique<ExternalKernel>(options);
}

}  // namespace slaterlab
