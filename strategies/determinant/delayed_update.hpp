#pragma once
// Delayed (rank-K) Sherman-Morrison-Woodbury updates, the strategy "delayed"
// (McDaniel, D'Azevedo, Li, Wong, Kent, J. Chem. Phys. 147, 174107 (2017)),
// with an O(N m + m^2) look-ahead instead of the paper's O(m^3) one.
//
// What: keeps the inverse at the last flush and a window of up to K accepted
// moves, each of a different electron; ratio() reads the current row of the
// inverse through the window. The window is flushed by two GEMMs after K
// accepts, on flush(), or earlier by the growth guard, a repeated electron,
// or a near-singular or releasing move (applied alone, as sm would).
// Preconditions: the DeterminantUpdater protocol; options validated by
// make_updater (k >= 1; precision float, double or mixed).
// Guarantees: each ratio reads a row whose rounding stays within 16 times
// sm's own; reject() and maintained() change no state, bit for bit; no
// allocation per move (the window is sized for K at reset). K = 1 is sm.
// Errors: reset() of a singular matrix throws SingularMatrixError; a ratio
// below options.breakdown or not finite is a breakdown, never NaN; an
// accepted breakdown or a window matrix B singular to working precision
// refactorises. Each step derived, with the rationale and the measurements:
// docs/delayed-updates.md.

#include <cstdint>
#include <memory>
#include <vector>

#include "slaterlab/strategies/determinant/delayed_window.hpp"
#include "slaterlab/strategies/determinant/linalg.hpp"

namespace slaterlab {

enum class DelayedVariant { incremental, naive };

/// Parses options.variant for delayed updates: "" or "incremental", "naive".
/// Throws std::invalid_argument naming the bad value otherwise.
DelayedVariant parse_delayed_variant(const std::string& text);

template <class Storage, class LookAheadScalar>
class DelayedUpdate final : public DelayedWindowUpdater {
 public:
  explicit DelayedUpdate(UpdaterOptions options);

  /// "delayed-<K>-<precision>", suffixed "-naive" for the naive look-ahead.
  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  MaintainedState maintained() const override;
  CycleRatio apply_cycle(const std::vector<ColumnUpdate>& updates) override;

  DelayedVariant variant() const { return variant_; }

 private:
  /// Scratch for the Woodbury correction; flush() owns one, maintained()
  /// makes its own so that observing changes nothing.
  struct CorrectionWork {
    MatrixX<Storage> y;              // Ainv U, N x m (or its transpose, m x N)
    std::vector<Storage> packed;     // A'^T for skinny_transposed_product
    MatrixX<LookAheadScalar> z;                 // W B^{-T}, N x m
    MatrixX<Storage> z_store;        // Z rounded to Storage (mixed only)
    MatrixX<Storage> columns_store;  // A' rounded to Storage (mixed only)
    VectorX<LookAheadScalar> lu;     // B's LU factors, then the triangles' inverses, m x m
    Eigen::VectorXi pivots;          // B's LU pivots (LAPACK's)
    std::vector<int> order;          // column order of W P
    VectorX<Storage> x, row;         // sm_update's workspaces (a window of one)
  };

