// The properties' names and the tally of what was compared (contract in
// property.hpp).

#include "verify/properties/property.hpp"

#include <stdexcept>

#include "verify/inputs/suggest.hpp"

namespace slaterlab {

const std::vector<Property>& all_properties() {
  static const std::vector<Property> all = {
      Property::ratios_match_oracle, Property::log_det_and_residuals_match_oracle,
      Property::reject_leaves_state_unchanged, Property::near_singular_is_breakdown,
      Property::cycle_ratio_matches_oracle};
  return all;
}

bool applies(Property p, const Case& c) {
  return (p == Property::cycle_ratio_matches_oracle) == c.has_cycles();
}

std::string_view to_string(Property p) {
  switch (p) {
    case Property::ratios_match_oracle:
      return "RatiosMatchOracle";
    case Property::log_det_and_residuals_match_oracle:
      return "LogDetAndResidualsMatchOracle";
    case Property::reject_leaves_state_unchanged:
      return "RejectLeavesStateUnchanged";
    case Property::near_singular_is_breakdown:
      return "NearSingularIsBreakdown";
    case Property::cycle_ratio_matches_oracle:
      return "CycleRatioMatchesOracle";
  }
  return "?";
}

std::vector<std::string> property_names() {
  std::vector<std::string> names;
  for (Property p : all_properties()) names.emplace_back(to_string(p));
  return names;
}

Property parse_property(std::string_view name) {
  for (Property p : all_properties())
    if (to_string(p) == name) return p;
  throw std::invalid_argument("unknown property '" + std::string(name) + "'" +
                              suggestion_suffix(name, property_names()));
}

bool compared_something(Property p, const CheckStats& stats, const Case& c) {
  switch (p) {
    case Property::ratios_match_oracle: return stats.ratios_checked > 0;
    case Property::log_det_and_residuals_match_oracle:
      return stats.log_dets_checked > 0 || stats.residuals_checked > 0;
    case Property::reject_leaves_state_unchanged: return !c.moves.empty() && stats.vacuous == 0;
    case Property::near_singular_is_breakdown: return stats.breakdowns_checked > 0;
    case Property::cycle_ratio_matches_oracle: return stats.cycles_checked > 0;
  }
  return false;
}

CheckStats& CheckStats::operator+=(const CheckStats& s) {
  ratios += s.ratios;
  ratios_checked += s.ratios_checked;
  log_dets_checked += s.log_dets_checked;
  residuals_checked += s.residuals_checked;
  breakdowns_checked += s.breakdowns_checked;
  vacuous += s.vacuous;
  cycles += s.cycles;
  cycles_checked += s.cycles_checked;
  return *this;
}

}  // namespace slaterlab
