#include "slaterlab/reference/lockstep_reference.hpp"

#include <cmath>
#include <stdexcept>

namespace slaterlab::reference {

LockstepReference::LockstepReference(ReferenceEngine engine, int digits, int recompute_every)
    : engine_(engine), digits_(digits), recompute_every_(recompute_every) {
  validate_digits(digits);
  if (engine_ == ReferenceEngine::mp) mp_.emplace(digits, recompute_every);
}

MpReference& LockstepReference::mp_here() const {
  if (!mp_) mp_.emplace(digits_, recompute_every_);
  if (!mp_current_) {
    mp_->reset(fast_.matrix());
    mp_current_ = true;
  }
  return *mp_;
}

MpReference& LockstepReference::mp_for(const char* quantity, double bound) const {
  if (notice_ && !mp_current_) notice_(quantity, bound);
  return mp_here();
}

MpReference& LockstepReference::hand_over() {
  if (!on_mp()) {
    MpReference& mp = mp_here();
    handed_over_ = true;
    ++fallbacks_;
    return mp;
  }
  return *mp_;
}

void LockstepReference::reset(const Eigen::MatrixXd& a) {
  if (on_mp()) return mp_->reset(a);
  mp_current_ = false;
  mp_pending_ = false;
  fast_.reset(a);
}

void LockstepReference::assign(const Eigen::MatrixXd& a) {
  if (!on_mp()) {
    if (!mp_) mp_.emplace(digits_, recompute_every_);
    mp_current_ = true;  // assign() below puts it there
    handed_over_ = true;
    ++fallbacks_;
  }
  mp_->assign(a);
}

CycleInfo LockstepReference::apply_cycle(const std::vector<Eigen::Index>& k,
                                         const Eigen::MatrixXd& columns) {
  return hand_over().apply_cycle(k, columns);
}

bool LockstepReference::singular() const { return on_mp() && mp_->singular(); }

// mp is reset only when a result needs it, and then follows the moves whose
// ratios it computed (an O(N^2) mp update) until a move is accepted without it.
RatioInfo LockstepReference::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  if (on_mp()) return mp_->ratio(k, new_column);
  const FastRatio fast = fast_.ratio(k, new_column);
  if (fast.trusted) return fast.info;
  ++fallbacks_;
  const RatioInfo info = mp_for("ratio", fast.error_bound).ratio(k, new_column);
  mp_pending_ = true;
  return info;
}

void LockstepReference::accept() {
  if (on_mp()) return mp_->accept();
  if (mp_pending_) {
    // mp computed this ratio (the fast one was not trusted): if the move
    // makes the matrix singular to mp, only mp can follow it.
    mp_pending_ = false;
    mp_->accept();
    if (mp_->singular()) {
      fast_.reject();
      handed_over_ = true;
      ++fallbacks_;
      return;
    }
    mp_pending_ = true;
    mp_current_ = true;
  }
  try {
    fast_.accept();  // throws, its state unchanged, for an exactly zero ratio
  } catch (...) {
    // fast could not follow a move mp accepted (an exactly zero ratio that
    // mp did not find singular cannot occur; anything else): mp carries on.
    if (!mp_pending_) throw;
    mp_pending_ = false;
    handed_over_ = true;
    ++fallbacks_;
    return;
  }
  mp_current_ = mp_pending_;
  mp_pending_ = false;
}

void LockstepReference::reject() {
  if (on_mp()) return mp_->reject();
  fast_.reject();
  if (mp_pending_) {
    mp_pending_ = false;
    mp_->reject();
  }
}

// A log|det| carried through accepted ratios adds each ratio's bound to its
// own, so over many moves at large N it can outgrow the trust threshold while
// the matrix is as well conditioned as ever. A fresh factorisation (tens of
// double LUs) restarts the bound; mp (an O(N^3) reset in 50 or 100 digits,
// hours at N = 4096) is asked only where that does not suffice.
FastLogDet LockstepReference::fast_log_det() const {
  FastLogDet fast = fast_.log_det();
  if (!fast.trusted && fast_.log_det_carried() && !fast_.has_pending()) {
    fast_.recompute();
    fast = fast_.log_det();
  }
  return fast;
}

MpLogDet LockstepReference::log_det() const {
  if (on_mp()) return mp_->log_det();
  const FastLogDet fast = fast_log_det();
  if (fast.trusted) return fast.value;
  ++fallbacks_;
  return mp_for("log_det", fast.error_bound).log_det();
}

double LockstepReference::log_det_error_bound() const {
  const MpReference* mp = on_mp() ? &*mp_ : nullptr;
  if (!mp) {
    const FastLogDet fast = fast_log_det();
    if (fast.trusted) return fast.error_bound;
    mp = &mp_for("log_det", fast.error_bound);
  }
  const double n = double(size());
  return 16 * n * n * mp_epsilon(digits_) * mp->condition_1();
}

Eigen::MatrixXd LockstepReference::inverse() const { return inverse_with_pivot().inverse; }

LockstepReference::InverseWithPivot LockstepReference::inverse_with_pivot() const {
  if (on_mp()) return {mp_->inverse(), {}, {}, 0.0};
  FastInverse fast = fast_.inverse();
  // The start's residual is valid for any refined inverse, mp's included.
  InverseWithPivot out{{}, std::move(fast.start), std::move(fast.start_residual),
                       fast.start_residual_bound};
  if (fast.trusted) {
    out.inverse = std::move(fast.inverse);
  } else {
    ++fallbacks_;
    out.inverse = mp_for("inverse", fast.relative_bound).inverse();
  }
  return out;
}

const Eigen::MatrixXd& LockstepReference::matrix() const {
  return on_mp() ? mp_->matrix() : fast_.matrix();
}

double LockstepReference::condition_1() const {
  return on_mp() ? mp_->condition_1() : fast_.condition_1();
}

}  // namespace slaterlab::reference
