#pragma once
// The five per-case checks, one file each (ratio_check.cpp,
// log_det_check.cpp, reject_check.cpp, breakdown_check.cpp,
// cycle_check.cpp), reached only through check_case() (check_case.hpp),
// which validates the case and the configuration first.
//
// Each replays strategy `name` with `options` through case `c` beside the
// oracle's trace `t`, returns the first violation with its figures (or
// nothing), and adds to `stats` what it compared. A SingularMatrixError
// beyond the error model is thrown on as SingularOutsideErrorModel (check_steps.hpp);
// any other exception of the strategy propagates.

#include <optional>
#include <string>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/properties/case.hpp"
#include "verify/properties/oracle.hpp"
#include "verify/properties/property.hpp"

namespace slaterlab::properties {

/// RatiosMatchOracle: every ratio is finite, and within the error model's
/// bound wherever that bound is valid.
std::optional<PropertyFailure> check_ratios(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t, CheckStats& stats);
/// LogDetAndResidualsMatchOracle: after the sequence and flush(), log|det|,
/// its sign and the maintained state's residuals.
std::optional<PropertyFailure> check_log_det_and_residuals(const std::string& name,
                                                           const UpdaterOptions& options,
                                                           const Case& c, const CaseTrace& t,
                                                           CheckStats& stats);
/// RejectLeavesStateUnchanged: bit for bit (compares on every case).
std::optional<PropertyFailure> check_reject(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t);
/// NearSingularIsBreakdown: probes after the prefix, with a threshold
/// derived from the model (vacuous when the model makes no claim there).
std::optional<PropertyFailure> check_near_singular(const std::string& name,
                                                   const UpdaterOptions& options, const Case& c,
                                                   const CaseTrace& t, CheckStats& stats);
/// CycleRatioMatchesOracle: every cycle's ratio against the cycle model.
std::optional<PropertyFailure> check_cycles(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t, CheckStats& stats);

}  // namespace slaterlab::properties
