#pragma once
// The two readers behind read_molecule (molecule_file.hpp) and what they hand
// to its checks: the wavefunction in slaterlab's convention plus what the
// file's precision allows.
//
// Contract: each reader throws ConfigError "NAME: <problem>" for a file it
// cannot read, a malformed or inconsistent one, or one it does not support;
// it checks counts and indices, not orthonormality (molecule_file.cpp does,
// with the bounds below).

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

#include <Eigen/Core>

#include <optional>
#include <string>
#include <vector>

namespace slaterlab {

/// Primitives per shell beyond any published basis set (the largest have a
/// few tens); a limit keeps a hostile file's work per shell bounded (the
/// norms cost primitives^2).
inline constexpr int kMaxPrimitivesPerShell = 100;

struct ReadMolecule {
  MolecularWavefunction wavefunction;
  // Half a unit in the last printed digit of each MO coefficient after its
  // conversion (AOs x MOs, as mo_up and mo_down); zero for binary data.
  Eigen::MatrixXd up_coefficient_error;
  Eigen::MatrixXd down_coefficient_error;
  // Per AO: a bound on || AO from the printed basis - exact AO || (both of
  // norm 1) from the printed digits of exponents, contraction coefficients
  // and nuclear coordinates; zero for binary data.
  Eigen::VectorXd ao_deviation;
  // TREXIO: the stored AO overlap in the file's AO convention, and the
  // factors n_i with file AO i = n_i * slaterlab's AO i.
  std::optional<Eigen::MatrixXd> stored_overlap;
  Eigen::VectorXd ao_scale;
  // Relative rounding of each n_i in eps (the norm computed for it).
  Eigen::VectorXd ao_scale_rounding;
  // Molden: whether the dialect read changed anything from the format's.
  bool dialect_applies = false;
};

/// How a Molden file's writer may deviate from the format, in ways IOData
/// (theochem/iodata, iodata/formats/molden.py) documents and corrects:
/// tried in this order when a file fails the format's orthonormality.
enum class MoldenDialect {
  kFormat,              // the format's convention
  kCartesianLikeXl,     // Psi4 <= 1.3.2: cartesian d, f, g normalised like x^l
  kCartesianLikeCfour,  // CFOUR 2.1: cartesian d, f, g scaled by sqrt(prod (2a_d - 1)!!)
  kOrca,                // ORCA: unnormalised primitives; f, g with |m| = 3, 4 negated
};
inline constexpr MoldenDialect kMoldenDialects[] = {MoldenDialect::kFormat, MoldenDialect::kCartesianLikeXl,
                                                    MoldenDialect::kCartesianLikeCfour, MoldenDialect::kOrca};
const char* molden_dialect_name(MoldenDialect dialect);

/// `text` of a Molden file read in `dialect`; `name` prefixes the errors.
ReadMolecule read_molden(const std::string& text, const std::string& name,
                         MoldenDialect dialect = MoldenDialect::kFormat);
/// A TREXIO file (HDF5) or directory (text back end).
ReadMolecule read_trexio(const std::string& path);

/// The reference determinant first: a stable partition of the MO columns,
/// occupied (occupation >= threshold) before the rest. Returns the count
/// occupied.
int occupied_first(Eigen::MatrixXd& mo, Eigen::MatrixXd* error, const std::vector<double>& occupation,
                   double threshold);

}  // namespace slaterlab
