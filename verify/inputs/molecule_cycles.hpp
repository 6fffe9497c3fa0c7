#pragma once
// The update cycles of a determinant expansion (workload "molecule" with
// cycles = true; docs/molecules.md), as QMC=Chem's Sherman-Morrison
// kernels meet them: at each configuration of a walk, the Slater matrix of
// every determinant of the expansion is the reference's with some orbitals
// replaced.
//
// Orientation: here the matrix is M(j, t) = phi_{o_t}(r_j), one column per
// orbital (the transpose of A(i, j) = phi_i(r_j)), so that replacing an
// orbital replaces a column; det M = det A.
// Cycles, per configuration: for each distinct occupation D of the spin
// other than the reference's (0, 1, ..., n-1), in the order the file lists
// them, "excite": columns t = 0..n-1 in increasing order where D[t] != t get
// phi_{D[t]}; then "restore": the same columns get phi_t back. Then the walk
// (Metropolis on |D_ref|^2, electron by electron, decided here against a
// double LU) sweeps until a move is accepted, and one cycle of n columns
// carries M to the new configuration. An occupation listed in increasing
// order that excites orbital i < n-1 shifts the columns above i by one:
// writing column t its neighbour's orbital leaves the intermediate matrix
// exactly singular, as in an expansion's own updates.
// Errors: std::invalid_argument (one line) for a spin without electrons, an
// occupation of the wrong length or with an index outside the MOs, and an
// expansion in which no determinant differs from the reference in this spin.

#include <memory>
#include <vector>

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"
#include "verify/inputs/workload.hpp"

namespace slaterlab {

/// Column t of the reference matrix gets orbital `orbital`.
struct OrbitalReplacement {
  Eigen::Index column = 0;
  int orbital = 0;
};

/// The replacements that turn the reference (0..n-1) into `occupied`, in
/// increasing column order; empty when they are the same.
std::vector<OrbitalReplacement> excitation_of(const std::vector<int>& occupied);

/// The distinct occupations of spin "up" or "down" in the expansion that
/// differ from the reference, in the order of their first appearance.
std::vector<std::vector<int>> spin_excitations(const MolecularWavefunction& molecule,
                                               const std::string& spin);

/// The workload of spec (spec.excitations) on `molecule`.
std::unique_ptr<Workload> make_molecule_cycles(const WorkloadSpec& spec,
                                               std::shared_ptr<const MolecularWavefunction> molecule);

}  // namespace slaterlab
