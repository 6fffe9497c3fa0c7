// Tests of the VMC walker (strategies/sampling/walker.hpp) and its local
// energy (local_energy.hpp): exactness of E_L along sampled paths, the
// rank-m application of quasi-simultaneous sweeps, and reproducibility.
//
// Tolerances:
// - E_L: local_energy_bound (sampling_test_support.hpp) derives, from the
//   orbitals' eigen-equation, an a posteriori bound on |E_L - E_L,exact| made
//   of the strategy's inverse residual and double rounding. At alpha = w the
//   exact value is the constant w S (zero variance); elsewhere it is the
//   closed form alpha S + (w^2 - alpha^2) R2 / 2 (reference/harmonic_trap.hpp).
//   A wrong index order (sum Ainv(i,j) L(i,j)) misses by O(1): checked below.
// - log|det| after rank-m applications, against a fresh LU of the final
//   matrix: to first order the error is a sum over the M + 2 steps (the
//   reset's LU, M accepted rank-1 steps, the fresh LU), each perturbing
//   log|det| by at most c N u kappa_t: for the LUs kappa_t is the 2-norm
//   condition number of the matrix, for an accepted move the larger of that
//   and the ratio conditioning ||A|| ||e_k^T A^{-1}|| ||A^{-1} a'|| / |rho|
//   (mp.hpp's kappa_rho; d log|rho| = d rho / rho). c = 16 covers the
//   constants of one step's GEMV/GER roundings (gamma_N). u is the
//   strategy's unit roundoff. (Measured: 1e-5 .. 1e-2 of this worst case.)

#include <gtest/gtest.h>

#include <Eigen/LU>
#include <Eigen/SVD>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "slaterlab/reference/harmonic_trap.hpp"
#include "sampling_test_support.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "slaterlab/strategies/sampling/local_energy.hpp"
#include "slaterlab/strategies/sampling/walker.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

using testing::local_energy_bound;
using testing::maintained_inverse;
using testing::rng_stream;

constexpr Scheme kSchemes[] = {Scheme::pbp, Scheme::qs, Scheme::qs_batched};

std::unique_ptr<DeterminantUpdater> strategy(const std::string& name,
                                             Precision precision = Precision::double_) {
  UpdaterOptions o;
  o.precision = precision;
  o.k = 16;
  return make_updater(name, o);
}

// Checks E_L against the closed form and the derived bound after every sweep.
void check_local_energy_path(Eigen::Index n, double alpha, double omega, Scheme scheme,
                             const std::string& name, int sweeps, double step) {
  SCOPED_TRACE("N=" + std::to_string(n) + " scheme=" + std::string(to_string(scheme)) + " " + name);
  HarmonicOscillatorOrbitals orbitals(n, alpha);
  Walker w(orbitals, strategy(name), rng_stream(7, std::uint64_t(n)), omega);
  w.place_random(1.0 / std::sqrt(alpha));
  Eigen::MatrixXd a;
  double max_ratio = 0.0;
  for (int s = 0; s < sweeps; ++s) {
    w.sweep(scheme, step);
    const double e = w.local_energy();
    const double exact = reference::exact_local_energy(n, alpha, omega, w.positions().squaredNorm());
    orbitals.evaluate_values(w.positions(), a);
    const double bound = local_energy_bound(a, maintained_inverse(w.updater()), w.positions(), alpha, omega);
    ASSERT_LE(std::abs(e - exact), bound) << "sweep " << s << " E_L " << e << " exact " << exact;
    max_ratio = std::max(max_ratio, bound / std::abs(exact));
  }
  // The bound is not vacuous: below half double's digits (sqrt(u)), far
  // below the O(1e-3 .. 1) relative miss of a wrong formula. (qs, whose
  // application pass can step through near-nodal intermediate matrices,
  // leaves a larger inverse residual than pbp, which the bound picks up.)
  EXPECT_LT(max_ratio, std::sqrt(std::numeric_limits<double>::epsilon()));
}

TEST(WalkerLocalEnergy, ZeroVarianceAtAlphaEqualsOmega) {
  const double w = 1.3;
  for (Eigen::Index n : {1, 4, 10})
    for (Scheme scheme : kSchemes) {
      check_local_energy_path(n, w, w, scheme, "sm", 150, 0.8);
      // ...and the constant is exact_energy: E_L = w S everywhere.
      EXPECT_EQ(reference::exact_local_energy(n, w, w, 123.0), reference::exact_energy(n, w, w));
    }
}

TEST(WalkerLocalEnergy, ClosedFormAwayFromOptimum) {
  for (const std::string name : {"sm", "delayed", "qr-givens", "qr-rank1", "recompute", "splitting"})
    for (Scheme scheme : kSchemes) check_local_energy_path(10, 1.4, 1.0, scheme, name, 60, 0.6);
}

