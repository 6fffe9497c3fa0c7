#pragma once
// The one interface every determinant-update strategy implements.
//
// Convention: A(i, j) = phi_i(r_j); electron k owns column k.
// A proposal replaces column k by `new_column`; its ratio is
//   rho = det(A') / det(A) = e_k^T A^{-1} a_k'.
// Calls follow the protocol
//   reset(A) { ratio(k, a') (accept() | reject()) }* [flush()]
// and exactly one of accept()/reject() follows every ratio(). Inputs are
// always double (the exact data); a strategy rounds them to its storage
// precision itself, so every strategy sees the same numbers.

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slaterlab/strategies/determinant/precision.hpp"

namespace slaterlab {

/// log|det A| and the sign of det A, never the raw value (it overflows double
/// for N >= 200). sign is -1 or +1; 0 only if the strategy found A singular.
struct LogDet {
  double log_abs = 0.0;
  int sign = 1;
};

/// Result of ratio(). A breakdown is a ratio whose magnitude is below the
/// strategy's breakdown threshold or that is not finite: it is counted and
/// reported, and `value` is then the finite computed ratio or 0 when the
/// computed ratio was not finite (a NaN never leaves a strategy).
struct Ratio {
  double value = 0.0;
  bool breakdown = false;
};

/// Event counts since reset(): breakdowns and recomputes, which every
/// strategy has, and the events only some strategies have (a delayed
/// window's flushes, a split), counted by the names the strategy's traits
/// declare (StrategyTraits::events), which the results file stores as
/// columns without knowing the strategy.
struct UpdaterCounters {
  std::int64_t breakdowns = 0;  ///< ratios reported as breakdown
  std::int64_t recomputes = 0;  ///< from-scratch refactorisations after reset()
  /// (name, count) of each named event counted at least once, in the order
  /// first counted.
  std::vector<std::pair<std::string, std::int64_t>> events;

  /// The count of the named event; 0 when it was never counted.
  std::int64_t event(std::string_view name) const {
    for (const auto& [event_name, count] : events)
      if (event_name == name) return count;
    return 0;
  }
  /// Adds `times` to the named event.
  void count(std::string_view name, std::int64_t times = 1) {
    for (auto& [event_name, count] : events)
      if (event_name == name) {
        count += times;
        return;
      }
    events.emplace_back(std::string(name), times);
  }

  /// Counts of several updaters together (lanes of a split experiment, the
  /// spins of a VMC walker).
  UpdaterCounters& operator+=(const UpdaterCounters& b) {
    breakdowns += b.breakdowns;
    recomputes += b.recomputes;
    for (const auto& [name, times] : b.events) count(name, times);
    return *this;
  }
};

/// QR factors kept by QR strategies: A(:, column_of[j]) = (Q R)(:, j), i.e.
/// physical column j of Q R holds logical column column_of[j] of A.
struct QrFactors {
  Eigen::MatrixXd q;
  Eigen::MatrixXd r;
  std::vector<Eigen::Index> column_of;
};

/// What a strategy maintains, exposed (in double) for divergence metrics.
/// Inverse strategies fill `inverse` with the effective current inverse (for
/// delayed updates: the flushed inverse corrected by the pending window,
/// formed on the side without changing the strategy's state). QR strategies
/// fill `qr`.
struct MaintainedState {
  std::optional<Eigen::MatrixXd> inverse;
  std::optional<QrFactors> qr;
};

/// Thrown by reset() (and by a recompute) when the matrix is singular to the
/// strategy's working precision (zero pivot or non-finite entries).
class SingularMatrixError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown when the call protocol is broken (accept() without a pending
/// proposal, k out of range, wrong column length).
class ProtocolError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// One column replacement inside an update cycle.
struct ColumnUpdate {
  Eigen::Index k = 0;      ///< the electron (column) replaced
  Eigen::VectorXd column;  ///< its new column (exact data, double)
};

/// Outcome of apply_cycle().
struct CycleRatio {
  double value = 0.0;            ///< det(A_after) / det(A_before) as the strategy computed it
  bool breakdown = false;        ///< the strategy could not complete the cycle reliably
  std::vector<Ratio> per_update; ///< each update's ratio against the matrix just before it,
                                 ///< where the strategy forms them (empty for whole-cycle kernels)
};

class DeterminantUpdater {
 public:
  virtual ~DeterminantUpdater() = default;

  /// Matrix size N (0 before the first reset()).
  virtual Eigen::Index size() const = 0;
  /// Short label, e.g. "sm-float" or "delayed-16-double".
  virtual std::string label() const = 0;
  virtual Precision precision() const = 0;
  /// Epsilon of the storage type: errors are reported in units of it.
  double epsilon() const { return storage_epsilon(precision()); }

  /// Starts from A (N x N); throws SingularMatrixError if A is singular to
  /// working precision. Clears counters and any pending proposal.
  virtual void reset(const Eigen::MatrixXd& a) = 0;
  /// Ratio for replacing column k by new_column; becomes the pending proposal.
  virtual Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) = 0;
  /// Applies (or queues) the pending proposal. An accepted breakdown is
  /// recovered by refactorising the updated matrix from scratch.
  virtual void accept() = 0;
  /// Drops the pending proposal; the state is left bit-for-bit unchanged.
  virtual void reject() = 0;
  /// Applies anything queued (delayed strategies); a no-op for the others.
  virtual void flush() = 0;
  /// log|det| and sign of the current matrix as the strategy knows it.
  virtual LogDet log_det() const = 0;
  virtual MaintainedState maintained() const = 0;
  virtual UpdaterCounters counters() const = 0;

  /// Applies m column replacements as one unit (a multi-determinant
  /// excitation, always applied: no accept/reject). Intermediate matrices may
  /// be exactly singular although A_before and A_after are not. The default
  /// applies ratio() + accept() per update in order, value = product of the
  /// per-update ratios; strategies that can do better override it.
  virtual CycleRatio apply_cycle(const std::vector<ColumnUpdate>& updates);

  /// What the strategy did wrong besides its numbers, each a finding that
  /// did not stop it (an external kernel that wrote into an input or changed
  /// the floating-point environment, which slaterlab undid); none for the
  /// built-ins.
  virtual std::vector<std::string> findings() const { return {}; }
};

}  // namespace slaterlab
