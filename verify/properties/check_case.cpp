// Checking a property of a strategy on a case: validation and dispatch to
// the five checks (contract in check_case.hpp).

#include "verify/properties/check_case.hpp"

#include <exception>

#include "verify/properties/check_steps.hpp"
#include "verify/properties/checks.hpp"

namespace slaterlab {

std::optional<PropertyFailure> check_case(Property property, const std::string& strategy,
                                          const UpdaterOptions& options, const Case& c,
                                          const CaseTrace& trace, CheckStats* stats) {
  validate_case(c);
  if (property == Property::near_singular_is_breakdown) validate_probe(c);
  make_updater(strategy, options);  // a bad configuration is bad input, not a failure
  CheckStats local;
  CheckStats& s = stats ? *stats : local;
  // A size the configuration declares it does not take (an external
  // kernel's min_n, max_n, supports()) is no case of it, as a case outside
  // a property is none of that property.
  const auto& refusal = strategy_traits(strategy).size_refusal;
  // A whole-cycle-only kernel (no ratio, accept or reject) has no single
  // moves to check: only the cycle property is one of its cases.
  const bool moves = strategy_traits(strategy, options).single_moves;
  if (!applies(property, c) || (refusal && !refusal(c.n(), options).empty()) ||
      (!moves && property != Property::cycle_ratio_matches_oracle)) {
    ++s.vacuous;
    return std::nullopt;
  }
  try {
    switch (property) {
      case Property::ratios_match_oracle:
        return properties::check_ratios(strategy, options, c, trace, s);
      case Property::log_det_and_residuals_match_oracle:
        return properties::check_log_det_and_residuals(strategy, options, c, trace, s);
      case Property::reject_leaves_state_unchanged:
        return properties::check_reject(strategy, options, c, trace);
      case Property::near_singular_is_breakdown:
        return properties::check_near_singular(strategy, options, c, trace, s);
      case Property::cycle_ratio_matches_oracle:
        return properties::check_cycles(strategy, options, c, trace, s);
    }
  } catch (const properties::SingularOutsideErrorModel&) {
    ++s.vacuous;
    return std::nullopt;
  } catch (const std::exception& e) {
    // Valid input (a matrix regular to working precision, the protocol
    // followed) must not make a strategy throw.
    return properties::failure(property, std::string("the strategy threw: ") + e.what());
  }
  return std::nullopt;
}

std::optional<PropertyFailure> check_case(Property property, const std::string& strategy,
                                          const UpdaterOptions& options, const Case& c,
                                          CheckStats* stats) {
  return check_case(property, strategy, options, c, *trace_case(c), stats);
}

std::optional<PropertyFailure> check_all(const std::string& strategy, const UpdaterOptions& options,
                                         const Case& c, const CaseTrace& trace, CheckStats* stats) {
  for (Property p : all_properties())
    if (auto f = check_case(p, strategy, options, c, trace, stats)) return f;
  return std::nullopt;
}

}  // namespace slaterlab
