#pragma once
// The lockstep runner: every strategy of a study sees the same matrices, the
// same move sequence and the same accept/reject decisions, which the mp
// reference takes from its own ratio and one shared stream of uniforms. So
// errors are comparable move for move, and a strategy's "decision flip"
// (its own ratio would have decided otherwise) is measured, not acted on.

#include <string>
#include <vector>

#include "verify/inputs/config.hpp"
#include "verify/run/run_report.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab {

/// Runs every experiment of `study` and streams the results into `writer`
/// (the caller commits). Throws InputError for bad input, IoError from the
/// store.
RunReport run_study(const StudyConfig& study, ResultWriter& writer, const RunOptions& options);

/// The check delayed_within_guard_of_sm for one guarded strategy against sm
/// at the same precision on the same moves: its max normalised ratio error
/// within F of sm's, its worst log-det error within F max(sm's, n_eps)
/// (n_eps = N eps, one rounding per column: below it sm's error is luck, not
/// a scale). F is the strategy's own rounding factor, its traits'
/// rounding model (for delayed the growth guard's 16 sqrt(K + 1),
/// docs/delayed-updates.md). One message per violation.
std::vector<std::string> compare_delayed_with_sm(const StrategySummary& delayed,
                                                 const StrategySummary& sm,
                                                 const std::string& sm_label, double factor,
                                                 double n_eps);

/// The lockstep experiments of run_study only (no VMC runs).
RunReport run_experiments(const StudyConfig& study, ResultWriter& writer, const RunOptions& options);

}  // namespace slaterlab
