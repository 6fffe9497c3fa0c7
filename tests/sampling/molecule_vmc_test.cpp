// The molecular Coulomb Hamiltonian (hamiltonian.hpp), the start near the
// nuclei (molecular_start.hpp) and VMC with one orbital set per spin, against
// answers derived without the code under test:
// - Coulomb sums of configurations whose distances are exact in binary;
// - the hydrogen atom's exact 1s orbital, whose local energy is -1/2 at every
//   configuration (zero variance: what is left is rounding);
// - the helium atom with both electrons in e^{-zeta r}, zeta = Z - 5/16,
//   whose energy is zeta^2 - 2 Z zeta + 5 zeta / 8 = -(27/16)^2 (the
//   textbook variational helium, e.g. Bethe and Salpeter, Sec. 32);
// - lithium with unscreened hydrogenic 1s^2 2s orbitals (two up, one down:
//   the spins' sets differ in size and functions), whose determinant energy
//   follows from the Slater-Condon rules and the hydrogenic integrals
//   J(1s,1s) = 5Z/8, J(1s,2s) = 17Z/81, K(1s,2s) = 16Z/729.
// Statistical tolerance as vmc_test.cpp: 4 sigma from batch means, fixed seeds.
// 4 walkers x 20000 sweeps give error bars of about 0.007 Ha (helium) and
// 0.02 Ha (lithium): the e-e repulsion (about 1.9 and 3.1 Ha) is resolved
// by a hundred of them, lithium's exchange term K(1s,2s) = 0.066 Ha by three.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "hydrogenic_orbitals.hpp"
#include "sampling_test_support.hpp"
#include "slaterlab/strategies/sampling/hamiltonian.hpp"
#include "slaterlab/strategies/sampling/molecular_start.hpp"
#include "slaterlab/strategies/sampling/vmc.hpp"
#include "slaterlab/strategies/sampling/walker.hpp"