TEST(WalkerLocalEnergy, TransposedIndexOrderWouldBeCaught) {
  // The trace must pair Ainv(j, i) with L(i, j). The transposed pairing is a
  // different number: at alpha = w it misses the constant by far more than
  // the bound the tests above enforce.
  const double w = 1.0;
  HarmonicOscillatorOrbitals orbitals(10, w);
  Walker walker(orbitals, strategy("sm"), rng_stream(3, 0), w);
  walker.place_random(1.0);
  for (int s = 0; s < 5; ++s) walker.sweep(Scheme::pbp, 0.7);
  OrbitalVGL vgl;
  orbitals.evaluate_vgl(walker.positions(), vgl);
  const Eigen::MatrixXd x = maintained_inverse(walker.updater());
  const double right = -0.5 * (x * vgl.laplacian).trace() + trap_potential(walker.positions(), w);
  const double wrong = -0.5 * x.cwiseProduct(vgl.laplacian).sum() + trap_potential(walker.positions(), w);
  const double exact = reference::exact_energy(10, w, w);
  Eigen::MatrixXd a;
  orbitals.evaluate_values(walker.positions(), a);
  const double bound = local_energy_bound(a, x, walker.positions(), w, w);
  EXPECT_NEAR(right, exact, bound);
  EXPECT_GT(std::abs(wrong - exact), bound);  // the wrong pairing is caught
  // The walker's own E_L and this one are each within the bound of exact.
  EXPECT_NEAR(walker.local_energy(), right, 2 * bound);
}

// log|det| of the strategy after qs/qs-batched sweeps vs a fresh LU.
double condition_number(const Eigen::MatrixXd& m) {
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(m);
  return svd.singularValues()(0) / svd.singularValues()(svd.singularValues().size() - 1);
}

void check_log_det(const std::string& name, Scheme scheme, Precision precision) {
  SCOPED_TRACE(name + " " + std::string(to_string(scheme)) + " " + std::string(to_string(precision)));
  const Eigen::Index n = 10;
  const double alpha = 1.1;
  HarmonicOscillatorOrbitals orbitals(n, alpha);
  Walker w(orbitals, strategy(name, precision), rng_stream(11, 5), 1.0);
  w.place_random(1.0);
  Eigen::MatrixXd a, a_new;
  orbitals.evaluate_values(w.positions(), a);
  double kappa_sum = condition_number(a);  // the reset's LU
  std::int64_t applied = 0;
  for (int s = 0; s < 20; ++s) {
    w.sweep(scheme, 0.6);
    ASSERT_TRUE(std::isfinite(w.local_energy()));
    // Replay the accepted columns in electron order, as the walker applied
    // them, and add each step's conditioning.
    orbitals.evaluate_values(w.positions(), a_new);
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!w.decisions()[std::size_t(j)]) continue;
      const Eigen::PartialPivLU<Eigen::MatrixXd> lu(a);
      const Eigen::VectorXd x_col = lu.solve(a_new.col(j));
      const Eigen::RowVectorXd x_row = lu.inverse().row(j);
      kappa_sum += std::max(condition_number(a),
                            a.norm() * x_row.norm() * x_col.norm() / std::abs(x_col(j)));
      a.col(j) = a_new.col(j);
      ++applied;
    }
    ASSERT_TRUE(a == a_new) << "replayed matrix differs from the final one";
  }
  kappa_sum += condition_number(a);  // the fresh LU
  const Eigen::PartialPivLU<Eigen::MatrixXd> lu(a);
  const double fresh = lu.matrixLU().diagonal().cwiseAbs().array().log().sum();
  const double u = w.updater().epsilon() / 2;
  const double bound = 16.0 * u * double(n) * kappa_sum;
  EXPECT_GT(applied, 20);
  EXPECT_LE(std::abs(w.updater().log_det().log_abs - fresh), bound) << "applied " << applied;
  EXPECT_EQ(w.updater().log_det().sign, lu.determinant() > 0 ? 1 : -1);
}

TEST(WalkerQuasiSimultaneous, LogDetConsistentWithFreshLu) {
  for (const std::string name : {"sm", "delayed", "qr-givens"})
    for (Scheme scheme : {Scheme::qs, Scheme::qs_batched})
      for (Precision p : {Precision::double_, Precision::single}) check_log_det(name, scheme, p);
}

TEST(WalkerQuasiSimultaneous, DelayedAppliesEnBloc) {
  // A qs sweep's accepted columns enter the delayed window and leave it in
  // one flush per sweep (k = 16 > N = 10, so no window fills early).
  HarmonicOscillatorOrbitals orbitals(10, 1.0);
  Walker w(orbitals, strategy("delayed"), rng_stream(5, 0), 1.0);
  w.place_random(1.0);
  std::int64_t sweeps_with_moves = 0;
  for (int s = 0; s < 10; ++s) {
    const std::int64_t before = w.counts().accepted;
    w.sweep(Scheme::qs, 0.5);
    if (w.counts().accepted > before) ++sweeps_with_moves;
  }
  EXPECT_EQ(w.updater().counters().event(kFlushEvent), sweeps_with_moves);
}

