#pragma once
// The workloads that walk electrons through an orbital set, so that the
// Slater matrix is A(i, j) = phi_i(r_j) of real orbitals at real positions
// (walk_workloads.cpp): "slater", the harmonic trap's orbitals;
// "electron-gas", the plane waves of the homogeneous electron gas
// (docs/electron-gas.md), analytic or as float or double B-splines;
// "molecule", one spin's reference determinant of a wavefunction file, or
// with cycles its determinant expansion (molecule_cycles.hpp;
// docs/molecules.md).
// Errors: std::invalid_argument (one line) for an electron-gas n that is
// not a closed shell, naming the nearest ones, an unknown orbital set, a
// molecule file that cannot be read (ConfigError) or whose spin has other
// than n electrons.

#include <memory>
#include <vector>

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"
#include "verify/inputs/workload.hpp"

namespace slaterlab {

/// The three kinds (workload_registry.cpp registers them).
std::vector<WorkloadKind> walk_workloads();

/// The "molecule" workload of spec on a wavefunction in memory (the kind
/// reads spec.file with load_molecule).
std::unique_ptr<Workload> make_molecule_workload(const WorkloadSpec& spec,
                                                 std::shared_ptr<const MolecularWavefunction> molecule);

/// Electrons of spin "up" or "down" of a molecule.
Eigen::Index molecule_electrons(const MolecularWavefunction& molecule, const std::string& spin);

/// The step of a molecule walk where the study gives none (bohr).
inline constexpr double kMoleculeStep = 0.5;

/// Side of the electron gas's cell for n electrons per spin:
/// (4 pi N_total / 3)^(1/3) rs, N_total = n (polarised) or 2n.
double electron_gas_cell_length(Eigen::Index n, double rs, bool polarised);

}  // namespace slaterlab
