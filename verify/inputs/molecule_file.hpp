#pragma once
// Reading a user's quantum-chemistry wavefunction file into slaterlab's
// convention (MolecularWavefunction, strategies/orbitals/molecular_orbitals.hpp).
//
// What: read_molecule(path) tells the format from the content: an HDF5 file
// (its signature) or a directory is TREXIO (read through libtrexio), text
// whose first line is "[Molden Format]" is Molden. Nuclei, electrons per spin,
// the contracted Gaussian basis, the MO coefficients (alpha and beta, or one
// restricted set), TREXIO's determinant list and the energy when the file
// holds one are brought to slaterlab's convention; docs/molecules.md
// ("Formats and conventions") states each format's conventions, where they
// come from and how each is checked.
// Guarantees: a returned wavefunction passed every check: the counts agree,
// the reference determinant occupies the first electrons_* MO columns, and
// the MOs are orthonormal, C^T S C = I with the analytic overlap S, within a
// tolerance derived from the data's precision (printed digits for Molden);
// for TREXIO also our S equals the file's stored AO overlap when it holds one.
// Errors: ConfigError "PATH: <problem>" (one line) for an unreadable,
// malformed, inconsistent, unsupported (l > 4, effective core potentials,
// Slater or numerical orbitals, periodic systems) or non-orthonormal file.

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

#include <optional>
#include <string>

namespace slaterlab {

/// What the checks of one file measured (docs/molecules.md, "Checks").
struct MoleculeChecks {
  double orthonormality_error = 0.0;   // max |C^T S C - I| over both spins
  double orthonormality_ratio = 0.0;   // max |C^T S C - I|_ij / tolerance_ij (<= 1)
  std::optional<double> stored_overlap_error;  // TREXIO: max |S_ours - S_file|
  std::optional<double> stored_overlap_ratio;  //   over its tolerance (<= 1)
};

/// Reads the wavefunction at `path`; `checks`, when given, receives what the
/// checks measured.
MolecularWavefunction read_molecule(const std::string& path, MoleculeChecks* checks = nullptr);

/// The Molden reader on text already in memory (`name` prefixes the errors);
/// the same checks as read_molecule. For the fuzz target and the tests.
MolecularWavefunction read_molden_text(const std::string& text, const std::string& name,
                                       MoleculeChecks* checks = nullptr);

}  // namespace slaterlab
