#pragma once
// Bookkeeping shared by all strategies: the exact current matrix, the
// pending proposal, the recompute cadence, breakdown classification and
// the counters. A concrete strategy derives from UpdaterBase and implements
// only its own numerics.

#include <string>

#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab {

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
