#pragma once
// The lockstep runner's reference: MpReference, or FastReference with mp as
// the fallback for every result the fast one does not trust.
//
// Contract:
// - The protocol and the errors are MpReference's (mp.hpp): reset(A)
//   { ratio(k, a') (accept() | reject()) }*, then log_det(), inverse(),
//   condition_1() at checkpoints.
// - engine fast: each result comes from FastReference when its `trusted`
//   flag is set (fast_reference.hpp). Otherwise an MpReference is reset to
//   the exact current matrix (O(N^3) mp, once per matrix: it then follows
//   the moves until a move is accepted without it) and gives that result;
//   fallbacks() counts those results.
// - Singular matrices and update cycles are mp's alone (mp.hpp's singular
//   state, apply_cycle): assign(), apply_cycle(), and a move accepted onto a
//   matrix that mp finds singular hand the experiment over to mp for good
//   (handed_over(); counted once in fallbacks()). A fast engine never holds
//   a singular matrix, so singular() is mp's.
// - log_det_error_bound(): a bound of |log|det A| - log_det().log_abs|
//   before the long double rounding: the fast reference's own bound, or mp's
//   model 16 N^2 u_mp kappa_1 (the mp tests' model).
// - set_mp_reset_notice(f): f(quantity, bound) is called just before a
//   fallback resets mp (an O(N^3) mp LU), with the result the fast reference
//   did not trust ("ratio", "log_det", "inverse") and its bound; the results
//   are the same with or without it.

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/reference/fast_reference.hpp"
#include "slaterlab/reference/mp.hpp"

namespace slaterlab::reference {

enum class ReferenceEngine { mp, fast };

// Inline: the study's plan chooses the engine without linking the engines.
inline const char* to_string(ReferenceEngine engine) {
  return engine == ReferenceEngine::mp ? "mp" : "fast";
}

/// From this N on, "auto" picks the fast engine: the mp reference's reset
/// costs thousands of double LUs, and its moves hundreds of sm moves.
inline constexpr Eigen::Index kFastReferenceMinN = 256;

/// "mp", "fast", or "auto" (fast from kFastReferenceMinN on);
/// std::invalid_argument for anything else.
inline ReferenceEngine choose_reference_engine(const std::string& setting, Eigen::Index n) {
  if (setting == "mp") return ReferenceEngine::mp;
  if (setting == "fast") return ReferenceEngine::fast;
  if (setting == "auto") return n >= kFastReferenceMinN ? ReferenceEngine::fast : ReferenceEngine::mp;
  throw std::invalid_argument("reference: engine must be auto, mp or fast, got '" + setting + "'");
}

class LockstepReference {
 public:
  LockstepReference(ReferenceEngine engine, int digits, int recompute_every);

  void reset(const Eigen::MatrixXd& a);
  void assign(const Eigen::MatrixXd& a);
  CycleInfo apply_cycle(const std::vector<Eigen::Index>& k, const Eigen::MatrixXd& columns);
  bool singular() const;
  RatioInfo ratio(Eigen::Index k, const Eigen::VectorXd& new_column);
  void accept();
  void reject();

  MpLogDet log_det() const;
  double log_det_error_bound() const;
  Eigen::MatrixXd inverse() const;
  /// inverse(), and on the fast engine the double inverse it was refined
  /// from with that one's residual A X_0 - I and its entrywise bound
  /// (FastInverse::start...): `pivot` empty on mp.
  struct InverseWithPivot {
    Eigen::MatrixXd inverse, pivot, pivot_residual;
    double pivot_residual_bound = 0.0;
  };
  InverseWithPivot inverse_with_pivot() const;
  const Eigen::MatrixXd& matrix() const;
  double condition_1() const;
  Eigen::Index size() const { return matrix().rows(); }

  using MpResetNotice = std::function<void(const char* quantity, double bound)>;
  void set_mp_reset_notice(MpResetNotice notice) { notice_ = std::move(notice); }

  ReferenceEngine engine() const { return engine_; }
  /// Results of a fast engine that came from mp because the fast bound was too large.
  std::int64_t fallbacks() const { return fallbacks_; }
  /// A fast engine that handed the experiment over to mp (see above).
  bool handed_over() const { return handed_over_; }

 private:
  /// Whether every call goes to mp: the mp engine, or a fast one handed over.
  bool on_mp() const { return engine_ == ReferenceEngine::mp || handed_over_; }
  /// Hands a fast engine's experiment over to mp, at the current matrix.
  MpReference& hand_over();
  /// The mp reference at the current matrix (reset there if it is not).
  MpReference& mp_here() const;
  /// mp_here() for a fast result not trusted: the notice first, if mp must be reset.
  MpReference& mp_for(const char* quantity, double bound) const;

  ReferenceEngine engine_;
  int digits_;
  int recompute_every_;
  /// The fast log|det|, refactorised once where a carried bound is not trusted.
  FastLogDet fast_log_det() const;
  mutable std::optional<MpReference> mp_;
  mutable FastReference fast_;  // log_det() may refactorise it (a fresh log|det| bound)
  mutable bool mp_current_ = false;  // fast engine: mp_ stands at fast_'s matrix
  bool mp_pending_ = false;          // fast engine: mp_ holds the pending proposal too
  mutable std::int64_t fallbacks_ = 0;
  bool handed_over_ = false;
  MpResetNotice notice_;
};

}  // namespace slaterlab::reference
