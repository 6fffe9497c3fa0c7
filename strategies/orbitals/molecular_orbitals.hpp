#pragma once
// Molecular orbitals of a quantum-chemistry wavefunction: a contracted
// Gaussian basis on the nuclei and MO coefficients, as one orbital set.
//
// What: MolecularWavefunction is what a wavefunction file (TREXIO, Molden;
// verify/inputs/molecule_file.hpp reads them) says of a molecule, already
// brought to one convention: every AO is normalised to 1 on its own (each
// cartesian component and each real solid harmonic), components in the order
// docs/molecules.md states, MO columns over those AOs. MolecularOrbitals
// evaluates a chosen list of MOs (by index into the MO columns) at electron
// positions, in double or in float (the float set evaluates AOs and the
// AO-to-MO product in float and rounds its results up to double).
// Preconditions: a wavefunction whose shells name existing nuclei, with
// positive exponents and l <= kMaxAngularMomentum, and MO matrices with one
// row per AO; MO indices within range.
// Guarantees: evaluation is const and thread-safe; values, gradients and
// Laplacians are analytic derivatives of the same functions.
// Errors: std::invalid_argument with a one-line message.

#include "slaterlab/strategies/orbitals/orbital_set.hpp"

#include <Eigen/Core>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace slaterlab {

inline constexpr int kMaxAngularMomentum = 4;  // s to g

struct Nucleus {
  double charge = 0.0;                        // Z (an effective charge under a pseudopotential)
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  // bohr
  std::string symbol;                         // e.g. "C"; may be empty
};

/// One contracted shell: sum_k coefficients[k] g_k, each primitive g_k
/// normalised, the contraction then normalised to 1.
struct GaussianShell {
  int nucleus = 0;      // index into MolecularWavefunction::nuclei
  int l = 0;
  bool spherical = false;  // 2l + 1 real solid harmonics, else (l+1)(l+2)/2 cartesians
  std::vector<double> exponents;
  std::vector<double> coefficients;
};

/// One determinant of an expansion: the occupied MO indices per spin.
struct DeterminantOccupation {
  std::vector<int> up;
  std::vector<int> down;
  double coefficient = 1.0;
};

struct MolecularWavefunction {
  std::vector<Nucleus> nuclei;
  int electrons_up = 0;
  int electrons_down = 0;
  std::vector<GaussianShell> shells;  // AOs: the shells' components in order
  Eigen::MatrixXd mo_up;              // AOs x MOs; the reference determinant
  Eigen::MatrixXd mo_down;            //   occupies the first electrons_* columns
  std::vector<DeterminantOccupation> determinants;  // empty: one determinant
  std::optional<double> energy;       // the file's total energy, when it holds one
  std::string source;                 // "trexio", "molden (psi4)", ... for tables

  Eigen::Index ao_count() const;
  /// sum_{a<b} Z_a Z_b / |R_a - R_b|.
  double nuclear_repulsion() const;
};

enum class OrbitalPrecision { kDouble, kFloat };

class MolecularOrbitals final : public OrbitalSet {
 public:
  /// MOs `mo_indices` of `mo` (AOs x MOs over wavefunction's shells).
  MolecularOrbitals(std::shared_ptr<const MolecularWavefunction> wavefunction,
                    const Eigen::MatrixXd& mo, std::vector<int> mo_indices,
                    OrbitalPrecision precision);
  ~MolecularOrbitals() override;

  Eigen::Index size() const override;
  /// "gaussian-double" or "gaussian-float".
  std::string label() const override;
  double computing_epsilon() const override;
  void evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const override;
  void evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slaterlab
