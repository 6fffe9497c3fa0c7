#include "slaterlab/strategies/determinant/external_kernel.hpp"

#include <dlfcn.h>
#include <openssl/evp.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>

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
  return {path.string(), sha256_of(path.string()), printable_text(api->name),
          printable_text(api->version ? api->version : ""), api, fp_change};
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

ExternalKernel::ExternalKernel(UpdaterOptions options)
    : UpdaterBase(std::move(options)), library_(library_of(this->options())) {
  std::memset(message_ + SLATERLAB_MESSAGE_SIZE, kBandByte, kMessageBand);
  const auto precisions = declared_precisions(*library_.api);
  if (std::find(precisions.begin(), precisions.end(), precision()) == precisions.end()) {
    throw std::invalid_argument("kernel '" + library_.name + "' (" + library_.path +
                                ") does not support precision '" +
                                std::string(to_string(precision())) + "'");
  }
  if (!library_.load_fp_change.empty()) {
    note("fp load", "loading it changed the floating-point environment (" + library_.load_fp_change +
         "; a library linked with -ffast-math does), which slaterlab restored: its calls run "
         "with IEEE arithmetic");
  }
  // Options the kernel rejects are bad input of the study: found here, at
  // validation, by a probe instance; so is a kernel that cannot even do that.
  try {
    void* probe = create(1, true);
    guarded("destroy", [&] {
      library_.api->destroy(probe);
      return 0;
    });
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string(e.what()) + " (" + library_.path +
                                ", creating a kernel with N = 1 to validate the study)");
  }
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
  arm_kernel_guard();
  sigjmp_buf jump;
  const FpEnv env = current_fp_env();
  const KernelCallScope scope(jump, timeout_);
  if (const int sig = sigsetjmp(jump, 0)) {
    restore_fp_env(env);
    if (sig == kKernelExitJump) {
      die("called " + std::string(kernel_exit_function()) + "(" +
          std::to_string(kernel_exit_status()) + ") in " + name);
    }
    die(sig == SIGALRM ? fmt_timeout(name)
                       : "crashed in " + std::string(name) + ": " + describe_signal(sig));
  }
  message_[0] = '\0';
  int status = 0;
  try {
    status = call();
  } catch (const std::exception& e) {
    // A C++ kernel's exception through the C ABI (where its frames let it
    // unwind): its state is unknown, so it is dead as after a crash.
    restore_fp_env(env);
    die("threw through the C ABI in " + std::string(name) + ": " + printable_text(e.what()));
  } catch (...) {
    restore_fp_env(env);
    die("threw through the C ABI in " + std::string(name) + " (not a std::exception)");
  }
  after_call(name, env);
  return status;
}

void ExternalKernel::die(std::string why) const {
  dead_ = std::move(why);
  throw std::runtime_error("kernel '" + library_.name + "' " + *dead_);
}

void ExternalKernel::after_call(const char* name, const FpEnv& env) const {
  if (const FpEnv now = current_fp_env(); !(now == env)) {
    note(std::string("fp ") + name, "changed the floating-point environment in " +
                                        std::string(name) + " (" + describe_fp_change(env, now) +
                                        "), which slaterlab restored after the call");
    restore_fp_env(env);
  }
  char* band = message_ + SLATERLAB_MESSAGE_SIZE;
  for (std::size_t i = 0; i < kMessageBand; ++i) {
    if (band[i] == kBandByte) continue;
    note("message", "wrote past the end of its message buffer in " + std::string(name) +
                        " (SLATERLAB_MESSAGE_SIZE = " + std::to_string(SLATERLAB_MESSAGE_SIZE) +
                        " bytes, the terminator included)");
    std::memset(band, kBandByte, kMessageBand);
    break;
  }
}

std::string ExternalKernel::fmt_timeout(const char* name) const {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3g", timeout_);
  return "hung in " + std::string(name) + ": no return within " + seconds + " s (SIGALRM)";
}

void ExternalKernel::note(std::string_view kind, std::string what) const {
  for (const auto& [seen, text] : findings_)
    if (seen == kind) return;
  findings_.emplace_back(std::string(kind), std::move(what));
}

std::vector<std::string> ExternalKernel::findings() const {
  std::vector<std::string> out;
  for (const auto& finding : findings_) out.push_back(finding.second);
  return out;
}

namespace {
// The bands' pattern: a signalling NaN no arithmetic produces.
constexpr std::uint64_t kBandBits = 0x7ff4'dead'beef'0bad;
}  // namespace

double* ExternalKernel::InputCopy::assign(const double* data, Eigen::Index count) {
  count_ = std::size_t(count);
  buffer_.resize(count_ + 2 * kGuard);  // no allocation once the size is reached
  std::memcpy(buffer_.data() + kGuard, data, sizeof(double) * count_);
  bands_kept();
  return this->data();
}

bool ExternalKernel::InputCopy::same_as(const double* original) const {
  return std::memcmp(buffer_.data() + kGuard, original, sizeof(double) * count_) == 0;
}

bool ExternalKernel::InputCopy::bands_kept() {
  bool kept = true;
  for (std::size_t i = 0; i < kGuard; ++i) {
    for (double* slot : {&buffer_[i], &buffer_[kGuard + count_ + i]}) {
      std::uint64_t bits;
      std::memcpy(&bits, slot, sizeof bits);
      kept = kept && bits == kBandBits;
      std::memcpy(slot, &kBandBits, sizeof bits);
    }
  }
  return kept;
}

