#pragma once
// Where an accepted move goes in a delayed update's window: the decisions of
// the growth guard and of near-singular moves, one piece of code for the CPU
// DelayedUpdate (delayed_update.hpp; derived in docs/delayed-updates.md) and the GPU
// CudaDelayedUpdate (cuda/delayed_cuda_update.hpp). Each implements the
// window operations on its own storage; the decisions, and so the windows
// both form for the same moves, are the same.

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "slaterlab/strategies/determinant/linalg.hpp"
#include "slaterlab/strategies/determinant/updater_base.hpp"

namespace slaterlab {

/// What the CPU and GPU delayed updaters share besides the decisions below:
/// the proposal protocol (reject, flush, and a flush refused while a ratio
/// waits for its decision), the window's length m and the flushes, counted
/// as the guard's when it forced them. A derived updater keeps the window
/// itself and provides the two operations a flush is made of.
class DelayedWindowUpdater : public UpdaterBase {
 public:
  using UpdaterBase::UpdaterBase;

  /// The guard's factor: a window may round the current row a ratio reads
  /// up to kGrowthFactor times one rounding of that row (within_row_guard),
  /// its rows may grow by it before a flush (within_flush_guard), and a
  /// move is near-singular or a release when its growth or |ratio| exceeds
  /// kGrowthFactor N (place_accepted_move). Why 16: it leaves healthy
  /// windows their length, while a window opened on a near-singular inverse
  /// exceeds it many-fold at its second move (the measurements of both:
  /// docs/delayed-updates.md, rule 4), and the walks of
  /// delayed_update_test's FilledWindowsFlushWithinTheGuardOfSm keep their
  /// flushed inverses within a few times sm's error.
  static constexpr double kGrowthFactor = 16;

  /// The growth guard's test for a move that would border a window of m
  /// moves. Its current row cur = r - W q (q = B^{-T} c) sums m + 1 rows;
  /// with rounding errors of random sign the sum rounds by about
  /// eps (||r||^2 + sum_j q_j^2 ||w_j||^2)^{1/2} = eps sqrt(terms2), which
  /// is large against eps ||cur|| exactly when the terms cancel.
  /// Sherman-Morrison keeps that row explicitly: its ratio reads it with the
  /// rounding of its last update, about eps ||cur||. The move may border
  /// when sqrt(terms2) <= kGrowthFactor ||cur||; m does not enter, so a
  /// window's ratios stay within kGrowthFactor of sm's own rounding however
  /// long it grows.
  static bool within_row_guard(double terms2, double cur_norm) {
    return std::sqrt(terms2) <= kGrowthFactor * cur_norm;
  }

  /// The flush's test for a window whose rows of the flushed inverse W
  /// (||W||_F^2 = w_norm2) are the rows Z of the current inverse
  /// (||Z||_F^2 = z_norm2): one Woodbury flush when they grew by at most
  /// kGrowthFactor; otherwise a prefix of the window that passes this test,
  /// then its other moves one by one in Sherman-Morrison's form. The
  /// flush forms each row of the new inverse as a sum of m + 1 rows, which
  /// rounds it many times over (docs/delayed-updates.md, rule 7, measures
  /// how many); Sherman-Morrison rounds each of the window's states once.
  /// That is within the guard while the flushed state is of the size of
  /// those it follows, not when it is much larger (a near-singular state
  /// not yet released), whose rounding becomes a backward error in every
  /// column that its release does not remove.
  static bool within_flush_guard(double z_norm2, double w_norm2) {
    return z_norm2 <= kGrowthFactor * kGrowthFactor * w_norm2;
  }
  /// within_flush_guard for the window's first p moves: z_norm2 the
  /// squared Frobenius norm of their rows now, w_norm2[i] = ||w_i||^2.
  static bool prefix_within_flush_guard(double z_norm2, const std::vector<double>& w_norm2,
                                        Eigen::Index p) {
    double w2 = 0.0;
    for (Eigen::Index i = 0; i < p; ++i) w2 += w_norm2[std::size_t(i)];
    return within_flush_guard(z_norm2, w2);
  }

  void reject() final {
    drop_pending();
    proposal_open_ = false;
  }
  void flush() final {
    if (proposal_open_) throw ProtocolError("flush: a ratio() is waiting for accept/reject");
    if (m_ > 0) apply_window();
  }
  LogDet log_det() const final { return log_det_; }

  /// Accepted moves waiting in the window (0 right after a flush).
  Eigen::Index pending_moves() const { return m_; }
  /// Flushes forced by the growth guard since reset() (also counted as kFlushEvent).
  std::int64_t guard_flushes() const { return guard_flushes_; }

