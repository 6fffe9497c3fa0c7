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
// - log_det_error_bound(): a bound of |log|det A| - log_det().log_abs|
//   before the long double rounding: the fast reference's own bound, or mp's
//   model 16 N^2 u_mp kappa_1 (the mp tests' model).

#include <Eigen/Core>

#include <cstdint>
#include <optional>
#include <string>

#include "slaterlab/reference/fast_reference.hpp"
#include "slaterlab/reference/mp.hpp"

namespace slaterlab::reference {

enum class ReferenceEngine { mp, fast };

const char* to_string(ReferenceEngine engine);

/// From this N on, "auto" picks the fast engine: the mp reference's reset
/// costs thousands of double LUs, and its moves hundreds of sm moves.
inline constexpr Eigen::Index kFastReferenceMinN = 256;

/// "mp", "fast", or "auto" (fast from kFastReferenceMinN on);
/// std::invalid_argument for anything else.
ReferenceEngine choose_reference_engine(const std::string& setting, Eigen::Index n);

class LockstepReference {
 public:
  LockstepReference(ReferenceEngine engine, int digits, int recompute_every);

  void reset(const Eigen::MatrixXd& a);
  RatioInfo ratio(Eigen::Index k, const Eigen::VectorXd& new_column);
  void accept();
  void reject();

  MpLogDet log_det() const;
  double log_det_error_bound() const;
  Eigen::MatrixXd inverse() const;
  const Eigen::MatrixXd& matrix() const;
  double condition_1() const;
  Eigen::Index size() const { return matrix().rows(); }

  ReferenceEngine engine() const { return engine_; }
  /// Results of a fast engine that came from mp because the fast bound was too large.
  std::int64_t fallbacks() const { return fallbacks_; }

 private:
  /// The mp reference at the current matrix (reset there if it is not).
  MpReference& mp_here() const;

  ReferenceEngine engine_;
  int digits_;
  int recompute_every_;
  mutable std::optional<MpReference> mp_;
  FastReference fast_;
  mutable bool mp_current_ = false;  // fast engine: mp_ stands at fast_'s matrix
  bool mp_pending_ = false;          // fast engine: mp_ holds the pending proposal too
  mutable std::int64_t fallbacks_ = 0;
};

}  // namespace slaterlab::reference
