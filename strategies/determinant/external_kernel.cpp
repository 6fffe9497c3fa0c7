#include "slaterlab/strategies/determinant/external_kernel.hpp"

#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "slaterlab/strategies/determinant/kernel_call_guard.hpp"

namespace slaterlab {
namespace {

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

/// The study's `options = {...}` as the kernel's option list: copies, so
/// that a kernel that writes into them changes nothing of ours.
class KernelOptionList {
 public:
  explicit KernelOptionList(const UpdaterOptions& o) {
    for (const auto& [key, value] : o.kernel_options) {
      text_.push_back(key);
      text_.push_back(value);
    }
    for (std::size_t i = 0; i < text_.size(); i += 2)
      pass_.push_back({text_[i].c_str(), text_[i + 1].c_str()});
  }
  KernelOptionList(const KernelOptionList&) = delete;
  KernelOptionList& operator=(const KernelOptionList&) = delete;
  int size() const { return int(pass_.size()); }
  const slaterlab_option* data() const { return pass_.data(); }

 private:
  std::vector<std::string> text_;
  std::vector<slaterlab_option> pass_;
};

// How far past min_n the probe looks for a size supports() takes (a delay
// rank K <= N needs N = K): any window a QMC code uses.
constexpr int kProbeSpan = 4096;

const KernelLibrary& library_of(const UpdaterOptions& o) {
  if (o.library.empty()) throw std::invalid_argument("strategy 'kernel' needs 'library' (the shared library)");
  return load_kernel_library(o.library);
}

}  // namespace

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
  // validation, by a probe instance (N = 1 for version 1, the smallest size
  // a version 2 kernel takes); so is a kernel that cannot even do that.
  int probe_n = 1;
  try {
    probe_n = probe_size();
    void* probe = create(probe_n, true);
    guarded("destroy", [&] {
      library_.api->destroy(probe);
      return 0;
    });
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string(e.what()) + " (" + library_.path +
                                ", creating a kernel with N = " + std::to_string(probe_n) +
                                " to validate the study)");
  }
}

int ExternalKernel::supports(long n) const {
  if (library_.abi_version < 2 || !library_.sizes.asks) return SLATERLAB_OK;
  const KernelOptionList list(options());
  return guarded("supports", [&] {
    return library_.api->supports(int(n), to_abi(precision()), list.size(), list.data(), message_);
  });
}

int ExternalKernel::probe_size() const {
  const KernelSizes& sizes = library_.sizes;
  const int last = sizes.max_n > 0 ? sizes.max_n : sizes.min_n + kProbeSpan;
  for (int n = sizes.min_n; n <= last; ++n) {
    const int status = supports(n);
    if (status == SLATERLAB_OK) return n;
    if (status != SLATERLAB_BAD_ARGUMENT) check(status, "supports");
  }
  throw std::invalid_argument("kernel '" + library_.name + "' (" + library_.path +
                              ") takes no N from " + std::to_string(sizes.min_n) + " to " +
                              std::to_string(last) + " with these options: " + kernel_message());
}

std::string ExternalKernel::size_refusal(long n) const {
  if (library_.abi_version < 2) return "";
  const auto takes = [&](bool asked) {
    return "kernel '" + library_.name + "' (" + library_.path + ") takes " +
           library_.sizes.text(asked) + ", not N = " + std::to_string(n);
  };
  if (!library_.sizes.admits(n)) return takes(false);
  if (const int status = supports(n); status == SLATERLAB_BAD_ARGUMENT) {
    return takes(true) + ": " + kernel_message();
  } else {
    check(status, "supports");
  }
  try {
    void* kernel = create(int(n), true);
    guarded("destroy", [&] {
      library_.api->destroy(kernel);
      return 0;
    });
  } catch (const std::invalid_argument& e) {
    return std::string(e.what()) + " (N = " + std::to_string(n) + ")";
  }
  return "";
}