 protected:
  /// For reset(): no proposal, an empty window, no guard flush yet.
  void restart_protocol() {
    proposal_open_ = false;
    guard_flushes_ = 0;
    m_ = 0;
  }
  /// Applies the window to the flushed inverse and empties it.
  void apply_window() {
    correct_flushed_inverse();
    close_window();
    mutable_counters().count(kFlushEvent);
  }
  /// Applies the window, counted as a guard flush.
  void guard_flush() {
    apply_window();
    ++guard_flushes_;
  }
  /// The start of accept(): commits the pending move with ratio rho to the
  /// protocol and to log|det|. False when it was a breakdown or the periodic
  /// recompute was due: the updater has refactorised and the move is in the
  /// exact matrix already, with no window to place it in.
  bool commit_accepted(double rho) {
    proposal_open_ = false;
    if (commit_pending()) {
      refactorise();
      return false;
    }
    log_det_.log_abs += std::log(std::abs(rho));
    if (rho < 0) log_det_.sign = -log_det_.sign;
    return true;
  }

  Eigen::Index m_ = 0;  // accepted moves in the window
  bool proposal_open_ = false;
  LogDet log_det_;      // log|det| of the current matrix

 private:
  /// Inverts matrix() afresh (log_det_ from its LU) and empties the window.
  virtual void refactorise() = 0;
  /// Ainv <- Ainv - Y B^{-1} W^T for the current window (m_ > 0).
  virtual void correct_flushed_inverse() = 0;
  /// Empties the window (after a flush or a refactorisation).
  virtual void close_window() = 0;