  void refactorise() override;
  void close_window() override;
  void correct_flushed_inverse() override {
    if (!correct(ainvt_, flush_work_)) refactorise();
  }
  /// b (B's new column) and d (its new diagonal) for the pending move.
  void border_column(Eigen::Index k);
  double naive_ratio(Eigen::Index k);
  template <class Updater>
  friend void place_accepted_move(Updater& u, Eigen::Index k, double pivot, double step_growth);
  /// After a guard flush: a window of the pending move against the flushed
  /// inverse; false (refactorised instead) when its ratio there is 0 or not
  /// finite.
  bool reopen_window(Eigen::Index k);
  bool in_window(Eigen::Index k) const { return last_move_of_[std::size_t(k)] >= 0; }
  /// Starts a window with the pending move as its only member.
  void open_window(Eigen::Index k, LookAheadScalar pivot);
  /// Borders the window by the pending move, unless the guard refuses
  /// (returns false, nothing changed).
  bool extend_window(Eigen::Index k, LookAheadScalar pivot);
  /// Points column_ and row_ at window slot i of A' and W.
  void point_pending_at_slot(Eigen::Index i);
  /// Stores the pending move as window move i (row_norm2 = ||r||^2, and
  /// moved_norm2 = ||cur / rho||^2, its electron's row just after it).
  void store_move(Eigen::Index i, Eigen::Index k, double row_norm2, double moved_norm2);
  /// ainvt <- ainvt - Z Y^T for the current window (m_ > 0); when its rows
  /// grew beyond within_flush_guard, so for a prefix of its moves that stays
  /// within it, and the other moves one by one in Sherman-Morrison's form.
  /// False, ainvt then to be discarded, when B (or a leading block) is
  /// singular to working precision or a pivot of those moves is 0 or not
  /// finite.
  bool correct(MatrixX<Storage>& ainvt, CorrectionWork& work) const;
  /// ainvt <- ainvt - Z Y^T for the window's first p moves, Z = work.z
  /// solved for them (columns: A' in Storage).
  void woodbury_update(MatrixX<Storage>& ainvt, const Storage* columns, CorrectionWork& work,
                       Eigen::Index p) const;
  /// Applies the window's moves from `first` on to ainvt in turn, as sm
  /// does; false when a pivot is 0 or not finite.
  bool apply_moves_singly(MatrixX<Storage>& ainvt, const Storage* columns, CorrectionWork& work,
                          Eigen::Index first) const;
  /// work.z = Z = W B^{-T}, the rows of the current inverse after the
  /// window's first m moves, solved with the LU factors of B's leading
  /// m x m block (their window's B); false when it is singular to working
  /// precision.
  bool solve_window_rows(CorrectionWork& work, Eigen::Index m) const;
  /// work.lu, work.pivots, work.order: B's LU (partial pivoting) packed
  /// m x m; false when B is singular to working precision or not finite.
  bool factor_window_matrix(CorrectionWork& work, Eigen::Index m) const;
  /// For a cycle held as the window (B's LU, det B = value): whether its
  /// Woodbury update passes the guard's tests of place_accepted_move.
  bool cycle_within_guard(const LuFactors<LookAheadScalar>& lu, double value);
  /// Refactorises the exact matrix (A_after); returns det(A_after) / det
  /// of the matrix before, from the two log|det|.
  double refactorise_cycle();
  Eigen::Index capacity() const { return Eigen::Index(options().k); }

  DelayedVariant variant_;
  MatrixX<Storage> ainvt_;  // Ainv^T at the last flush, N x N

  // Window, preallocated N x K and K x K (leading dimensions N and K).
  MatrixX<LookAheadScalar> columns_;   // A' = [a'_1 .. a'_m], the new columns
  MatrixX<LookAheadScalar> w_;         // W = (V^T Ainv)^T
  MatrixX<LookAheadScalar> binv_;      // B^{-1}
  MatrixX<LookAheadScalar> wa_table_;  // W^T A' (entry (j, i) = w_j^T a'_i)
  MatrixX<LookAheadScalar> b_;         // B (naive)
  LogDet log_det_b_;        // log|det B| and sign (naive)
  std::vector<Eigen::Index> electron_;      // k_i
  std::vector<Eigen::Index> last_move_of_;  // per electron: its last move in the window, or -1
  std::vector<double> w_norm2_;  // ||w_j||^2 per window move (the growth guard)
  std::vector<double> moved_norm2_;  // ||cur_j / rho_j||^2 per window move (the flush's split)

  // The pending proposal's look-ahead quantities (valid between ratio() and
  // accept()/reject()).
  double pending_ratio_ = 0.0;
  double pending_pivot_ = 0.0;  // cur^T a', the direct ratio (both variants)
  double cur_norm_ = 0.0;       // ||cur|| of the move being placed
  LookAheadScalar d_{};              // B's new diagonal entry
  LookAheadScalar row_dot_column_{};  // r^T a', B's new diagonal as the table stores it
  LogDet log_det_b_new_;  // log|det B'| (naive)
  // a' and r, N: views of the window's next slot (A' and W), where an
  // accepted move leaves them without a copy (point_pending_at_slot).
  Eigen::Map<VectorX<LookAheadScalar>> column_{nullptr, 0};
  Eigen::Map<VectorX<LookAheadScalar>> row_{nullptr, 0};
  VectorX<LookAheadScalar> cur_row_;  // the current row k of the inverse, N
  VectorX<LookAheadScalar> ra_;       // A'^T r, K
  VectorX<LookAheadScalar> wa_;       // W^T a', K
  VectorX<LookAheadScalar> b_col_;    // b, K
  VectorX<LookAheadScalar> c_row_;    // c, K
  VectorX<LookAheadScalar> t_;        // B^{-1} b, K
  VectorX<LookAheadScalar> q_;        // B^{-T} c, K
  MatrixX<LookAheadScalar> bordered_;     // naive: LU workspace, K x K
  std::vector<int> pivots_;    // naive: LU pivots

  CorrectionWork flush_work_;
};

/// Builds the delayed strategy for options.precision: double -> <double,
/// double>, float -> <float, float>, mixed -> <float, double>.
std::unique_ptr<DeterminantUpdater> make_delayed_update(const UpdaterOptions& options);

}  // namespace slaterlab
