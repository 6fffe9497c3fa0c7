#pragma once
// Which workload kinds exist and how one is built: the built-in kinds
// (generated_workloads.hpp, walk_workloads.hpp, "replay") and those a user
// registers. A new kind is one file holding its Workload class and a
// factory, plus one register_workload() call (docs/extending.md;
// tests/extending/toy_workload.cpp is one); run, regress, mpirun and table
// then take it like any other (fuzz and bench draw their own matrices).

#include <memory>
#include <string>
#include <vector>

#include "verify/inputs/workload.hpp"

namespace slaterlab {

/// Builds the workload. Throws std::invalid_argument with a one-line message
/// naming the bad value (an unknown kind lists the valid ones). Adversarial
/// needs n >= chain + 1, and n >= chain + 2 when hold > 0.
std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec);

/// Adds a kind after the built-in ones: make_workload(spec) with spec.kind ==
/// kind.name checks the common fields (validate_workload_fields) and calls
/// kind.make. Throws std::invalid_argument for an empty or taken name
/// ("replay" included) or an empty factory. Not thread-safe: register
/// before running.
void register_workload(WorkloadKind kind);

/// The valid `kind` values of workloads that make single moves from the
/// spec alone, in a stable order (the built-in kinds first). The kinds that
/// read a file (known_file_workloads(), and "replay") are valid too and not
/// listed here.
std::vector<std::string> known_workloads();

/// The valid `kind` values of workloads that read spec.file ("molecule").
std::vector<std::string> known_file_workloads();

/// The valid `kind` values of workloads that make update cycles (next_cycle).
std::vector<std::string> known_cycle_workloads();

}  // namespace slaterlab
