#pragma once
// A property check of one fuzz configuration, isolated where the strategy is
// an external kernel: check_case() in a child process (child_process.hpp),
// so that a kernel that kills its process (the signal is named) or does not
// finish within kernel_case_timeout() fails the property like any other
// violation, and the fuzz run goes on. Built-in strategies are checked in
// process. `trace` may be null (the check traces the case itself); `stats`
// may be null, else the child's counts are added to it.

#include <Eigen/Core>

#include <cstddef>
#include <optional>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/properties/case.hpp"
#include "verify/properties/configs.hpp"
#include "verify/properties/oracle.hpp"
#include "verify/properties/property.hpp"

namespace slaterlab {

std::optional<PropertyFailure> check_config(Property p, const PropertyConfig& c,
                                            const UpdaterOptions& o, const Case& property_case,
                                            const CaseTrace* trace, CheckStats* stats);

/// Seconds a child process may take over one case of an external kernel of
/// size n with `moves` moves: twice one call's time-out
/// (kernel_call_timeout) plus 1 ms per move, before it is killed.
double kernel_case_timeout(Eigen::Index n, std::size_t moves);

}  // namespace slaterlab
