#pragma once
// What a VMC walker measures besides the determinant's kinetic energy: the
// potential energy of a configuration, and the cell the electrons live in.
//
// What: Hamiltonian::potential(positions) for every electron of every spin
// (3 x N_total, the spin-up electrons first); cell_length() > 0 for a
// periodic cubic cell of that side, [-L/2, L/2)^3 (trial positions are
// wrapped into it and walkers start uniformly inside it), 0 for an open
// system (walkers start from a Gaussian cloud).
// Kinds: the harmonic trap sum_j w^2 |r_j|^2 / 2 (docs/vmc.md) and the
// electron gas, whose potential is the Ewald energy of the electrons in a
// uniform neutralising background (docs/electron-gas.md), or 0 for the
// non-interacting gas.
// Guarantees: const and thread-safe; the trap's potential is trap_potential()
// itself, so a trap walker's E = K + V is bit-identical to its local_energy().
// Errors: the constructors throw std::invalid_argument for a frequency or
// cell length that is not finite and positive.

#include <Eigen/Core>

#include <memory>
#include <string>

namespace slaterlab {

class EwaldSum;

class Hamiltonian {
 public:
  virtual ~Hamiltonian() = default;
  /// "harmonic-trap" or "electron-gas".
  virtual std::string name() const = 0;
  /// Potential energy of the whole configuration (3 x N_total).
  virtual double potential(const Eigen::Matrix3Xd& positions) const = 0;
  /// Side of the periodic cubic cell, or 0 for an open system.
  virtual double cell_length() const { return 0.0; }
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

}  // namespace slaterlab
