#pragma once
// Bookkeeping shared by all strategies: the exact current matrix, the
// pending proposal, the recompute cadence, breakdown classification and
// the counters. A concrete strategy derives from UpdaterBase and implements
// only its own numerics.

#include <cmath>
#include <string>

#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab {

/// log|det| and its sign carried through accepted ratios: the ratios are
/// multiplied into a factor kept within [2^-512, 2^512] (a ratio that would
/// take it out goes into the logarithm with the factor), and the factor's
/// logarithm is added when read, so a move costs a product, not a
/// logarithm. Its rounding (eps per product) is no worse than adding
/// log|rho| per move (eps |log|det|| per addition). A ratio of 0 or not
/// finite gives -inf or NaN, as adding its logarithm would.
class RunningLogDet {
 public:
  RunningLogDet() = default;
  explicit RunningLogDet(LogDet start) : base_(start) {}

  void multiply(double ratio) {
    const double product = factor_ * ratio;
    const double magnitude = std::abs(product);
    if (magnitude >= 0x1p-512 && magnitude <= 0x1p512) {
      factor_ = product;
      return;
    }
    // Out of the range (or under- or overflowed): the factor and this
    // ratio go into the logarithm separately.
    fold();
    add(std::log(std::abs(ratio)), ratio < 0 ? -1 : 1);
  }
  /// Adds a log|.| and a sign directly (a product formed elsewhere).
  void add(double log_abs, int sign) {
    base_.log_abs += log_abs;
    base_.sign *= sign;
  }
  LogDet value() const {
    LogDet v = base_;
    v.log_abs += std::log(std::abs(factor_));
    if (factor_ < 0) v.sign = -v.sign;
    return v;
  }

 private:
  void fold() {
    base_ = value();
    factor_ = 1.0;
  }

  LogDet base_;
  double factor_ = 1.0;
};

class UpdaterBase : public DeterminantUpdater {
 public:
  Eigen::Index size() const final { return a_.rows(); }
  Precision precision() const final { return options_.precision; }
  UpdaterCounters counters() const final { return counters_; }
  const UpdaterOptions& options() const { return options_; }

 protected:
  struct Proposal {
    Eigen::Index k = 0;
    Eigen::VectorXd column;  // exact (double) new column
  };

  explicit UpdaterBase(UpdaterOptions options) : options_(std::move(options)) {}

  /// Stores A and clears counters; call first in reset().
  void begin_reset(const Eigen::MatrixXd& a);
  /// Validates k and the column and makes it the pending proposal.
  const Proposal& begin_proposal(Eigen::Index k, const Eigen::VectorXd& new_column);
  /// The pending proposal; throws ProtocolError if there is none.
  const Proposal& pending() const;
  /// Writes the pending column into A, clears the proposal and tells whether
  /// a periodic recompute is now due (recompute_every reached) or required
  /// (the accepted ratio was a breakdown).
  bool commit_pending();
  /// Clears the proposal without touching anything else.
  void drop_pending();
  /// Classifies a computed ratio (a breakdown too when the strategy itself
  /// reported one); counts breakdowns; remembers the outcome for
  /// commit_pending().
  Ratio classify(double value, bool reported_breakdown = false);
  /// Records a from-scratch refactorisation and restarts the cadence.
  void note_recompute();

  /// The exact current matrix (accepted columns applied, pending excluded).
  const Eigen::MatrixXd& matrix() const { return a_; }
  UpdaterCounters& mutable_counters() { return counters_; }

 private:
  UpdaterOptions options_;
  Eigen::MatrixXd a_;
  // The pending proposal; its column buffer is kept (N doubles) so that a
  // proposal copies into it instead of allocating once per move.
  Proposal pending_;
  bool has_pending_ = false;
  bool pending_breakdown_ = false;
  int accepted_since_recompute_ = 0;
  UpdaterCounters counters_;
};

}  // namespace slaterlab
