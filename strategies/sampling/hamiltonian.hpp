#pragma once
// What a VMC walker measures besides the determinant's kinetic energy: the
// potential energy of a configuration, and the cell the electrons live in.
//
// What: Hamiltonian::potential(positions) for every electron of every spin
// (3 x N_total, the spin-up electrons first); cell_length() > 0 for a
// periodic cubic cell of that side, [-L/2, L/2)^3 (trial positions are
// wrapped into it and walkers start uniformly inside it), 0 for an open
// system; nuclei() the fixed charges of an open system, around which its
// walkers start (molecular_start.hpp), none: a Gaussian cloud at the origin.
// Kinds: the harmonic trap sum_j w^2 |r_j|^2 / 2 (docs/vmc.md); the
// electron gas, whose potential is the Ewald energy of the electrons in a
// uniform neutralising background (docs/electron-gas.md), or 0 for the
// non-interacting gas; a molecule, the Coulomb energy of electrons and
// clamped nuclei (docs/molecules.md).
// Guarantees: const and thread-safe; the trap's potential is trap_potential()
// itself, so a trap walker's E = K + V is bit-identical to its local_energy().
// Errors: the constructors throw std::invalid_argument for a frequency or
// cell length that is not finite and positive, and for nuclei that are no
// molecule (none, a charge not finite or negative, no positive charge, a
// position not finite, two charged nuclei at one point).

#include <Eigen/Core>

#include <memory>
#include <string>
#include <vector>

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

namespace slaterlab {

class EwaldSum;

class Hamiltonian {
 public:
  virtual ~Hamiltonian() = default;
  /// "harmonic-trap", "electron-gas" or "molecule".
  virtual std::string name() const = 0;
  /// Potential energy of the whole configuration (3 x N_total).
  virtual double potential(const Eigen::Matrix3Xd& positions) const = 0;
  /// Side of the periodic cubic cell, or 0 for an open system.
  virtual double cell_length() const { return 0.0; }
  /// The clamped nuclei of an open system; empty for the trap and the gas.
  virtual const std::vector<Nucleus>& nuclei() const;
};

/// V = sum_j w^2 |r_j|^2 / 2.
class HarmonicTrapPotential final : public Hamiltonian {
 public:
  explicit HarmonicTrapPotential(double omega);
  std::string name() const override { return "harmonic-trap"; }
  double potential(const Eigen::Matrix3Xd& positions) const override;
  double omega() const { return omega_; }

 private:
  double omega_;
};

/// The electron gas in a periodic cube of side L: the Ewald energy of the
/// electrons and the background when interacting, else 0.
class ElectronGasPotential final : public Hamiltonian {
 public:
  ElectronGasPotential(double box_length, bool interacting);
  ~ElectronGasPotential() override;
  std::string name() const override { return "electron-gas"; }
  double potential(const Eigen::Matrix3Xd& positions) const override;
  double cell_length() const override { return box_length_; }
  bool interacting() const { return ewald_ != nullptr; }

 private:
  double box_length_;
  std::unique_ptr<const EwaldSum> ewald_;  // null: non-interacting
};

/// A molecule with clamped nuclei (Born-Oppenheimer, Hartree atomic units):
///   V = -sum_{j,a} Z_a / |r_j - R_a| + sum_{i<j} 1 / |r_i - r_j| + E_nn,
/// E_nn = sum_{a<b} Z_a Z_b / |R_a - R_b|, in an open system (no cell).
class MolecularPotential final : public Hamiltonian {
 public:
  explicit MolecularPotential(std::vector<Nucleus> nuclei);
  std::string name() const override { return "molecule"; }
  double potential(const Eigen::Matrix3Xd& positions) const override;
  const std::vector<Nucleus>& nuclei() const override { return nuclei_; }
  /// -sum_{j,a} Z_a / |r_j - R_a|.
  double electron_nucleus(const Eigen::Matrix3Xd& positions) const;
  /// sum_{i<j} 1 / |r_i - r_j|.
  static double electron_electron(const Eigen::Matrix3Xd& positions);
  /// E_nn, a constant of the geometry.
  double nuclear_repulsion() const { return nuclear_repulsion_; }

 private:
  std::vector<Nucleus> nuclei_;
  double nuclear_repulsion_;
};

}  // namespace slaterlab
