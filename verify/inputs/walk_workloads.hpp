#pragma once
// The workloads that walk electrons through an orbital set, so that the
// Slater matrix is A(i, j) = phi_i(r_j) of real orbitals at real positions
// (walk_workloads.cpp): "slater", the harmonic trap's orbitals, and
// "electron-gas", the plane waves of the homogeneous electron gas
// (docs/electron-gas.md), analytic or as float or double B-splines.
// Errors: std::invalid_argument (one line) for an electron-gas n that is
// not a closed shell, naming the nearest ones, or an unknown orbital set.

#include <vector>

#include "verify/inputs/workload.hpp"

namespace slaterlab {

/// The two kinds (workload_registry.cpp registers them).
std::vector<WorkloadKind> walk_workloads();

/// Side of the electron gas's cell for n electrons per spin:
/// (4 pi N_total / 3)^(1/3) rs, N_total = n (polarised) or 2n.
double electron_gas_cell_length(Eigen::Index n, double rs, bool polarised);

}  // namespace slaterlab
