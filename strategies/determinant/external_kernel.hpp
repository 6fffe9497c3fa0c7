#pragma once
// An external kernel: a shared library implementing slaterlab/kernel.h,
// judged as a strategy ("kernel" in the registry, options.library naming
// the file, options.kernel_options passed through to its create()).
//
// Loading (load_kernel_library) happens once per path and validates
// everything before any work: a missing file, a file that is not a shared
// object, a missing entry point, an ABI version it does not read (1 and 2
// are read), a table without a required function or without a name, sizes
// that admit no N, is std::invalid_argument naming the file. A version 2
// kernel's declared sizes (KernelSizes, supports()) are checked per N by
// kernel_size_refusal before any work; its queued updates are flushed at
// each sweep's end and before each measurement (slaterlab/kernel.h); a
// cycle it declines is applied move by move and counted
// (kDeclinedCycleEvent); a kernel that takes differences gets
// new - old columns. Once loaded, what the kernel computes is judged, not
// trusted: a non-finite or below-threshold ratio is a breakdown (Ratio's contract),
// a wrong value is a finding of the metrics; a status other than OK or
// BREAKDOWN throws (SingularMatrixError for SLATERLAB_SINGULAR,
// ProtocolError for SLATERLAB_BAD_ARGUMENT, std::runtime_error otherwise)
// with the kernel's message, made printable (printable_text). A kernel that
// crashes (a fatal signal), hangs (kernel_call_timeout) or exits (where the
// program routes exit through leave_kernel_call_on_exit) inside a call is
// dead: that call and every later one throw std::runtime_error naming the
// call and the signal or exit status; a create() that refuses the N of a
// reset() throws std::runtime_error too (not bad input: the study was valid).
// The kernel never sees slaterlab's own data: every input is a copy, checked
// unchanged after the call; a kernel that writes into one, changes the
// floating-point environment (at load or in a call; slaterlab restores it)
// or returns a sign other than -1 or +1 is a finding (findings()).

#include <memory>
#include <string_view>
#include <vector>
#include <optional>
#include <string>

#include "slaterlab/kernel.h"
#include "slaterlab/strategies/determinant/updater_base.hpp"

namespace slaterlab {

struct FpEnv;  // kernel_call_guard.hpp

/// The sizes a kernel takes (version 2; version 1: any N >= 1).
struct KernelSizes {
  int min_n = 1;
  int max_n = 0;      // 0: no bound
  bool asks = false;  // it has supports(), asked per N too
  bool admits(long n) const { return n >= min_n && (max_n == 0 || n <= max_n); }
  /// "N = 21", "2 <= N <= 64", "N >= 2", with " where its supports() agrees"
  /// when it asks and `asked`.
  std::string text(bool asked = true) const;
};

/// A validated kernel library, kept loaded for the life of the process.
struct KernelLibrary {
  std::string path;     // absolute
  std::string sha256;   // of the file, lower-case hex
  std::string name;     // self-reported
  std::string version;  // self-reported ("" when NULL)
  const slaterlab_kernel_api* api = nullptr;
  /// Set when loading changed the floating-point environment (a library
  /// built with -ffast-math sets flush-to-zero at load); restored since.
  std::string load_fp_change;
  int abi_version = 1;
  KernelSizes sizes;
  bool differences = false;  // SLATERLAB_INPUT_DIFFERENCES: given new - old columns
  bool single_moves = true;  // false: whole update cycles only (version 2, no ratio/accept/reject)
};

/// Loads and validates the library at `path` (cached per path; thread-safe).
const KernelLibrary& load_kernel_library(const std::string& path);

/// Seconds one call into a kernel of size n may take before it counts as a
/// hang: 10 + N^3 / 1e7 (a refactorisation at 10 Mflop/s), or
/// $SLATERLAB_KERNEL_TIMEOUT when set to a positive number.
double kernel_call_timeout(Eigen::Index n);

/// "SIGSEGV (Segmentation fault)": how a crash is named in findings.
std::string describe_signal(int signal);

/// A kernel's text (a message, its name) as slaterlab prints and stores it:
/// valid UTF-8 without control characters (a line break or a tab becomes a
/// space, any other control character or invalid byte '?').
std::string printable_text(std::string_view text);

/// Why the kernel configuration `options` cannot run at size n, as one
/// line naming the kernel and the sizes it takes; "" when it can (always
/// for a version 1 kernel). For version 2: the declared sizes, then its
/// supports(), then a kernel created and destroyed at n (its options at
/// that size). Throws std::invalid_argument as make_updater does.
std::string kernel_size_refusal(const UpdaterOptions& options, long n);

/// Called by a program's exit(), _exit(), _Exit() and quick_exit() (the
/// `slaterlab` command's, verify/cli/kernel_exit.cpp) before they end the
/// process: when a kernel call is in progress on this thread, it does not
/// return but ends that call as a finding ("called exit(3) in accept"), no
/// at-exit handler having run; otherwise it returns.
void leave_kernel_call_on_exit(const char* function, int status);

/// The adapter. The kernel instance is created at the first reset() (and
/// again when N changes); accept() of a breakdown and the recompute cadence
/// are handled as for every strategy (UpdaterBase): the kernel drops its
/// proposal and restarts from the exact updated matrix.
class ExternalKernel final : public UpdaterBase {
 public:
  explicit ExternalKernel(UpdaterOptions options);
  ~ExternalKernel() override;
  ExternalKernel(const ExternalKernel&) = delete;
  ExternalKernel& operator=(const ExternalKernel&) = delete;

  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  void reject() override;
  void flush() override;
  LogDet log_det() const override;
  MaintainedState maintained() const override;
  /// The kernel's whole-cycle call when it has one, else the default.
  CycleRatio apply_cycle(const std::vector<ColumnUpdate>& updates) override;
  std::vector<std::string> findings() const override;

