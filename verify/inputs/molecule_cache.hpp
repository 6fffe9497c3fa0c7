#pragma once
// The molecules of a study, each file read once per process: the study's
// validation, its workloads and its VMC runs all need the same
// wavefunction (its electrons to size the matrices, its nuclei for the
// Hamiltonian, its orbitals to evaluate), and a large file takes long to read.
// What: load_molecule(path) reads `path` with read_molecule
// (molecule_file.hpp) the first time and returns the same shared, immutable
// wavefunction after; the path is taken as given (callers resolve a study's
// relative paths first, toml_access::study_relative_path). Thread-safe.
// Errors: read_molecule's ConfigError (one line naming the file), every
// time the path is asked for (a failed read is not cached).

#include <memory>
#include <string>
#include <vector>

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

namespace slaterlab {

std::shared_ptr<const MolecularWavefunction> load_molecule(const std::string& path);

/// The `orbitals` keys of a molecule (workloads and VMC runs alike): its
/// MOs evaluated in "double" or in "float".
const std::vector<std::string>& molecule_orbital_keys();
/// The precision an `orbitals` key names; std::invalid_argument for a key
/// not in molecule_orbital_keys().
OrbitalPrecision molecule_orbital_precision(const std::string& key);

/// The name a molecule file gives runs and experiments: its file name up to
/// the first dot ("data/molecules/h2o-ccpvdz.trexio.h5": "h2o-ccpvdz").
std::string molecule_stem(const std::string& path);

}  // namespace slaterlab
