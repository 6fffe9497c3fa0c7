// RejectLeavesStateUnchanged: the check (declared in checks.hpp), with the
// bitwise snapshots of what a strategy exposes.

#include <fmt/format.h>

#include <cstring>

#include "verify/properties/check_steps.hpp"
#include "verify/properties/checks.hpp"

namespace slaterlab::properties {
namespace {

struct Snapshot {
  LogDet log_det;
  MaintainedState state;
  UpdaterCounters counters;
};

Snapshot snapshot(const DeterminantUpdater& up) {
  return {up.log_det(), up.maintained(), up.counters()};
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * std::size_t(a.size())) == 0;
}

/// Bit-for-bit equality of what a strategy exposes (the breakdown counter
/// excepted: ratio() legitimately counts a breakdown it reports). Returns
/// what differs, or "" when nothing does.
std::string state_difference(const Snapshot& x, const Snapshot& y) {
  if (std::memcmp(&x.log_det.log_abs, &y.log_det.log_abs, sizeof(double)) != 0 ||
      x.log_det.sign != y.log_det.sign) {
    return fmt::format("log|det| {} (sign {}) became {} (sign {})", x.log_det.log_abs,
                       x.log_det.sign, y.log_det.log_abs, y.log_det.sign);
  }
  if (x.state.inverse.has_value() != y.state.inverse.has_value())
    return "inverse appeared/vanished";
  if (x.state.inverse && !same_bits(*x.state.inverse, *y.state.inverse)) return "inverse changed";
  if (x.state.qr.has_value() != y.state.qr.has_value()) return "QR factors appeared/vanished";
  if (x.state.qr) {
    if (!same_bits(x.state.qr->q, y.state.qr->q)) return "Q changed";
    if (!same_bits(x.state.qr->r, y.state.qr->r)) return "R changed";
    if (x.state.qr->column_of != y.state.qr->column_of) return "column permutation changed";
  }
  if (x.counters.recomputes != y.counters.recomputes) return "recompute counter changed";
  for (const auto& [name, count] : x.counters.events)  // a flush, a split
    if (y.counters.event(name) != count) return name + " counter changed";
  for (const auto& [name, count] : y.counters.events)
    if (x.counters.event(name) != count) return name + " counter changed";
  return "";
}

}  // namespace

// A rejected proposal leaves the state bit-for-bit unchanged, at every point
// of a sequence, and a fully rejected sequence leaves the state of reset().
std::optional<PropertyFailure> check_reject(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t) {
  const Property p = Property::reject_leaves_state_unchanged;
  auto up = make_strategy(name, options, options.recompute_every);
  up->reset(c.initial);
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const CaseMove& mv = c.moves[i];
    if (mv.accept) {
      up->ratio(mv.electron, mv.column);
      accept_move(*up, t.after[i], options.precision, c.n());
      continue;
    }
    const Snapshot before = snapshot(*up);
    up->ratio(mv.electron, mv.column);
    up->reject();
    const std::string diff = state_difference(before, snapshot(*up));
    if (!diff.empty()) {
      return failure(p, fmt::format("move {} (k={}) rejected: {}", i, mv.electron, diff));
    }
  }

  auto fresh = make_strategy(name, options, options.recompute_every);
  fresh->reset(c.initial);
  const Snapshot initial = snapshot(*fresh);
  for (const CaseMove& mv : c.moves) {
    fresh->ratio(mv.electron, mv.column);
    fresh->reject();
  }
  fresh->flush();
  const std::string diff = state_difference(initial, snapshot(*fresh));
  if (!diff.empty()) {
    return failure(p, fmt::format("all {} moves rejected, then flush(): {}", c.moves.size(), diff));
  }
  return std::nullopt;
}

}  // namespace slaterlab::properties