namespace slaterlab {
namespace {

using testing::batch_means;
using testing::HydrogenicOrbitals;
using testing::MeanError;
using testing::rng_factory;
using testing::rng_stream;

constexpr double kEps = std::numeric_limits<double>::epsilon();

Nucleus nucleus(double z, double x, double y = 0.0, double w = 0.0) {
  return {z, Eigen::Vector3d(x, y, w), ""};
}

Eigen::Matrix3Xd points(std::initializer_list<Eigen::Vector3d> list) {
  Eigen::Matrix3Xd r(3, Eigen::Index(list.size()));
  Eigen::Index j = 0;
  for (const auto& p : list) r.col(j++) = p;
  return r;
}

// Distances 1, 2, 4 and 5 (3-4-5) are exact in binary, so each term is one
// correctly rounded quotient of small integers; a few ulps of the result.
TEST(MolecularPotential, CoulombSumsOfSimpleConfigurations) {
  // H2+ at R = 2 with its electron at the midpoint: -1 - 1 + 1/2.
  const MolecularPotential h2plus({nucleus(1, -1), nucleus(1, 1)});
  EXPECT_EQ(h2plus.nuclear_repulsion(), 0.5);
  EXPECT_NEAR(h2plus.potential(points({Eigen::Vector3d(0, 0, 0)})), -1.5, 4 * kEps);
  // Helium with its electrons at +-x: -2 - 2 + 1/2, no nuclear repulsion.
  const MolecularPotential he({nucleus(2, 0)});
  EXPECT_EQ(he.nuclear_repulsion(), 0.0);
  const Eigen::Matrix3Xd pair = points({Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(-1, 0, 0)});
  EXPECT_NEAR(he.potential(pair), -3.5, 4 * kEps);
  EXPECT_NEAR(he.electron_nucleus(pair), -4.0, 4 * kEps);
  EXPECT_NEAR(MolecularPotential::electron_electron(pair), 0.5, kEps);
  // A 3-4-5 triangle of charges 3 (origin), 2 (x = 3), 1 (y = 4):
  // E_nn = 6/3 + 3/4 + 2/5; an electron at (3, 4, 0): -3/5 - 2/4 - 1/3.
  const MolecularPotential triangle({nucleus(3, 0), nucleus(2, 3), nucleus(1, 0, 4)});
  const double e_nn = 2.0 + 0.75 + 0.4;
  EXPECT_NEAR(triangle.nuclear_repulsion(), e_nn, 4 * kEps * e_nn);
  // Six quotients and six sums, each rounded by at most eps/2 of the sum of
  // the magnitudes m: 6 eps m.
  const double v = -0.6 - 0.5 - 1.0 / 3.0 + e_nn, m = 0.6 + 0.5 + 1.0 / 3.0 + e_nn;
  EXPECT_NEAR(triangle.potential(points({Eigen::Vector3d(3, 4, 0)})), v, 6 * kEps * m);
  // An uncharged ghost centre adds nothing, even on top of a nucleus.
  const MolecularPotential ghost({nucleus(1, -1), nucleus(1, 1), nucleus(0, 1)});
  EXPECT_EQ(ghost.nuclear_repulsion(), 0.5);
  EXPECT_NEAR(ghost.potential(points({Eigen::Vector3d(0, 0, 0)})), -1.5, 4 * kEps);
  EXPECT_EQ(ghost.name(), "molecule");
  EXPECT_EQ(ghost.cell_length(), 0.0);
  EXPECT_EQ(ghost.nuclei().size(), 3u);
}

TEST(MolecularPotential, RefusesWhatIsNoMolecule) {
  EXPECT_THROW(MolecularPotential({}), std::invalid_argument);
  EXPECT_THROW(MolecularPotential({nucleus(-1, 0)}), std::invalid_argument);
  EXPECT_THROW(MolecularPotential({nucleus(std::nan(""), 0)}), std::invalid_argument);
  EXPECT_THROW(MolecularPotential({nucleus(0, 0)}), std::invalid_argument);
  EXPECT_THROW(MolecularPotential({nucleus(1, std::numeric_limits<double>::infinity())}),
               std::invalid_argument);
  EXPECT_THROW(MolecularPotential({nucleus(1, 2), nucleus(3, 2)}), std::invalid_argument);
  // The trap and the gas have no nuclei.
  EXPECT_TRUE(HarmonicTrapPotential(1.0).nuclei().empty());
}

// Nuclei far apart and a narrow cloud: the nearest nucleus says which one
// was drawn. With charges 1 and 3 (and a ghost) nucleus 0 is drawn with
// p = 1/4: over 4000 electrons its count is binomial, sd = sqrt(4000 p q)
// = 27.4, and 4 sd fails by chance with probability 6e-5 (fixed seed).
TEST(MolecularStart, NucleiDrawnInProportionToTheirCharges) {
  const std::vector<Nucleus> nuclei = {nucleus(1, -50), nucleus(0, 0), nucleus(3, 50)};
  auto random = rng_stream(7, 0);
  const Eigen::Matrix3Xd r = positions_near_nuclei(4000, nuclei, 0.5, *random);
  int first = 0, ghost = 0;
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    first += r(0, j) < -25;
    ghost += std::abs(r(0, j)) < 25;
  }
  EXPECT_EQ(ghost, 0);
  EXPECT_NEAR(first, 1000, 4 * std::sqrt(4000 * 0.25 * 0.75));
  // A pure function of the stream: 1 uniform and 3 normals per electron.
  auto again = rng_stream(7, 0);
  EXPECT_EQ(positions_near_nuclei(4000, nuclei, 0.5, *again), r);
  auto counted = rng_stream(7, 0);
  for (int k = 0; k < 4; ++k) (void)counted->uniform(), (void)counted->normal(),
                              (void)counted->normal(), (void)counted->normal();
  EXPECT_EQ(positions_near_nuclei(1, nuclei, 0.5, *counted), r.col(4));
  EXPECT_THROW(positions_near_nuclei(1, nuclei, 0.0, *random), std::invalid_argument);
  EXPECT_THROW(positions_near_nuclei(1, {nucleus(0, 0)}, 1.0, *random), std::invalid_argument);
}

// E_L = -lap(phi)/(2 phi) - 1/r = -(1 - 2/r)/2 - 1/r = -1/2 exactly. The
// computed value carries the roundings of the Laplacian formula (about 6
// relative to |1| + |2/r|), of the 1 x 1 inverse times the value (2), of the
// halving and the sum, and of the norm in 1/r (4): 16 eps (1 + 2/r) holds
// them with room.
TEST(MolecularVmc, HydrogenAtomHasZeroVariance) {
  HydrogenicOrbitals orbitals(1.0, {1});
  const MolecularPotential hydrogen({nucleus(1, 0)});
  Walker w(orbitals, make_updater("sm", {}), rng_stream(3, 0), 1.0);
  w.place_near_nuclei(hydrogen.nuclei(), 1.0);
  for (int sweep = 0; sweep < 2000; ++sweep) {
    w.sweep(Scheme::pbp, 0.8);
    const double r = w.positions().col(0).norm();
    const double e = w.kinetic_energy() + hydrogen.potential(w.positions());
    ASSERT_NEAR(e, -0.5, 16 * kEps * (1 + 2 / r)) << "sweep " << sweep << ", r = " << r;
  }
  EXPECT_GT(w.counts().accepted, 500);
}

struct AtomRun {
  double z_orbital = 1.0;
  std::vector<int> up, down;
  double z_nucleus = 1.0;
  Scheme scheme = Scheme::pbp;
};

MeanError atom_energy(const AtomRun& a, std::uint64_t seed) {
  HydrogenicOrbitals up(a.z_orbital, a.up), down(a.z_orbital, a.down);
  VmcConfig c;
  c.scheme = a.scheme;
  c.hamiltonian = std::make_shared<const MolecularPotential>(std::vector{nucleus(a.z_nucleus, 0)});
  c.spins = 2;
  c.walkers = 4;
  c.equilibration_sweeps = 200;
  c.sweeps = 20000;
  c.step = 0.5;
  StrategySpec sm;
  sm.name = "sm";
  // Each walker shadowed by a twin on the same sets and streams: it must
  // never part (the per-spin shadow's bookkeeping).
  const ReferenceSpec twin{{&up, &down}, sm};
  const VmcResult r = run_vmc(c, {&up, &down}, sm, rng_factory(seed), &twin);
  std::vector<std::vector<double>> series;
  for (const auto& w : r.walkers) {
    EXPECT_TRUE(w.failure.empty()) << w.failure;
    EXPECT_EQ(w.divergence.sweep, -1);
    EXPECT_EQ(w.divergence.expected_flips, 0.0);
    EXPECT_GT(w.acceptance(), 0.2);
    series.push_back(w.energy);
  }
  return batch_means(series, 20);
}

void expect_energy(const MeanError& e, double exact) {
  EXPECT_LT(std::abs(e.mean - exact), 4 * e.error)
      << e.mean << " +- " << e.error << " vs " << exact << " (z = " << (e.mean - exact) / e.error
      << ")";
  EXPECT_GT(e.error, 0.0);
}

TEST(MolecularVmc, HeliumWithScreenedOrbitals) {
  const double zeta = 2.0 - 5.0 / 16.0;
  const double exact = zeta * zeta - 2 * 2.0 * zeta + 5.0 * zeta / 8.0;
  ASSERT_DOUBLE_EQ(exact, -(27.0 / 16.0) * (27.0 / 16.0));
  expect_energy(atom_energy({zeta, {1}, {1}, 2.0, Scheme::pbp}, 41), exact);
}

TEST(MolecularVmc, LithiumWithSpinsOfDifferentOrbitals) {
  const double z = 3.0;
  const double one_body = 2 * (-z * z / 2) + (-z * z / 8);
  const double j11 = 5 * z / 8, j12 = 17 * z / 81, k12 = 16 * z / 729;
  // Pairs: 1s up - 1s down (J11), 2s up - 1s up (J12 - K12), 2s up - 1s down (J12).
  const double exact = one_body + j11 + (j12 - k12) + j12;
  expect_energy(atom_energy({z, {1, 2}, {1}, z, Scheme::pbp}, 51), exact);
  expect_energy(atom_energy({z, {1, 2}, {1}, z, Scheme::qs_batched}, 52), exact);
}

TEST(MolecularVmc, OrbitalSetsMustBeOnePerSpin) {
  HydrogenicOrbitals one(1.0, {1}), two(1.0, {1, 2});
  VmcConfig c;
  c.spins = 2;
  c.sweeps = 1;
  c.equilibration_sweeps = 0;
  StrategySpec sm;
  EXPECT_THROW(run_vmc(c, SpinOrbitals{&one}, sm, rng_factory(1)), std::invalid_argument);
  EXPECT_THROW(run_vmc(c, SpinOrbitals{&one, nullptr}, sm, rng_factory(1)), std::invalid_argument);
  const ReferenceSpec swapped{{&one, &two}, sm};
  EXPECT_THROW(run_vmc(c, {&two, &one}, sm, rng_factory(1), &swapped), std::invalid_argument);
  EXPECT_NO_THROW(run_vmc(c, {&two, &one}, sm, rng_factory(1)));
}

}  // namespace
}  // namespace slaterlab
