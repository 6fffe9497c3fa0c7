#pragma once
// The workloads generated from a seed alone (generated_workloads.cpp derives
// each kind and what it guarantees about conditioning): gaussian, randsvd,
// small-step, randsvd-step, adversarial, and the update cycles of
// excitation-cycles.

#include <vector>

#include "verify/inputs/workload.hpp"

namespace slaterlab {

/// The kinds in their documented order (workload_registry.cpp registers them).
std::vector<WorkloadKind> generated_workloads();

}  // namespace slaterlab
