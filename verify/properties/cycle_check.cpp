// CycleRatioMatchesOracle: the check (declared in checks.hpp) against the
// cycle model (cycle_model.hpp).

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "verify/properties/check_steps.hpp"
#include "verify/properties/checks.hpp"
#include "verify/properties/cycle_model.hpp"

namespace slaterlab::properties {
namespace {

/// The cycle's exact replaced columns in order of application.
std::vector<ColumnUpdate> cycle_updates(const Case& c, std::size_t first, int length) {
  std::vector<ColumnUpdate> updates;
  for (std::size_t i = first; i < first + std::size_t(length); ++i)
    updates.push_back({c.moves[i].electron, c.moves[i].column});
  return updates;
}

}  // namespace

// Each cycle's ratio matches the oracle's det(A_after) / det(A_before)
// within the cycle model's bound (cycle_model.hpp) wherever it is valid
// (for update-at-a-time cycles: unless the strategy reported a breakdown);
// every ratio is finite; a
// SingularMatrixError only where the model allows it.
std::optional<PropertyFailure> check_cycles(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t, CheckStats& stats) {
  const Property p = Property::cycle_ratio_matches_oracle;
  auto up = make_strategy(name, options, options.recompute_every);
  up->reset(c.initial);
  CycleModel model(storage_epsilon(options.precision), c.n(), t.initial,
                   model_factor(name, options));
  Eigen::MatrixXd current = c.initial;
  std::size_t first = 0;
  for (std::size_t i = 0; i < c.cycles.size(); ++i) {
    const CycleStep& step = t.cycles[i];
    const std::vector<ColumnUpdate> updates = cycle_updates(c, first, c.cycles[i]);
    first += updates.size();
    for (const ColumnUpdate& u : updates) current.col(u.k) = u.column;
    const bool completes = completes_cycle(name, options, updates.size(), step);
    const int m = int(updates.size());
    const ErrorModel::Bound b = model.bound(step, completes, m);
    const auto where = [&] {
      return fmt::format("cycle {} ({} updates, columns {}, {})", i, m,
                         fmt::join(step.columns, " "),
                         completes ? "completed by the strategy" : "one update at a time");
    };
    ++stats.cycles;
    const auto recomputes = up->counters().recomputes;
    CycleRatio r;
    try {
      r = up->apply_cycle(updates);
    } catch (const SingularMatrixError& e) {
      if (!model.singular_allowed(step, completes)) {
        return failure(p, fmt::format("{}: SingularMatrixError although every matrix it forms "
                                      "is regular within the model (kappa_F(A_after) = {:.3e}): "
                                      "{}",
                                      where(), step.kappa_after, e.what()));
      }
      try {  // as the runner does: from the exact matrix after the cycle
        up->reset(current);
      } catch (const SingularMatrixError&) {
        throw SingularOutsideErrorModel{};
      }
      model.restart(step.after);
      continue;
    }
    if (!std::isfinite(r.value)) {
      return failure(p, fmt::format("{}: ratio {} is not finite (breakdown={})", where(), r.value,
                                    r.breakdown));
    }
    // A breakdown where every ratio the strategy forms is, within the model,
    // at least breakdown / (1 - bound) in magnitude (each errs by at most
    // the cycle's bound) is a finding (a state that lost an update, say), not
    // a singular intermediate. One update at a time those are the cycle's
    // per-update ratios; a strategy completing the cycle forms its ratio
    // alone. Any other declared breakdown is counted, and its placeholder
    // ratio (a kernel may return 1) is not judged.
    const double smallest = completes ? double(std::abs(step.rho)) : step.min_step;
    if (r.breakdown && b.valid && b.rel < 1 && smallest * (1 - b.rel) >= options.breakdown) {
      return failure(p, fmt::format("{}: reported a breakdown, but every ratio it forms is "
                                    "regular (the smallest |det A_i / det A_i-1| is {:.3e}, "
                                    "threshold {:.3e}, bound {:.3e})",
                                    where(), smallest, options.breakdown, b.rel));
    }
    if (b.valid && !r.breakdown) {
      ++stats.cycles_checked;
      const double err = rel_error(r.value, step.rho);
      if (!(err <= b.rel)) {
        return failure(p, fmt::format("{}: rho={:.17g} oracle={:.17g} rel.err={:.3e} > "
                                      "bound={:.3e} (kappa={:.3e}, beta={:.3e}, breakdown={})",
                                      where(), r.value, double(step.rho), err, b.rel, b.kappa,
                                      step.beta, r.breakdown));
      }
    }
    model.applied(step, completes, m, up->counters().recomputes > recomputes);
  }
  return std::nullopt;
}

}  // namespace slaterlab::properties
