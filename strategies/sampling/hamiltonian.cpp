#include "slaterlab/strategies/sampling/hamiltonian.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "slaterlab/strategies/sampling/ewald.hpp"
#include "slaterlab/strategies/sampling/local_energy.hpp"

namespace slaterlab {
namespace {

double require_positive(double x, const char* what) {
  if (!(std::isfinite(x) && x > 0.0))
    throw std::invalid_argument(std::string(what) + " must be finite and > 0, got " +
                                std::to_string(x));
  return x;
}

/// sum_{i<j} q_i q_j / |x_i - x_j| over the columns of x: the one Coulomb
/// pair sum of the electrons (q = 1) and of the nuclei. A pair with q_i q_j
/// = 0 (an uncharged ghost centre of basis functions) adds nothing, even
/// where it coincides with another centre.
template <class Charge>
double pair_coulomb(const Eigen::Matrix3Xd& x, const Charge& q) {
  double sum = 0.0;
  for (Eigen::Index j = 1; j < x.cols(); ++j)
    for (Eigen::Index i = 0; i < j; ++i) {
      const double qq = q(i) * q(j);
      if (qq != 0.0) sum += qq / (x.col(i) - x.col(j)).norm();
    }
  return sum;
}

std::vector<Nucleus> require_molecule(std::vector<Nucleus> nuclei) {
  if (nuclei.empty()) throw std::invalid_argument("molecule: no nuclei");
  double total = 0.0;
  for (std::size_t a = 0; a < nuclei.size(); ++a) {
    const Nucleus& n = nuclei[a];
    if (!(std::isfinite(n.charge) && n.charge >= 0.0))
      throw std::invalid_argument("molecule: nucleus " + std::to_string(a) +
                                  " has charge " + std::to_string(n.charge) +
                                  ", not a finite number >= 0");
    if (!n.position.allFinite())
      throw std::invalid_argument("molecule: nucleus " + std::to_string(a) +
                                  " has a position that is not finite");
    total += n.charge;
  }
  if (!(total > 0.0)) throw std::invalid_argument("molecule: no nucleus has a positive charge");
  return nuclei;
}

}  // namespace

const std::vector<Nucleus>& Hamiltonian::nuclei() const {
  static const std::vector<Nucleus> none;
  return none;
}

HarmonicTrapPotential::HarmonicTrapPotential(double omega)
    : omega_(require_positive(omega, "harmonic trap: omega")) {}

double HarmonicTrapPotential::potential(const Eigen::Matrix3Xd& positions) const {
  return trap_potential(positions, omega_);
}

ElectronGasPotential::ElectronGasPotential(double box_length, bool interacting)
    : box_length_(require_positive(box_length, "electron gas: box length")),
      ewald_(interacting ? std::make_unique<const EwaldSum>(box_length) : nullptr) {}

ElectronGasPotential::~ElectronGasPotential() = default;

double ElectronGasPotential::potential(const Eigen::Matrix3Xd& positions) const {
  return ewald_ ? ewald_->energy(positions) : 0.0;
}

MolecularPotential::MolecularPotential(std::vector<Nucleus> nuclei)
    : nuclei_(require_molecule(std::move(nuclei))) {
  Eigen::Matrix3Xd r(3, Eigen::Index(nuclei_.size()));
  for (std::size_t a = 0; a < nuclei_.size(); ++a) r.col(Eigen::Index(a)) = nuclei_[a].position;
  nuclear_repulsion_ = pair_coulomb(r, [this](Eigen::Index a) { return nuclei_[std::size_t(a)].charge; });
  if (!std::isfinite(nuclear_repulsion_))
    throw std::invalid_argument("molecule: two charged nuclei are at the same point");
}

double MolecularPotential::electron_nucleus(const Eigen::Matrix3Xd& positions) const {
  double sum = 0.0;
  for (const Nucleus& n : nuclei_) {
    if (n.charge == 0.0) continue;  // a ghost centre: basis functions, no charge
    for (Eigen::Index j = 0; j < positions.cols(); ++j)
      sum -= n.charge / (positions.col(j) - n.position).norm();
  }
  return sum;
}

double MolecularPotential::electron_electron(const Eigen::Matrix3Xd& positions) {
  return pair_coulomb(positions, [](Eigen::Index) { return 1.0; });
}

double MolecularPotential::potential(const Eigen::Matrix3Xd& positions) const {
  return electron_nucleus(positions) + electron_electron(positions) + nuclear_repulsion_;
}

}  // namespace slaterlab