bool ExternalKernel::expect_unchanged(InputCopy& given, const double* original, const char* call,
                                      const char* what) const {
  if (!given.bands_kept()) {
    note(std::string("past ") + what, std::string("wrote past an end of ") + what +
                                          " it was given in " + call +
                                          " (into a guard band: slaterlab's memory untouched)");
  }
  if (given.same_as(original)) return true;
  note(std::string("input ") + what, std::string("wrote into ") + what +
                                         " it was given (const) in " + call +
                                         " (its own copy: no other strategy saw the change)");
  return false;
}

void* ExternalKernel::create(int n, bool validating) const {
  // Copies: a kernel that writes into its options changes nothing of ours.
  std::vector<std::string> text;
  for (const auto& [key, value] : options().kernel_options) {
    text.push_back(key);
    text.push_back(value);
  }
  std::vector<slaterlab_option> pass;
  for (std::size_t i = 0; i < text.size(); i += 2) pass.push_back({text[i].c_str(), text[i + 1].c_str()});
  void* kernel = nullptr;
  guarded("create", [&] {
    kernel = library_.api->create(n, to_abi(precision()), options().breakdown, int(pass.size()),
                                  pass.data(), message_);
    return 0;
  });
  const std::string message = kernel_message();
  if (!kernel && validating) {
    throw std::invalid_argument("kernel '" + library_.name + "' (" + library_.path +
                                "): create failed: " + message);
  }
  if (!kernel) {
    throw std::runtime_error("kernel '" + library_.name + "' create refused N = " +
                             std::to_string(n) + ": " + (message.empty() ? "no message" : message));
  }
  return kernel;
}

std::string ExternalKernel::kernel_message() const {
  // At most SLATERLAB_MESSAGE_SIZE - 1 bytes, whether the kernel ended it or not.
  return printable_text(std::string_view(message_, strnlen(message_, SLATERLAB_MESSAGE_SIZE - 1)));
}

std::string ExternalKernel::label() const {
  return "kernel-" + label_word(library_.name) + "-" + std::string(to_string(precision()));
}

void ExternalKernel::check(int status, const char* call) const {
  if (status == SLATERLAB_OK || status == SLATERLAB_BREAKDOWN) return;
  const std::string message = kernel_message();
  const std::string what = "kernel '" + library_.name + "' " + call + ": " +
                           (message.empty() ? "status " + std::to_string(status) : message);
  if (status == SLATERLAB_SINGULAR) throw SingularMatrixError(what);
  if (status == SLATERLAB_BAD_ARGUMENT) throw ProtocolError(what);
  if (status == SLATERLAB_INTERNAL) throw std::runtime_error(what);
  throw std::runtime_error("kernel '" + library_.name + "' " + call + ": returned status " +
                           std::to_string(status) + ", which slaterlab/kernel.h does not define" +
                           (message.empty() ? "" : " (" + message + ")"));
}

void ExternalKernel::restart() {
  double* a = matrix_in_.assign(matrix().data(), matrix().size());
  const int status =
      guarded("reset", [&] { return library_.api->reset(kernel_, a, int(size()), message_); });
  expect_unchanged(matrix_in_, matrix().data(), "reset", "the matrix");
  check(status, "reset");
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
    kernel_ = create(int(size()), false);
    kernel_n_ = size();
  }
  restart();
}

Ratio ExternalKernel::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  const double* column = column_in_.assign(new_column.data(), size());
  proposed_k_ = k;
  double value = 0.0;
  const int status = guarded(
      "ratio", [&] { return library_.api->ratio(kernel_, int(k), column, &value, message_); });
  column_intact_ = expect_unchanged(column_in_, new_column.data(), "ratio", "the column");
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
  const int status = guarded("accept", [&] { return library_.api->accept(kernel_, message_); });
  // A kernel may keep the column's pointer from ratio() until here.
  if (column_intact_) {
    expect_unchanged(column_in_, matrix().col(proposed_k_).data(), "accept", "the column");
  }
  check(status, "accept");
}

void ExternalKernel::reject() {
  const Proposal& proposal = pending();  // the protocol check, and the column given
  const int status = guarded("reject", [&] { return library_.api->reject(kernel_, message_); });
  if (column_intact_) {
    column_intact_ = expect_unchanged(column_in_, proposal.column.data(), "reject", "the column");
  }
  drop_pending();
  check(status, "reject");
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
  if (sign != 1 && sign != -1) {
    // Not taken for the nearest sign: a sign of 0 disagrees with the reference's.
    note("sign", "log_det returned sign " + std::to_string(sign) +
                     " (slaterlab/kernel.h: -1 or +1); taken as 0, which no reference sign is");
    sign = 0;
  }
  return {log_abs, sign};
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
  const Eigen::Index m = Eigen::Index(updates.size());
  Eigen::MatrixXd columns(n, m);
  std::vector<int> electrons;
  for (Eigen::Index u = 0; u < m; ++u) {
    // Validates k and the column, and keeps the exact matrix in step.
    begin_proposal(updates[std::size_t(u)].k, updates[std::size_t(u)].column);
    commit_pending();
    columns.col(u) = updates[std::size_t(u)].column;
    electrons.push_back(int(updates[std::size_t(u)].k));
  }
  double* given = columns_in_.assign(columns.data(), columns.size());
  const std::vector<int> given_electrons = electrons;
  double value = 0.0;
  const int status = guarded("apply_cycle", [&] {
    return library_.api->apply_cycle(kernel_, int(m), given, int(n), electrons.data(), &value,
                                     message_);
  });
  expect_unchanged(columns_in_, columns.data(), "apply_cycle", "the columns");
  if (electrons != given_electrons) {
    note("input electrons",
         "wrote into the electron indices it was given (const) in apply_cycle (its own copy)");
  }
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
