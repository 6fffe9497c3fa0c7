#pragma once
// Delayed (rank-K) Sherman-Morrison-Woodbury updates (seed 004, McDaniel et
// al.), with an O(N m + m^2) look-ahead.
//
// State. Ainv = A0^{-1}, the inverse of the matrix A0 at the last flush (or
// refactorisation), stored TRANSPOSED so that a row of Ainv is a contiguous
// column. The window holds the m < K moves accepted since then, each of a
// different electron (a move of an electron already in the window flushes
// it first, delayed_window.hpp): move i replaced A0's column k_i by a'_i.
// With u_i = a'_i - a_{k_i,0}, U = [u_1 .. u_m] and V = [e_k1 .. e_km], the
// current matrix is exactly A = A0 + U V^T. Woodbury gives the current
// inverse
//   A^{-1} = Ainv - Y B^{-1} W^T,  Y = Ainv U,  W = (V^T Ainv)^T,  B = I_m + W^T U.
// Stored besides Ainv: the new columns A' = [a'_1 .. a'_m], W (the m rows of
// Ainv the window touches), W^T A' (which is B, below), B^{-1} by bordering
// (both variants; the naive one also keeps B), all preallocated at reset
// for m up to K (memory O(N K + K^2)).
//
// Sherman-Morrison's form. Ainv u_i is never formed as Ainv (a'_i - a_k):
// like sm's x = Ainv a' - e_k, every product of Ainv (or of one of its rows)
// with a column of A0 is taken as the identity's, Ainv a_{k,0} = e_k, and
// products with window columns are formed from A'. So
//   Y_i = Ainv a'_i - e_{k_i},   B = I + W^T A' - I = W^T A',
// and c and b below likewise. This is what makes sm self-correcting: the
// updated inverse maps the new column exactly to e_k (up to this update's own
// rounding), whatever the residual of Ainv was, whereas Ainv (a' - a_k) keeps
// Ainv's residual in column k for ever (at kappa = 1e10 with small steps,
// 1e4 times sm's error).
//
// Ratio for a proposal (k, a'), with r = Ainv^T e_k (row k of Ainv): the
// current row of the inverse is formed explicitly, as QMCPACK's DelayedUpdate
// does,
//   c_i = r^T a'_i - delta(k, k_i),  q = B^{-T} c,
//   cur = r - W q   (= (e_k^T A^{-1})^T),   rho = cur^T a'
// (DESIGN.md's e_k^T Ainv a' - (e_k^T Ainv U) B^{-1} (V^T Ainv a')): three
// O(N m) GEMVs and O(m^2); no O(N^2) work. A proposal may move an electron
// that is in the window (delta(k, k_i) = 1 for its move). This direct form
// does not take rho as 1 + r^T (a' - a_k), which relies on A^{-1} a_k = e_k
// holding for the computed inverse: that u-form carried Ainv's residual,
// divided by an earlier window move's |rho|, into every later ratio (an
// exact copy of another column gave rho = -0.037).
//   - incremental (default): rho as above.
//   - naive (the paper's look-ahead): rho = det(B') / det(B), B' = [[B, b],
//     [c^T, d]] from a fresh LU of the (m+1) x (m+1) bordered matrix per
//     proposal (O(m^3)), det(B) kept from the accepted one; for an electron
//     already in the window, b and d are taken against its window column.
//     Same rho to rounding of size eps kappa(B); kept for the benchmark of
//     the paper's scheme.
// Accept: B's new column b_j = w_j^T a' and diagonal d = r^T a'; B^{-1}
// grows by bordering (both variants),
//   B'^{-1} = [[B^{-1} + t q^T / s, -t / s], [-q^T / s, 1 / s]],
//   t = B^{-1} b,  s = cur^T a' (the direct ratio, also in the naive
//   variant: bordering with det(B')/det(B) put |t| |q| times its rounding
//   into B^{-1}),
// O(N m + m^2). The bordered B^{-1} serves the ratios only; the flush solves
// with B itself (below).
//
// The growth guard (delayed_window.hpp). A ratio reads the current row
// cur = r - W q, a sum of m + 1 rows; with rounding errors of random sign it
// rounds by about eps (||r||^2 + sum_j q_j^2 ||w_j||^2)^{1/2}, which is
// large against eps ||cur|| when the terms cancel: a window opened on a
// near-singular inverse (its rows W large, the released rows small; 1e3 on
// iid walks), or B nearly singular over many moves (kappa = 1e10 with small
// steps: B's entries ~ 1e8 while det B ~ 1). Sherman-Morrison keeps cur
// explicitly; its ratio reads it with the rounding of its last update,
// about eps ||cur||. A move whose row sum exceeds kGrowthFactor ||cur||
// does not border: the window as it was is flushed (counted in flushes and
// guard_flushes()) and the move opens a new window against the flushed
// inverse (B = [rho'], rho' its ratio recomputed from it). Near-singular
// and releasing moves are applied alone, and an electron already in the
// window flushes it (place_accepted_move). On healthy walks the windows
// fill: iid Gaussian sweeps, every move accepted, flush after 85 moves on
// average at N = 2048, K = 256 (README "Delayed updates").
//
// Flush (after K accepted moves, on flush(), or by the guard):
//   Z = W B^{-T}  by a solve with B's LU (partial pivoting; B = W^T A' from
//                 the stored table, O(m^3) + 2 TRSMs of N x m x m),
//   Y = Ainv A' - [e_k1 .. e_km]   (GEMM, N x N x m),
//   Ainv^T <- Ainv^T - Z Y^T       (GEMM, N x N x m),
// about 4 N^2 K flops per K moves. Z = W B^{-T} are the window electrons'
// rows of the current inverse; the bordered B^{-1} builds them with the
// rounding of every intermediate window, and after a small ratio and its
// partial release its large entries cancel in Z (10 to 1700 times sm's
// error after iid windows of 64 moves), while LU with partial pivoting is
// backward stable for the final B alone (window_matrix_lu). A B singular to
// working precision (never seen) refactorises instead.
// Rejected moves store nothing and do not flush.
//
// log_det accumulates log|rho| and the sign per accepted move (as sm); a
// refactorisation (reset, the recompute_every cadence, an accepted
// breakdown) takes the LU value and discards the window (the exact current
// matrix already contains it). maintained() forms A^{-1} = Ainv - Z Y^T on
// the side, with the same GEMMs a flush would run, and changes no state.
//
// apply_cycle (an update cycle of m <= K distinct columns): the cycle is
// one Woodbury update of rank m. The window is flushed; then W = the rows
// k_i of the flushed inverse A^{-1} of A_before, A' = the new columns and
// B = W^T A' (= I + V^T A^{-1} U in Sherman-Morrison's form), whose
// determinant is the cycle's ratio det(A_after) / det(A_before): B is
// nonsingular exactly when A_after is, whatever the intermediate matrices.
// The window is then flushed as any other (Z by B's pivoted LU). A ratio
// below the breakdown threshold or a B singular to working precision is a
// breakdown recovered by refactorising A_after. Longer cycles, or cycles
// that replace a column twice, take the default (one update at a time).
// The guard. The cycle's m moves enter the window together, so the growth
// guard and the near-singular and release rules of place_accepted_move
// never saw them; they are applied to the cycle's update as a whole (for
// m = 1 exactly that move's decisions): each new row
// z_j = sum_i (B^{-1})_{ji} w_i must satisfy within_row_guard, its growth
// ||z_j|| ||a'_j|| (z_j^T a'_j = 1: the move's g) and |det B| must stay
// below kGrowthFactor N. A cycle that fails refactorises A_after instead
// (regular: its ratio passed the breakdown test; log|det| from the LU);
// going one update at a time would pass through the intermediates, which a
// cycle may make exactly singular. Without this, a Woodbury update that
// released a near-singular state formed small rows by cancellation and
// kept that state's rounding (sm damps it): on plain cycles at N = 21
// (rank up to 16) the inverse erred up to 880 times sm's, and log|det|
// 16 F (update_cycle_test, PlainCycles). Such cycles are frequent when
// most columns change at once (a sixth of the cycles at N = 21..64, rank
// up to 16; 7 % at rank up to 4): each costs one O(N^3) factorisation.
//
// Precision (Storage is the N x N inverse, Look the look-ahead):
//   - double: Storage = Look = double.
//   - float:  Storage = Look = float, everything in float.
//   - mixed:  Storage = float, Look = double. Refactorisations are done in
//     double and rounded to float (as sm). Everything the look-ahead touches
//     is double: a' is the exact data without rounding,
//     r and W are exact double copies of float rows, A', B^{-1} (and B), the
//     bordering and every dot product / GEMV of the ratio run in double. The
//     flush GEMMs run in float on A' and Z rounded to float.

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

