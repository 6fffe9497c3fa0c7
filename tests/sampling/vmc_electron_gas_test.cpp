// VMC of the homogeneous electron gas (docs/electron-gas.md) against its
// exact answers, which reference/electron_gas derives from the plane waves
// and lattice sums alone: the local energy of the non-interacting gas is the
// constant sum_k k^2 / 2 at every configuration (zero variance), and the
// mean local energy of the interacting gas is the Hartree-Fock energy of the
// plane-wave determinants. Statistical tolerance as in vmc_test.cpp: 4 sigma
// from batch means far longer than the autocorrelation time, fixed seeds.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sampling_test_support.hpp"
#include "slaterlab/reference/electron_gas.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"
#include "slaterlab/strategies/sampling/hamiltonian.hpp"
#include "slaterlab/strategies/sampling/vmc.hpp"

namespace slaterlab {
namespace {

using testing::batch_means;
using testing::MeanError;
using testing::rng_factory;

constexpr double kEps = std::numeric_limits<double>::epsilon();

struct GasRun {
  Eigen::Index n = 7;  // per spin
  double rs = 2.0;
  bool polarised = true;
  bool interacting = true;
  Scheme scheme = Scheme::pbp;
  std::int64_t sweeps = 3000;
};

double cell_length(const GasRun& g) {
  return reference::gas_box_length(g.n * (g.polarised ? 1 : 2), g.rs);
}

VmcResult run(const GasRun& g, std::uint64_t seed) {
  const double l = cell_length(g);
  ElectronGasOrbitals orbitals(g.n, l);
  VmcConfig c;
  c.scheme = g.scheme;
  c.hamiltonian = std::make_shared<const ElectronGasPotential>(l, g.interacting);
  c.spins = g.polarised ? 1 : 2;
  c.walkers = 4;
  c.equilibration_sweeps = 200;
  c.sweeps = g.sweeps;
  c.step = 0.6 * g.rs;  // acceptance about one half
  StrategySpec sm;
  sm.name = "sm";
  return run_vmc(c, orbitals, sm, rng_factory(seed));
}

// Without interaction E_L = -1/2 sum_s trace(A_s^{-1} L_s) and L_s = -diag(k^2)
// A_s, so E_L = sum k^2 / 2 whatever the positions; what is left is the
// rounding of the maintained inverse: |trace(X diag(k^2) A) - sum k^2| <=
// k_max^2 N ||X A - I||, and a Sherman-Morrison inverse of these matrices
// keeps ||X A - I|| below 1e-10 over the run (kappa(A) of uniformly placed
// electrons stays below about 1e4 here, times N eps per update, a few
// hundred updates per electron between the walk's well-conditioned
// stretches). 1e-9 relative is that bound with an order of margin.
TEST(GasVmcRun, NonInteractingLocalEnergyIsTheConstantKineticEnergy) {
  for (const bool polarised : {true, false}) {
    GasRun g;
    g.n = 19;
    g.polarised = polarised;
    g.interacting = false;
    g.sweeps = 200;
    const VmcResult r = run(g, 11);
    const double exact = reference::hartree_fock_energy(g.n, polarised ? 0 : g.n, g.rs).kinetic;
    ASSERT_GT(exact, 0.0);
    for (const auto& w : r.walkers) {
      ASSERT_EQ(w.energy.size(), 200u);
      EXPECT_GT(w.acceptance(), 0.2);
      for (std::size_t k = 0; k < w.energy.size(); ++k) {
        ASSERT_NEAR(w.energy[k], exact, 1e-9 * exact) << "sweep " << k;
        ASSERT_EQ(w.energy[k], w.kinetic[k]);  // no potential
      }
    }
  }
}

void expect_hartree_fock(const GasRun& g, std::uint64_t seed) {
  SCOPED_TRACE("n = " + std::to_string(g.n) + " per spin, rs = " + std::to_string(g.rs) +
               (g.polarised ? ", polarised" : ", unpolarised"));
  const VmcResult r = run(g, seed);
  std::vector<std::vector<double>> series;
  for (const auto& w : r.walkers) series.push_back(w.energy);
  const MeanError e = batch_means(series, 20);
  const double exact = reference::hartree_fock_energy(g.n, g.polarised ? 0 : g.n, g.rs).total;
  EXPECT_LT(std::abs(e.mean - exact), 4.0 * e.error)
      << e.mean << " +- " << e.error << " vs E_HF " << exact << " (z = " << (e.mean - exact) / e.error
      << ")";
  EXPECT_GT(e.error, 0.0);
}

TEST(GasVmcRun, PolarisedGasSamplesTheHartreeFockEnergy) {
  expect_hartree_fock({7, 2.0, true, true, Scheme::pbp, 3000}, 21);
  expect_hartree_fock({19, 5.0, true, true, Scheme::pbp, 2000}, 22);
}

TEST(GasVmcRun, UnpolarisedGasSamplesTheHartreeFockEnergy) {
  expect_hartree_fock({7, 1.0, false, true, Scheme::pbp, 3000}, 31);
  expect_hartree_fock({7, 5.0, false, true, Scheme::qs_batched, 3000}, 32);
}

// The two spins read two streams: spin 0 the walker's own (a polarised run
// reads what it always read), spin 1 another one.
TEST(GasVmcRun, SpinsReadTheirOwnStreams) {
  EXPECT_EQ(spin_stream(5, 0), 5u);
  EXPECT_NE(spin_stream(5, 1), 5u);
  EXPECT_NE(spin_stream(5, 1), spin_stream(6, 1));
  VmcConfig c;
  c.spins = 3;
  EXPECT_THROW(c.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab
