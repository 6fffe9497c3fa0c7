#pragma once
// Sherman-Morrison with splitting, the strategy "splitting" (QMCkl's
// qmckl_sherman_morrison_splitting, after J. Slagel; see the QMCkl
// documentation): an update whose Sherman-Morrison denominator is below the
// threshold tau = options.breakdown (default kDefaultSplittingThreshold,
// QMCkl's 1e-3) is split in two halves, one applied now and one queued.
//
// What: keeps the inverse of the applied matrix and a queue of at most
// kMaxQueued unapplied halves; ratio() is always the exact determinant
// ratio of the full replacement (a small Woodbury system over the queue).
// Preconditions: the DeterminantUpdater protocol; options validated by
// make_updater (precision float, double or mixed).
// Guarantees: with an empty queue the ratios and updates are sm's, bit for
// bit; queued halves are never split again; maintained() changes no state;
// no inf or NaN reaches a ratio or the inverse. flush() does nothing.
// Errors: reset() of a singular matrix throws SingularMatrixError; |rho| <
// tau or a non-finite rho is a breakdown; a queue that overflows or whose
// Woodbury matrix is singular to working precision refactorises (which may
// itself throw SingularMatrixError). Derivation: splitting.cpp.

#include <memory>
#include <utility>
#include <vector>

#include <Eigen/LU>

#include "slaterlab/strategies/determinant/linalg.hpp"
#include "slaterlab/strategies/determinant/updater_base.hpp"

namespace slaterlab {

/// Splitting threshold used when options.breakdown is left at its generic default.
inline constexpr double kDefaultSplittingThreshold = 1e-3;

/// The event counted at each split update (UpdaterCounters::count).
inline constexpr const char* kSplitEvent = "splits";

template <class Storage>
class Splitting final : public UpdaterBase {
 public:
  /// Most pieces kept unapplied before falling back to a refactorisation.
  static constexpr std::size_t kMaxQueued = 8;
  /// Rounds over the deferred pieces of a cycle before it is a breakdown.
  static constexpr int kMaxCycleRounds = 32;

  explicit Splitting(UpdaterOptions options);

  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  void reject() override;
  void flush() override {}
  LogDet log_det() const override { return log_det_; }
  MaintainedState maintained() const override;
  CycleRatio apply_cycle(const std::vector<ColumnUpdate>& updates) override;

  /// Pieces waiting in the queue.
  Eigen::Index queued() const { return Eigen::Index(queue_cols_.size()); }

 private:
  void refactorise();
  /// Row c of Ainv times x, accumulated as sm accumulates its ratio.
  double row_dot(Eigen::Index c, const VectorX<Storage>& x) const;
  /// Row c of Ainv times a double vector, accumulated in double.
  double row_dot_double(Eigen::Index c, const Eigen::VectorXd& v) const;
  double lookahead_ratio(Eigen::Index k, double den0) const;
  /// Ainv -= scale (Ainv target - e_c)(e_c^T Ainv) / den: column c of A_app
  /// moved by `scale` of the way to `target`, in Sherman-Morrison's form.
  void apply_column(Eigen::Index c, const VectorX<Storage>& target, double den, Storage scale);
  /// Applies the rest of queued column `slot` if its denominator passes; erases it.
  bool try_apply_queued(std::size_t slot);
  void retry_queue();
  /// Forms S and its LU; false when S is singular to working precision.
  bool rebuild_schur();
  std::ptrdiff_t find_queued(Eigen::Index column) const;
  /// Moves column c of A_app towards `target` (its denominator `den`): whole
  /// when |den| >= tau, else half. Returns the divisor applied (0: nothing
  /// could be applied) and whether the piece was applied whole.
  std::pair<double, bool> apply_piece(Eigen::Index c, const VectorX<Storage>& target, double den);

  MatrixX<Storage> ainvt_;  // inverse of the applied matrix, transposed as sm's (rows contiguous)
  LogDet log_det_;
  int accepted_since_refactorise_ = 0;

  double pending_ratio_ = 0.0;
  double pending_den0_ = 0.0;
  VectorX<Storage> new_column_;  // the pending column, rounded to Storage
  VectorX<Storage> x_;           // workspace: Ainv times the applied piece
  VectorX<Storage> row_;         // workspace: a row of Ainv
  VectorX<Storage> target_;      // workspace: a queued column's target in Storage

  std::vector<Eigen::Index> queue_cols_;
  Eigen::MatrixXd schur_;  // S = P^T Ainv T
  Eigen::PartialPivLU<Eigen::MatrixXd> schur_lu_;
};

/// Builds the splitting strategy (float storage for float and mixed), with
/// the default threshold rule stated above.
std::unique_ptr<DeterminantUpdater> make_splitting(const UpdaterOptions& options);

}  // namespace slaterlab
