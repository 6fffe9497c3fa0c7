#pragma once
// The properties every determinant-update strategy must satisfy: their
// names, the figures of a violation and how much a check compared.
//
// - to_string() gives the test names; parse_property() throws
//   std::invalid_argument with the closest name for an unknown one.
// - applies(p, c): CycleRatioMatchesOracle is checked on cases with update
//   cycles, the others on cases of single proposals; check_case()
//   (check_case.hpp) asserts nothing elsewhere and counts the check as
//   vacuous.
// - CheckStats accumulates (+= over calls) what was actually compared: a
//   check whose precondition or error model makes no claim compares nothing,
//   and a test that counts nothing compared checks nothing.

#include <string>
#include <string_view>
#include <vector>

#include "verify/properties/case.hpp"

namespace slaterlab {

enum class Property {
  ratios_match_oracle,
  log_det_and_residuals_match_oracle,
  reject_leaves_state_unchanged,
  near_singular_is_breakdown,
  cycle_ratio_matches_oracle,
};

/// Every per-case property, in the order check_all checks them.
const std::vector<Property>& all_properties();
/// "RatiosMatchOracle", "LogDetAndResidualsMatchOracle",
/// "RejectLeavesStateUnchanged", "NearSingularIsBreakdown",
/// "CycleRatioMatchesOracle" (the test names).
std::string_view to_string(Property p);
std::vector<std::string> property_names();
/// The property of that name; std::invalid_argument with the closest name
/// otherwise.
Property parse_property(std::string_view name);

/// Whether the property is checked on the case (contract above).
bool applies(Property p, const Case& c);

struct CheckStats;
/// Whether a check of `p` on `c` compared anything, by its `stats` (those of
/// that check alone): a ratio, the log-det or a residual, a breakdown probe,
/// a cycle's ratio; RejectLeavesStateUnchanged compares the state after every
/// rejected move and after the whole sequence rejected, so it compares
/// something on every case with a move that did not end beyond the model.
bool compared_something(Property p, const CheckStats& stats, const Case& c);

struct PropertyFailure {
  std::string property;  // to_string(Property)
  std::string message;   // what failed, with the figures
};

/// How much a check actually compared (accumulated: += over calls).
struct CheckStats {
  int ratios = 0;              // ratios computed
  int ratios_checked = 0;      // ... inside the first-order regime (compared)
  int log_dets_checked = 0;    // final log|det| compared
  int residuals_checked = 0;   // inverse residuals compared
  int breakdowns_checked = 0;  // near-singular probes run (precondition held)
  int vacuous = 0;             // checks whose precondition failed (nothing asserted)
  int cycles = 0;              // update cycles applied
  int cycles_checked = 0;      // ... whose ratio was compared (inside the error model)

  CheckStats& operator+=(const CheckStats& s);
};

}  // namespace slaterlab