TEST(WalkerSchemes, OneElectronSchemesAreTheSameChain) {
  // N = 1: the three schemes read the same variates in the same order and
  // take the same decisions, so their paths are bit-identical.
  HarmonicOscillatorOrbitals orbitals(1, 0.9);
  std::vector<std::vector<double>> energies;
  for (Scheme scheme : kSchemes) {
    Walker w(orbitals, strategy("sm"), rng_stream(99, 1), 1.0);
    w.place_random(1.0);
    std::vector<double> e;
    for (int s = 0; s < 300; ++s) {
      w.sweep(scheme, 1.2);
      e.push_back(w.local_energy());
    }
    energies.push_back(e);
  }
  EXPECT_EQ(energies[0], energies[1]);
  EXPECT_EQ(energies[0], energies[2]);
}

TEST(WalkerSchemes, SameStreamSamePath) {
  HarmonicOscillatorOrbitals orbitals(4, 1.0);
  for (Scheme scheme : kSchemes) {
    Walker a(orbitals, strategy("sm"), rng_stream(1, 2), 1.0);
    Walker b(orbitals, strategy("sm"), rng_stream(1, 2), 1.0);
    a.place_random(1.0);
    b.place_random(1.0);
    for (int s = 0; s < 100; ++s) {
      a.sweep(scheme, 0.9);
      b.sweep(scheme, 0.9);
    }
    EXPECT_EQ(a.positions(), b.positions());
    EXPECT_EQ(a.counts().accepted, b.counts().accepted);
  }
}

TEST(WalkerSchemes, QsDecidesAgainstTheFixedConfiguration) {
  // Every qs decision ratio must equal the ratio against the configuration
  // at the start of the sweep, computed here from scratch by LU.
  const Eigen::Index n = 4;
  HarmonicOscillatorOrbitals orbitals(n, 1.0);
  Walker w(orbitals, strategy("sm"), rng_stream(8, 0), 1.0);
  w.place_random(1.0);
  Eigen::MatrixXd a, trial;
  for (int s = 0; s < 30; ++s) {
    orbitals.evaluate_values(w.positions(), a);
    w.sweep(Scheme::qs, 0.8);
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(a);
    // Both ratios solve A x = u for component j, backward stably: each is
    // within about n eps kappa(A) (|rho| + 1) of the exact one, and the
    // walker's inverse carries that error once per accepted move since the
    // start (4 s n of them at most). 4 covers the LU's growth and the sum.
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(a);
    const double kappa = svd.singularValues()(0) / svd.singularValues()(n - 1);
    const double moves = double(n) * (s + 1);
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!w.decisions()[std::size_t(j)]) continue;  // only accepted trials are visible afterwards
      Eigen::Matrix3Xd rj = w.positions().col(j);
      orbitals.evaluate_values(rj, trial);
      const double rho = lu.solve(trial.col(0).eval())(j);
      const double bound = 4 * (moves + 1) * double(n) * kEps * kappa * (std::abs(rho) + 1);
      EXPECT_NEAR(w.ratios()[std::size_t(j)], rho, bound);
    }
  }
}

TEST(WalkerErrors, Protocol) {
  HarmonicOscillatorOrbitals orbitals(4, 1.0);
  Walker w(orbitals, strategy("sm"), rng_stream(1, 0), 1.0);
  EXPECT_THROW(w.sweep(Scheme::pbp, 0.5), std::logic_error);
  EXPECT_THROW(w.local_energy(), std::logic_error);
  EXPECT_THROW(w.place(Eigen::Matrix3Xd::Zero(3, 3)), std::invalid_argument);
  w.place_random(1.0);
  EXPECT_THROW(w.sweep(Scheme::pbp, -1.0), std::invalid_argument);
  EXPECT_THROW(Walker(orbitals, nullptr, rng_stream(1, 0), 1.0), std::invalid_argument);
  EXPECT_THROW(Walker(orbitals, strategy("sm"), nullptr, 1.0), std::invalid_argument);
  EXPECT_THROW(Walker(orbitals, strategy("sm"), rng_stream(1, 0), 0.0), std::invalid_argument);
  // Two electrons at one point: A has two equal columns.
  EXPECT_THROW(w.place(Eigen::Matrix3Xd::Zero(3, 4)), SingularMatrixError);
}

TEST(Scheme, Names) {
  for (Scheme s : kSchemes) EXPECT_EQ(parse_scheme(to_string(s)), s);
  EXPECT_EQ(to_string(Scheme::qs_batched), "qs-batched");
  EXPECT_EQ(known_schemes().size(), 3u);
  EXPECT_THROW(parse_scheme("QS"), std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab
