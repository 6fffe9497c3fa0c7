// The electron-gas pieces end to end, without the VMC driver: positions are
// sampled from |D|^2 of ElectronGasOrbitals by a plain Metropolis walk
// (determinants by Eigen's partial-pivot LU), and the mean of
// EwaldSum::energy + kinetic_sum must equal the exact Hartree-Fock energy of
// reference/electron_gas.hpp: for a single determinant the mean local energy
// is its expectation value, <T> + <V_Ewald> = E_HF, with no approximation.
// The kinetic part is exact at every configuration (lap phi_i = -k_i^2 phi_i),
// so only the Ewald energy fluctuates.
//
// Statistical tolerance: |mean - E_HF| < 4 sigma, sigma by Flyvbjerg-Petersen
// blocking (verify/stats/statistics.hpp), the level required to be converged;
// with a fixed seed the pass is reproducible and, were sigma exact, a correct
// code would fail with probability ~6e-5. The test also requires 4 sigma to
// be below a tenth of the exchange energy, so that a missing or wrong
// exchange or Madelung term could not pass.

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <random>
#include <vector>

#include "slaterlab/reference/electron_gas.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"
#include "slaterlab/strategies/sampling/ewald.hpp"
#include "verify/stats/statistics.hpp"

namespace slaterlab {
namespace {

double determinant_with_column(Eigen::MatrixXd& a, Eigen::Index j, const Eigen::VectorXd& column) {
  const Eigen::VectorXd old = a.col(j);
  a.col(j) = column;
  const double det = a.partialPivLu().determinant();
  a.col(j) = old;
  return det;
}

TEST(ElectronGasVmc, MeanEnergyIsTheHartreeFockEnergy) {
  constexpr Eigen::Index kN = 7;
  constexpr double kRs = 2.0;
  const double box = reference::gas_box_length(kN, kRs);
  const ElectronGasOrbitals orbitals(kN, box);
  // tau = 1e-8: cut-off errors far below the statistical error (~1e-2 Ha).
  const EwaldSum ewald(box, 1e-8);
  const reference::GasEnergy exact = reference::hartree_fock_energy(kN, 0, kRs);

  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Eigen::Matrix3Xd r(3, kN);
  for (Eigen::Index j = 0; j < kN; ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = box * unit(rng);
  Eigen::MatrixXd a;
  orbitals.evaluate_values(r, a);
  double det = a.partialPivLu().determinant();

  const double step = 0.25 * box;
  const int equilibration = 500, sweeps = 20000;
  std::vector<double> energies;
  energies.reserve(sweeps);
  long accepted = 0;
  for (int sweep = 0; sweep < equilibration + sweeps; ++sweep) {
    for (Eigen::Index j = 0; j < kN; ++j) {
      Eigen::Matrix3Xd trial = r.col(j);
      for (int d = 0; d < 3; ++d) trial(d, 0) += step * (2.0 * unit(rng) - 1.0);
      Eigen::MatrixXd column;
      orbitals.evaluate_values(trial, column);
      const double det_new = determinant_with_column(a, j, column.col(0));
      const double ratio = det_new / det;
      if (unit(rng) < ratio * ratio) {
        r.col(j) = trial;
        a.col(j) = column.col(0);
        det = det_new;
        ++accepted;
      }
    }
    if (sweep >= equilibration) energies.push_back(ewald.energy(r) + orbitals.kinetic_sum());
  }
  const double acceptance = double(accepted) / double(kN * (equilibration + sweeps));
  EXPECT_GT(acceptance, 0.2);
  EXPECT_LT(acceptance, 0.9);

  const Blocking blocking = block_analysis(energies);
  EXPECT_TRUE(blocking.converged);
  const Estimate est = estimate(blocking);
  EXPECT_NEAR(est.mean, exact.total, 4.0 * est.error)
      << "mean " << est.mean << " +- " << est.error << " exact " << exact.total;
  EXPECT_LT(4.0 * est.error, 0.1 * std::abs(exact.exchange));
}

}  // namespace
}  // namespace slaterlab
