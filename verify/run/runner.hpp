#pragma once
// The lockstep runner: every strategy of a study sees the same matrices, the
// same move sequence and the same accept/reject decisions, which the mp
// reference takes from its own ratio and one shared stream of uniforms. So
// errors are comparable move for move, and a strategy's "decision flip"
// (its own ratio would have decided otherwise) is measured, not acted on.

#include "verify/inputs/config.hpp"
#include "verify/run/run_report.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab {

/// Runs every experiment of `study` and streams the results into `writer`
/// (the caller commits). Throws InputError for bad input, IoError from the
/// store.
RunReport run_study(const StudyConfig& study, ResultWriter& writer, const RunOptions& options);

/// The lockstep experiments of run_study only (no VMC runs).
RunReport run_experiments(const StudyConfig& study, ResultWriter& writer, const RunOptions& options);

}  // namespace slaterlab
