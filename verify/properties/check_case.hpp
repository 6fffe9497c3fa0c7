#pragma once
// Checking a property of a strategy on a case: the entry point of the unit
// suite, `slaterlab fuzz` and the kept corpus.
//
// - check_case(property, strategy, options, case) returns the first
//   violation as a PropertyFailure carrying the figures, or nothing. A
//   strategy that throws fails (unless the property allows a
//   SingularMatrixError); an invalid case or configuration is
//   std::invalid_argument before any check.
// - Where the error model makes no claim nothing is asserted; `stats`
//   (accumulated) says how much was compared.
// - The overload with a trace shares one oracle trace (trace_case) between
//   the strategies checked on a case.

#include <optional>
#include <string>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/properties/case.hpp"
#include "verify/properties/oracle.hpp"
#include "verify/properties/property.hpp"

namespace slaterlab {

std::optional<PropertyFailure> check_case(Property property, const std::string& strategy,
                                          const UpdaterOptions& options, const Case& c,
                                          const CaseTrace& trace, CheckStats* stats = nullptr);
std::optional<PropertyFailure> check_case(Property property, const std::string& strategy,
                                          const UpdaterOptions& options, const Case& c,
                                          CheckStats* stats = nullptr);
/// The first failure over all_properties(), in that order.
std::optional<PropertyFailure> check_all(const std::string& strategy, const UpdaterOptions& options,
                                         const Case& c, const CaseTrace& trace,
                                         CheckStats* stats = nullptr);

}  // namespace slaterlab
