// RatiosMatchOracle: the check (declared in checks.hpp; the bound is the
// error model's, error_model.hpp).

#include <fmt/format.h>

#include <cmath>

#include "verify/properties/check_steps.hpp"
#include "verify/properties/checks.hpp"
#include "verify/properties/error_model.hpp"

namespace slaterlab::properties {

// Ratios agree with the oracle within the derived bound
// (1 + m) c N eps kappa_max / (1 - .), at every step of every sequence; every
// ratio is finite.
std::optional<PropertyFailure> check_ratios(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t, CheckStats& stats) {
  const Property p = Property::ratios_match_oracle;
  auto up = make_strategy(name, options, options.recompute_every);
  up->reset(c.initial);
  ErrorModel model = make_model(name, options, c, t);
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const CaseMove& mv = c.moves[i];
    const OracleStep& o = t.steps[i];
    const Ratio r = up->ratio(mv.electron, mv.column);
    ++stats.ratios;
    if (!std::isfinite(r.value)) {
      return failure(
          p, fmt::format("move {} (k={}): ratio {} is not finite", i, mv.electron, r.value));
    }
    const auto b = model.ratio_bound(o);
    if (b.valid) {
      ++stats.ratios_checked;
      const double err = rel_error(r.value, o.rho);
      if (!(err <= b.rel)) {
        return failure(p, fmt::format("move {} (k={}, m={}): rho={:.17g} oracle={:.17g} "
                                      "rel.err={:.3e} > bound={:.3e} (kappa_max={:.3e}, "
                                      "eps_m={:.3e})",
                                      i, mv.electron, model.m(), r.value, double(o.rho), err, b.rel,
                                      b.kappa, model.eps_m()));
      }
    }
    if (mv.accept) {
      const auto before = up->counters().recomputes;
      accept_move(*up, t.after[i], options.precision, c.n());
      model.accepted(o, t.after[i], up->counters().recomputes > before);
    } else {
      up->reject();
    }
  }
  return std::nullopt;
}

}  // namespace slaterlab::properties
