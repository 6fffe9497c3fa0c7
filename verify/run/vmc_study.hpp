#pragma once
// The VMC part of a study (docs/vmc.md): every [[vmc]] run samples
// N fermions in a harmonic trap, and its energy is compared, with blocked
// error bars, against the exact E(alpha) and against a reference run on
// independent streams (analytic orbitals, particle-by-particle, double
// precision). Each walker can also be shadowed, on the same random streams,
// by an analytic sm-double twin, to find where its decisions part.

#include <vector>

#include "slaterlab/strategies/sampling/vmc.hpp"

#include "verify/inputs/config.hpp"
#include "verify/store/hdf5_store.hpp"
#include "verify/run/run_report.hpp"

namespace slaterlab {

/// The run of `runs` that serves as `run`'s reference, or -1: same N, alpha,
/// omega and step, analytic orbitals, pbp, a double-precision strategy. A run
/// that is itself of that kind has no reference.
int reference_run_index(const std::vector<VmcRunConfig>& runs, std::size_t run);

/// Runs every [[vmc]] run (references first), stores runs and orbital
/// accuracies in `writer`, and adds failed checks (max_z_exact) to `report`.
/// With options.schedule the walkers are spread over processes; a process
/// whose schedule gathers no whole run (writer may then be null) only runs
/// its walkers.
void run_vmc_study(const StudyConfig& study, ResultWriter* writer, const RunOptions& options,
                   RunReport& report);

}  // namespace slaterlab
