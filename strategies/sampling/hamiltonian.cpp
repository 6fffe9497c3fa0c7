#include "slaterlab/strategies/sampling/hamiltonian.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

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

}  // namespace

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

}  // namespace slaterlab