  std::int64_t guard_flushes_ = 0;
};

/// Places an accepted move of electron k (pivot s = cur^T a', the direct
/// ratio; step_growth g = ||cur|| ||a'|| / |s|, the move's own growth as
/// Sherman-Morrison commits it). `Updater` provides kGrowthFactor, size(),
/// pending_moves() (the window's length m), capacity() (K),
/// in_window(k) (electron k has a move in the window) and
///   open_window(k, s)       a window of this one move,
///   extend_window(k, s)     border the window; false: the guard
///                           (within_row_guard) refused and nothing changed,
///   guard_flush()           apply the window, counted as a guard flush,
///   reopen_window(k)        after a guard flush, open a window with the
///                           move against the flushed inverse (its ratio
///                           recomputed from it); false when that ratio is
///                           zero or not finite and the updater refactorised
///                           instead,
///   apply_window()          apply the window (a full one).
///
/// A near-singular move (g above kGrowthFactor N: |cos(cur, a')| = 1 / g
/// below 1 / (kGrowthFactor N), which random directions reach with
/// probability ~0.05 / sqrt(N)) is applied alone, in Sherman-Morrison's form:
/// the window before it is flushed, and so is the window of this one move.
/// Sherman-Morrison damps the rounding committed at a near-singular state in
/// the exact update that releases it, and forms a released row by scaling
/// (x_k / rho); a window holding both applies them as one correction, whose
/// products of the near-singular inverse's rows make small rows from large
/// terms (docs/delayed-updates.md, rule 6, has the case the fuzzer found). So is
/// a release (|s| above kGrowthFactor N): its row shrinks by |s|, which
/// Sherman-Morrison does by scaling and a window by cancellation.
///
/// A window holds each electron once: a move of an electron already in it
/// flushes it first. The window's rows W of one electron are the same
/// flushed row, so B then has rows that differ only by the identity's unit
/// vectors, and its bordered inverse loses digits in q that no cancellation
/// in cur shows (docs/delayed-updates.md, rule 5, measures the loss).
/// Particle-by-particle sweeps never repeat an electron within K <= N moves.
template <class Updater>
void place_accepted_move(Updater& u, Eigen::Index k, double pivot, double step_growth) {
  const double limit = Updater::kGrowthFactor * double(u.size());
  const bool near_singular = step_growth > limit || std::abs(pivot) > limit;
  if (u.pending_moves() == 0) {
    u.open_window(k, pivot);
  } else if (near_singular || u.in_window(k) || !u.extend_window(k, pivot)) {
    // Apply the window as it was, and open a new one with this move against
    // the flushed inverse.
    u.guard_flush();
    if (!u.reopen_window(k)) return;
  }
  if (near_singular && u.pending_moves() < u.capacity()) {
    u.guard_flush();
    return;
  }
  if (u.pending_moves() == u.capacity()) u.apply_window();
}

/// The flush of a window of m >= 2 moves, for the CPU and GPU updaters
/// alike: one Woodbury update when the window's rows Z stayed within
/// within_flush_guard of its rows W (||W||_F^2 = the sum of w_norm2 over
/// the moves); otherwise (docs/delayed-updates.md, rule 7) the longest
/// prefix of moves found within it goes as a window and the others one by
/// one in Sherman-Morrison's form. The rows grow at the move that
/// approaches a near-singular state, usually one of the last (a release or
/// a full window flushes soon after it), so the prefix is first the moves
/// before the last one whose own row grew beyond the guard (moved_norm2:
/// ||cur / rho||^2 just after move i), and else searched from the end in
/// doubling steps, then by bisection: one solve with B's leading p x p
/// block each. The flush provides, for the window's first p moves,
///   solve(p)       Z = W B^{-T} of their window; false when that block of
///                  B is singular to working precision,
///   z_norm2(p)     ||Z||_F^2 of the last solve,
///   woodbury(p)    Ainv^T -= Z Y^T with the last solve's Z,
///   singly(first)  the moves from `first` on, one by one as sm applies
///                  them; false when a pivot is 0 or not finite.
/// False (the inverse then to be discarded) when a solve or singly is.
template <class Solve, class ZNorm2, class Woodbury, class Singly>
bool flush_window(Eigen::Index m, const std::vector<double>& w_norm2,
                  const std::vector<double>& moved_norm2, Solve&& solve, ZNorm2&& z_norm2,
                  Woodbury&& woodbury, Singly&& singly) {
  const auto beyond_guard = [&](Eigen::Index p) {
    return !DelayedWindowUpdater::prefix_within_flush_guard(z_norm2(p), w_norm2, p);
  };
  if (!solve(m)) return false;
  if (!beyond_guard(m)) {
    woodbury(m);
    return true;
  }
  Eigen::Index within = 1;
  Eigen::Index beyond = m;
  Eigen::Index solved = m;
  Eigen::Index last = m - 1;
  while (last > 0 && DelayedWindowUpdater::within_flush_guard(moved_norm2[std::size_t(last)],
                                                              w_norm2[std::size_t(last)]))
    --last;
  if (last > 1) {
    if (!solve(last)) return false;
    solved = last;
    beyond = last;
    if (!beyond_guard(last)) within = last;
  } else if (last == 1) {
    beyond = 2;  // the first move's row grew: all of them one by one
  }
  for (Eigen::Index step = 1; beyond - within > 1;) {
    const Eigen::Index p = within > 1 ? (within + beyond) / 2 : std::max(within + 1, beyond - step);
    if (!solve(p)) return false;
    solved = p;
    if (beyond_guard(p)) {
      beyond = p;
      step *= 2;
    } else {
      within = p;
    }
  }
  if (within == 1) return singly(0);
  if (solved != within && !solve(within)) return false;
  woodbury(within);
  return singly(within);
}

/// B = I + W^T U of a window of m moves (distinct electrons), LU-factorised
/// (partial pivoting), for the flush's Z = W B^{-T}; nullopt when B is
/// singular to working precision or not finite. B comes from the window's
/// table W^T A' (entry (i, j) = w_i^T a'_j, leading dimension ld) in
/// Sherman-Morrison's form (docs/delayed-updates.md): w_i^T u_j = w_i^T a'_j
/// minus w_i^T a_{k_j,0}, taken as the identity's delta(i, j), so
/// B = W^T A' exactly. Entry for entry this is the bordering's b, c and d,
/// so B is the matrix whose bordered inverse gave the window's ratios.
///
/// Why a solve and not that bordered inverse: bordering is Sherman-Morrison
/// on B, move by move, and keeps the rounding of every intermediate window;
/// after a small ratio and its partial release (frequent on long
/// all-accepted walks) the bordered B^{-1} has large entries that the final
/// rows W B^{-T} cancel, and a flush through it erred 10 to 1700 times sm's
/// inverse on iid Gaussian walks (N = 128, K = 64; delayed_update_test,
/// FilledWindowsFlushWithinTheGuardOfSm). LU with partial pivoting is
/// backward stable for the final B alone: with its triangles applied one
/// after the other, the flushed inverse's error over sm's has median 0.97
/// on 200 such walks (docs/delayed-updates.md, rule 3; B^{-1} formed whole
/// from it: 0.3 to 13 times on 12 walks).
template <class T>
std::optional<LuFactors<T>> window_matrix_lu(const T* wa, Eigen::Index ld, Eigen::Index m) {
  MatrixX<T> b(m, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = 0; i < m; ++i) b(i, j) = wa[i + j * ld];
  try {
    return lu_factor<T>(std::move(b));
  } catch (const SingularMatrixError&) {
    return std::nullopt;
  }
}

}  // namespace slaterlab
