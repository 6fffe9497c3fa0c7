#include "slaterlab/strategies/determinant/updater_base.hpp"

#include <cmath>

namespace slaterlab {

void UpdaterBase::begin_reset(const Eigen::MatrixXd& a) {
  if (a.rows() != a.cols() || a.rows() == 0) {
    throw ProtocolError("reset: matrix must be square and non-empty, got " +
                        std::to_string(a.rows()) + "x" + std::to_string(a.cols()));
  }
  a_ = a;
  has_pending_ = false;
  pending_breakdown_ = false;
  accepted_since_recompute_ = 0;
  counters_ = {};
}

const UpdaterBase::Proposal& UpdaterBase::begin_proposal(Eigen::Index k,
                                                         const Eigen::VectorXd& new_column) {
  if (k < 0 || k >= size()) {
    throw ProtocolError("ratio: electron index " + std::to_string(k) + " out of range [0, " +
                        std::to_string(size()) + ")");
  }
  if (new_column.size() != size()) {
    throw ProtocolError("ratio: new column has length " + std::to_string(new_column.size()) +
                        ", expected " + std::to_string(size()));
  }
  pending_.k = k;
  pending_.column = new_column;  // same size after the first move: no allocation
  has_pending_ = true;
  pending_breakdown_ = false;
  return pending_;
}

const UpdaterBase::Proposal& UpdaterBase::pending() const {
  if (!has_pending_) throw ProtocolError("accept/reject without a pending ratio()");
  return pending_;
}

bool UpdaterBase::commit_pending() {
  const Proposal& p = pending();
  a_.col(p.k) = p.column;
  has_pending_ = false;
  ++accepted_since_recompute_;
  const bool due = options_.recompute_every > 0 &&
                   accepted_since_recompute_ >= options_.recompute_every;
  return due || pending_breakdown_;
}

void UpdaterBase::drop_pending() {
  pending();  // protocol check
  has_pending_ = false;
}

Ratio UpdaterBase::classify(double value, bool reported_breakdown) {
  const bool finite = std::isfinite(value);
  const bool breakdown = reported_breakdown || !finite || std::abs(value) < options_.breakdown;
  pending_breakdown_ = breakdown;
  if (breakdown) ++counters_.breakdowns;
  return {finite ? value : 0.0, breakdown};
}

void UpdaterBase::note_recompute() {
  ++counters_.recomputes;
  accepted_since_recompute_ = 0;
}

}  // namespace slaterlab
