// Loading and validating a kernel library (external_kernel.hpp's
// load_kernel_library), and the text helpers the adapter shares with it.
#include <dlfcn.h>
#include <openssl/evp.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

#include "slaterlab/strategies/determinant/external_kernel.hpp"
#include "slaterlab/strategies/determinant/kernel_call_guard.hpp"

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

/// Runs the library's own code at loading (its constructors inside dlopen,
/// its entry point) under the call guard: a crash, a hang or an exit there
/// is bad input naming the library, not the end of slaterlab.
template <class Step>
auto while_loading(const std::string& given, const char* step, Step run_step) {
  arm_kernel_guard();
  sigjmp_buf jump;
  const KernelCallScope scope(jump, kernel_call_timeout(1));
  if (const int sig = sigsetjmp(jump, 0)) {
    if (sig == kKernelExitJump) {
      bad_library(given, "called " + std::string(kernel_exit_function()) + "(" +
                             std::to_string(kernel_exit_status()) + ") in " + step);
    }
    bad_library(given, (sig == SIGALRM ? std::string("hung in ") : std::string("crashed in ")) +
                           step + (sig == SIGALRM ? "" : ": " + describe_signal(sig)));
  }
  return run_step();
}

KernelLibrary open_library(const std::string& given) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path path = fs::absolute(given, ec);
  if (ec || !fs::exists(path, ec)) bad_library(given, "no such file");
  if (!fs::is_regular_file(path, ec)) bad_library(given, "not a regular file");
  // Loading runs the library's constructors: one linked with -ffast-math
  // (gcc's crtfastmath.o) sets flush-to-zero and denormals-are-zero for the
  // whole process, which would change slaterlab's own arithmetic.
  const FpEnv before = current_fp_env();
  // Absolute, so that dlopen never searches the library path instead.
  void* handle =
      while_loading(given, "loading", [&] { return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); });
  std::string fp_change;
  const auto keep_fp_env = [&] {
    if (const FpEnv now = current_fp_env(); !(now == before)) {
      if (fp_change.empty()) fp_change = describe_fp_change(before, now);
      restore_fp_env(before);
    }
  };
  keep_fp_env();
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
  const slaterlab_kernel_api* api = while_loading(given, SLATERLAB_KERNEL_ENTRY "()", entry);
  keep_fp_env();
  if (!api) bad_library(given, "'" SLATERLAB_KERNEL_ENTRY "' returned no table");
  if (api->abi_version < SLATERLAB_KERNEL_ABI_OLDEST ||
      api->abi_version > SLATERLAB_KERNEL_ABI_VERSION) {
    bad_library(given, "built for kernel ABI version " + std::to_string(api->abi_version) +
                           ", this slaterlab reads versions " +
                           std::to_string(SLATERLAB_KERNEL_ABI_OLDEST) + " to " +
                           std::to_string(SLATERLAB_KERNEL_ABI_VERSION));
  }
  // A version 1 table ends at apply_cycle: nothing after it is read.
  KernelSizes sizes;
  bool differences = false;
  if (api->abi_version >= 2) {
    sizes = {std::max(api->min_n, 1), std::max(api->max_n, 0), api->supports != nullptr};
    if (sizes.max_n > 0 && sizes.min_n > sizes.max_n) {
      bad_library(given, "declares min_n = " + std::to_string(api->min_n) + " above max_n = " +
                             std::to_string(api->max_n) + ": no N it takes");
    }
    if (api->inputs & ~SLATERLAB_INPUT_DIFFERENCES) {
      bad_library(given, "declares inputs bits this slaterlab does not know (" +
                             std::to_string(api->inputs) + ")");
    }
    differences = (api->inputs & SLATERLAB_INPUT_DIFFERENCES) != 0;
  }
  // Version 2: a whole-cycle-only kernel (QMCkl's Woodbury 2x2, 3x3) sets
  // apply_cycle and leaves ratio, accept and reject all NULL.
  const int moves_set = (api->ratio != nullptr) + (api->accept != nullptr) + (api->reject != nullptr);
  const bool cycles_only = api->abi_version >= 2 && api->apply_cycle && moves_set == 0;
  if (api->abi_version >= 2 && moves_set != 0 && moves_set != 3)
    bad_library(given, "its table sets some of 'ratio', 'accept' and 'reject': all three, or none "
                       "(a whole-cycle-only kernel, with 'apply_cycle')");
  const std::pair<const char*, bool> required[] = {
      {"create", api->create != nullptr}, {"destroy", api->destroy != nullptr},
      {"reset", api->reset != nullptr},   {"ratio", cycles_only || api->ratio != nullptr},
      {"accept", cycles_only || api->accept != nullptr},
      {"reject", cycles_only || api->reject != nullptr},
      {"log_det", api->log_det != nullptr}};
  for (const auto& [name, set] : required)
    if (!set) bad_library(given, std::string("its table does not set '") + name + "'");
  if (!api->name || !*api->name) bad_library(given, "its table has no name");
  // The library stays loaded: kernels and their table live in it.
  return {path.string(), sha256_of(path.string()), printable_text(api->name),
          printable_text(api->version ? api->version : ""), api, fp_change,
          api->abi_version, sizes, differences, !cycles_only};
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

std::string printable_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      out += c == '\n' || c == '\r' || c == '\t' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : char(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (RFC 3629: no overlong form, no
    // surrogate, at most U+10FFFF) that is not a C1 control is kept whole.
    const std::size_t length = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                               : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (std::size_t j = 1; valid && j < length; ++j) valid = (byte(i + j) & 0xc0) == 0x80;
    if (valid && length == 3) {
      valid = !(c == 0xe0 && byte(i + 1) < 0xa0) && !(c == 0xed && byte(i + 1) >= 0xa0);
    } else if (valid && length == 4) {
      valid = !(c == 0xf0 && byte(i + 1) < 0x90) && !(c == 0xf4 && byte(i + 1) >= 0x90);
    }
    if (valid && length == 2 && c == 0xc2 && byte(i + 1) < 0xa0) valid = false;  // C1 controls
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

}  // namespace slaterlab

namespace slaterlab {

std::string KernelSizes::text(bool asked) const {
  std::string out = min_n == max_n ? "N = " + std::to_string(min_n)
                    : max_n > 0    ? std::to_string(min_n) + " <= N <= " + std::to_string(max_n)
                                   : "N >= " + std::to_string(min_n);
  return asks && asked ? out + " where its supports() agrees" : out;
}

}  // namespace slaterlab