template <class Storage, class Look>
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
    MatrixX<Storage> y;              // Ainv U, N x m
    MatrixX<Look> z;                 // W B^{-T}, N x m
    MatrixX<Storage> z_store;        // Z rounded to Storage (mixed only)
    MatrixX<Storage> columns_store;  // A' rounded to Storage (mixed only)
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
  void open_window(Eigen::Index k, Look pivot);
  /// Borders the window by the pending move, unless the guard refuses
  /// (returns false, nothing changed).
  bool extend_window(Eigen::Index k, Look pivot);
  void store_move(Eigen::Index i, Eigen::Index k);
  /// ainvt <- ainvt - Z Y^T for the current window (m_ > 0); false, with
  /// ainvt unchanged, when B is singular to working precision.
  bool correct(MatrixX<Storage>& ainvt, CorrectionWork& work) const;
  /// work.z = Z = W B^{-T}, the window's rows of the current inverse, solved
  /// with B's LU factors; false when B is singular to working precision.
  bool solve_window_rows(CorrectionWork& work) const;
  /// For a cycle held as the window (B's LU, det B = value): whether its
  /// Woodbury update passes the guard's tests of place_accepted_move.
  bool cycle_within_guard(const LuFactors<Look>& lu, double value);
  /// Refactorises the exact matrix (A_after); returns det(A_after) / det
  /// of the matrix before, from the two log|det|.
  double refactorise_cycle();
  Eigen::Index capacity() const { return Eigen::Index(options().k); }

  DelayedVariant variant_;
  MatrixX<Storage> ainvt_;  // Ainv^T at the last flush, N x N

  // Window, preallocated N x K and K x K (leading dimensions N and K).
  MatrixX<Look> columns_;   // A' = [a'_1 .. a'_m], the new columns
  MatrixX<Look> w_;         // W = (V^T Ainv)^T
  MatrixX<Look> binv_;      // B^{-1}
  MatrixX<Look> wa_table_;  // W^T A' (entry (j, i) = w_j^T a'_i)
  MatrixX<Look> b_;         // B (naive)
  LogDet log_det_b_;        // log|det B| and sign (naive)
  std::vector<Eigen::Index> electron_;      // k_i
  std::vector<Eigen::Index> last_move_of_;  // per electron: its last move in the window, or -1
  std::vector<double> w_norm2_;  // ||w_j||^2 per window move (the growth guard)

  // The pending proposal's look-ahead quantities (valid between ratio() and
  // accept()/reject()).
  double pending_ratio_ = 0.0;
  double pending_pivot_ = 0.0;  // cur^T a', the direct ratio (both variants)
  double cur_norm_ = 0.0;       // ||cur|| of the move being placed
  Look d_{};              // B's new diagonal entry
  LogDet log_det_b_new_;  // log|det B'| (naive)
  VectorX<Look> column_;   // a', N
  VectorX<Look> row_;      // r, N
  VectorX<Look> cur_row_;  // the current row k of the inverse, N
  VectorX<Look> ra_;       // A'^T r, K
  VectorX<Look> wa_;       // W^T a', K
  VectorX<Look> b_col_;    // b, K
  VectorX<Look> c_row_;    // c, K
  VectorX<Look> t_;        // B^{-1} b, K
  VectorX<Look> q_;        // B^{-T} c, K
  MatrixX<Look> bordered_;     // naive: LU workspace, K x K
  std::vector<int> pivots_;    // naive: LU pivots

  CorrectionWork flush_work_;
};

/// Builds the delayed strategy for options.precision: double -> <double,
/// double>, float -> <float, float>, mixed -> <float, double>.
std::unique_ptr<DeterminantUpdater> make_delayed_update(const UpdaterOptions& options);

}  // namespace slaterlab