 private:
  /// A kernel's copy of an input, with a guard band of kGuard doubles on
  /// each side: a write just past either end lands in the band, not in
  /// slaterlab's heap, and is seen.
  class InputCopy {
   public:
    /// Copies count doubles; the pointer handed to the kernel.
    double* assign(const double* data, Eigen::Index count);
    double* data() { return buffer_.data() + kGuard; }
    /// Whether the copy is bit for bit `original` (a NaN equal to the same NaN).
    bool same_as(const double* original) const;
    /// Whether the bands are as assign() left them; puts them back.
    bool bands_kept();

   private:
    static constexpr std::size_t kGuard = 16;
    std::vector<double> buffer_;
    std::size_t count_ = 0;
  };

  /// validating: a refusal is bad input (std::invalid_argument), else a finding.
  void* create(int n, bool validating) const;
  /// Why the kernel does not take size n ("" when it does): kernel_size_refusal.
  std::string size_refusal(long n) const;
  friend std::string kernel_size_refusal(const UpdaterOptions& options, long n);
  /// The smallest N a version 2 kernel takes with these options (the probe's).
  int probe_size() const;
  /// Its supports() at n: OK, BAD_ARGUMENT (not n), or another status; OK
  /// without one (version 1, or none set).
  int supports(long n) const;
  /// The kernel's flush when something was accepted since the last one.
  void flush_queued() const;
  /// Counts `moves` moves; flushes at the end of each sweep of N (version 2).
  void count_moves(Eigen::Index moves);
  /// The kernel's input for replacing column k by `column`: the column, or
  /// column - matrix().col(k) for a kernel that takes differences.
  const Eigen::VectorXd& kernel_input(Eigen::Index k, const Eigen::VectorXd& column);
  void restart();  // the kernel from the exact current matrix
  void check(int status, const char* call) const;
  /// The kernel's message of the last call, printable.
  std::string kernel_message() const;
  /// A finding, recorded once per kind (the first one's text).
  void note(std::string_view kind, std::string what) const;
  /// Notes a kernel that wrote into the input `what` of `call`, or past
  /// its ends; false when it wrote into it.
  bool expect_unchanged(InputCopy& given, const double* original, const char* call,
                        const char* what) const;
  /// Runs one call into the kernel under the crash and hang guard
  /// (external_kernel.cpp); a crash or a time-out kills the kernel and throws.
  template <class Call>
  int guarded(const char* name, Call call) const;
  std::string fmt_timeout(const char* name) const;
  /// Marks the kernel dead for `why` and throws std::runtime_error naming it.
  [[noreturn]] void die(std::string why) const;
  /// After a call: the message buffer's band as it was (put back, and a
  /// finding if not) and the floating-point environment `env` (likewise).
  void after_call(const char* name, const FpEnv& env) const;

  const KernelLibrary& library_;
  void* kernel_ = nullptr;
  Eigen::Index kernel_n_ = 0;
  double timeout_ = kernel_call_timeout(1);  // seconds per call at the current N
  // The message buffer and a guard band after it (kMessageBand bytes of
  // kBandByte): a message longer than SLATERLAB_MESSAGE_SIZE is seen.
  static constexpr std::size_t kMessageBand = 64;
  static constexpr char kBandByte = char(0xa5);
  mutable char message_[SLATERLAB_MESSAGE_SIZE + kMessageBand] = {};
  mutable std::optional<std::string> dead_;  // why the kernel may not be called again
  mutable std::vector<std::pair<std::string, std::string>> findings_;  // kind, text
  // The kernel's own copies of its inputs (kept between calls, so that a
  // kernel that keeps the pointer reads what it was given).
  InputCopy matrix_in_;
  InputCopy column_in_;
  InputCopy columns_in_;  // of apply_cycle
  Eigen::Index proposed_k_ = 0;
  Eigen::VectorXd difference_;       // kernel_input's, for a kernel that takes differences
  mutable bool unflushed_ = false;   // accepted since the last flush or reset (version 2)
  Eigen::Index moves_in_sweep_ = 0;  // moves since the last sweep's end
  bool column_intact_ = true;  // the kernel left the column of the last ratio() as given
};


/// The event counted at each update cycle a kernel declines to do whole.
inline constexpr const char* kDeclinedCycleEvent = "cycles_declined";

/// The registry's traits of "kernel" and its builder.
StrategyTraits external_kernel_traits();
std::unique_ptr<DeterminantUpdater> make_external_kernel(const UpdaterOptions& options);

}  // namespace slaterlab