std::string kernel_size_refusal(const UpdaterOptions& options, long n) {
  if (library_of(options).abi_version < 2) return "";
  const ExternalKernel kernel(options);
  try {
    return kernel.size_refusal(n);
  } catch (const std::runtime_error& e) {  // it crashed, hung or failed while asked
    throw std::invalid_argument(std::string(e.what()) + " (asked whether it takes N = " +
                                std::to_string(n) + ")");
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
  const KernelOptionList list(options());
  void* kernel = nullptr;
  guarded("create", [&] {
    kernel = library_.api->create(n, to_abi(precision()), options().breakdown, list.size(),
                                  list.data(), message_);
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
  unflushed_ = false;  // a reset leaves nothing queued
  check(status, "reset");
}

void ExternalKernel::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  timeout_ = kernel_call_timeout(size());
  moves_in_sweep_ = 0;
  if (!kernel_ || kernel_n_ != size()) {
    // A size a version 2 kernel does not take: refused before create.
    if (library_.abi_version >= 2 && !library_.sizes.admits(size())) {
      throw std::runtime_error("kernel '" + library_.name + "' takes " + library_.sizes.text(false) +
                               ", not N = " + std::to_string(size()));
    }
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
  if (!library_.single_moves)  // refused before any work where a study would need it
    throw std::logic_error("kernel '" + library_.name + "' takes whole update cycles only");
  begin_proposal(k, new_column);
  const Eigen::VectorXd& input = kernel_input(k, new_column);
  const double* column = column_in_.assign(input.data(), size());
  proposed_k_ = k;
  double value = 0.0;
  const int status = guarded(
      "ratio", [&] { return library_.api->ratio(kernel_, int(k), column, &value, message_); });
  column_intact_ = expect_unchanged(column_in_, input.data(), "ratio", "the column");
  check(status, "ratio");
  return classify(value, status == SLATERLAB_BREAKDOWN);
}

void ExternalKernel::accept() {
  if (commit_pending()) {  // a breakdown, or the recompute cadence: from the exact matrix
    check(guarded("reject", [&] { return library_.api->reject(kernel_, message_); }), "reject");
    restart();
    note_recompute();
    count_moves(1);
    return;
  }
  const int status = guarded("accept", [&] { return library_.api->accept(kernel_, message_); });
  // A kernel may keep the column's pointer from ratio() until here.
  if (column_intact_) {
    const double* given =
        library_.differences ? difference_.data() : matrix().col(proposed_k_).data();
    expect_unchanged(column_in_, given, "accept", "the column");
  }
  check(status, "accept");
  unflushed_ = true;
  count_moves(1);
}

void ExternalKernel::reject() {
  const Proposal& proposal = pending();  // the protocol check, and the column given
  const int status = guarded("reject", [&] { return library_.api->reject(kernel_, message_); });
  if (column_intact_) {
    const double* given = library_.differences ? difference_.data() : proposal.column.data();
    column_intact_ = expect_unchanged(column_in_, given, "reject", "the column");
  }
  drop_pending();
  check(status, "reject");
  count_moves(1);
}

void ExternalKernel::flush() {
  if (!library_.api->flush) return;  // nothing is ever queued
  if (library_.abi_version >= 2) return flush_queued();
  check(guarded("flush", [&] { return library_.api->flush(kernel_, message_); }), "flush");
}

void ExternalKernel::flush_queued() const {
  if (!unflushed_ || !library_.api->flush) return;
  unflushed_ = false;
  check(guarded("flush", [&] { return library_.api->flush(kernel_, message_); }), "flush");
}

void ExternalKernel::count_moves(Eigen::Index moves) {
  if (library_.abi_version < 2) return;
  moves_in_sweep_ += moves;
  if (moves_in_sweep_ < size()) return;
  moves_in_sweep_ %= size();
  flush_queued();  // the end of a sweep, where QMC drivers complete their updates
}

const Eigen::VectorXd& ExternalKernel::kernel_input(Eigen::Index k, const Eigen::VectorXd& column) {
  if (!library_.differences) return column;
  difference_ = column - matrix().col(k);
  return difference_;
}

LogDet ExternalKernel::log_det() const {
  if (library_.abi_version >= 2) flush_queued();  // a measurement
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
  if (library_.abi_version >= 2) flush_queued();  // a measurement
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
    const ColumnUpdate& update = updates[std::size_t(u)];
    begin_proposal(update.k, update.column);  // validates k and the column
    drop_pending();
    columns.col(u) = update.column;
    if (library_.differences) {  // against the column just before this update
      Eigen::Index last = u - 1;
      while (last >= 0 && updates[std::size_t(last)].k != update.k) --last;
      columns.col(u) -= last >= 0 ? updates[std::size_t(last)].column : matrix().col(update.k);
    }
    electrons.push_back(int(update.k));
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
  if (status == SLATERLAB_DECLINED && !library_.single_moves) {
    throw std::runtime_error("kernel '" + library_.name +
                             "' apply_cycle: declined a cycle, but it takes whole cycles only "
                             "(no ratio, accept and reject to apply it by)");
  }
  if (status == SLATERLAB_DECLINED && library_.abi_version >= 2) {
    mutable_counters().count(kDeclinedCycleEvent);
    return DeterminantUpdater::apply_cycle(updates);  // ratio + accept, each a move
  }
  for (const ColumnUpdate& update : updates) {  // the exact matrix, A_after
    begin_proposal(update.k, update.column);
    commit_pending();
  }
  check(status, "apply_cycle");
  unflushed_ = true;
  const Ratio r = classify(value, status == SLATERLAB_BREAKDOWN);
  if (r.breakdown) {  // as an accepted breakdown: from the exact matrix after the cycle
    restart();
    note_recompute();
  }
  count_moves(m);
  return {r.value, r.breakdown, {}};
}

StrategyTraits external_kernel_traits() {
  StrategyTraits t;
  t.precisions = {Precision::single, Precision::double_, Precision::mixed};
  t.loads_library = true;
  t.events = {{kDeclinedCycleEvent,
               "update cycles the kernel declined to do whole (applied move by move) so far"}};
  t.declared = [](const UpdaterOptions& o) {
    StrategyTraits d = external_kernel_traits();
    const slaterlab_kernel_api& api = *library_of(o).api;
    d.precisions = declared_precisions(api);
    d.carries_updates = api.carries_updates != 0;
    if (api.default_breakdown > 0) d.default_breakdown = api.default_breakdown;
    // A version 2 kernel may decline any cycle shape (applied move by move,
    // breaking down at a singular intermediate): no promise of a whole one.
    if (api.apply_cycle && api.abi_version < 2) d.cycles = StrategyTraits::Cycles::whole;
    d.single_moves = library_of(o).single_moves;
    // A whole-cycle-only kernel declines nothing: every cycle is its whole.
    if (!d.single_moves) d.cycles = StrategyTraits::Cycles::whole;
    return d;
  };
  t.size_refusal = [](std::int64_t n, const UpdaterOptions& o) {
    return kernel_size_refusal(o, long(n));
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
