#pragma once
// Where an accepted move goes in a delayed update's window: the decisions of
// the growth guard and of near-singular moves, one piece of code for the CPU
// DelayedUpdate (delayed_update.hpp, which derives them) and the GPU
// CudaDelayedUpdate (cuda/delayed_cuda_update.hpp). Each implements the
// window operations on its own storage; the decisions, and so the windows
// both form for the same moves, are the same.

#include <Eigen/Core>

#include <cmath>
#include <cstdint>

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

  void reject() final {
    drop_pending();
    proposal_open_ = false;
  }
  void flush() final {
    if (proposal_open_) throw ProtocolError("flush: a ratio() is waiting for accept/reject");
    if (m_ > 0) apply_window();
  }
  /// Accepted moves waiting in the window (0 right after a flush).
  Eigen::Index pending_moves() const { return m_; }
  /// Flushes forced by the growth guard since reset() (also in flushes).
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
    ++mutable_counters().flushes;
  }
  /// Applies the window, counted as a guard flush.
  void guard_flush() {
    apply_window();
    ++guard_flushes_;
  }

  Eigen::Index m_ = 0;  // accepted moves in the window
  bool proposal_open_ = false;

 private:
  /// Ainv <- Ainv - Y B^{-1} W^T for the current window (m_ > 0).
  virtual void correct_flushed_inverse() = 0;
  /// Empties the window (after a flush or a refactorisation).
  virtual void close_window() = 0;

  std::int64_t guard_flushes_ = 0;
};

/// Places an accepted move of electron k (pivot s = cur^T a', the direct
/// ratio; step_growth g = ||cur|| ||a'|| / |s|, the move's own growth as
/// Sherman-Morrison commits it). `Updater` provides kGrowthFactor, size(),
/// pending_moves() (the window's length m), capacity() (K) and
///   open_window(k, s, g)    a window of this one move,
///   extend_window(k, s, g)  border the window; false: the guard refused
///                           and nothing changed,
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
/// terms (the fuzzer found a row of norm 0.55 wrong by 7e-3 that way). So is
/// a release (|s| above kGrowthFactor N): its row shrinks by |s|, which
/// Sherman-Morrison does by scaling and a window by cancellation.
template <class Updater>
void place_accepted_move(Updater& u, Eigen::Index k, double pivot, double step_growth) {
  const double limit = Updater::kGrowthFactor * double(u.size());
  const bool near_singular = step_growth > limit || std::abs(pivot) > limit;
  if (u.pending_moves() == 0) {
    u.open_window(k, pivot, step_growth);
  } else if (near_singular || !u.extend_window(k, pivot, step_growth)) {
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

}  // namespace slaterlab
