// Tests of VMC runs (strategies/sampling/vmc.hpp): energies against the
// exact variational energy, the sampled density of one Gaussian orbital,
// step tuning, and lockstep path divergence. Short runs only (the whole
// binary runs in seconds); long bias studies belong to the study layer.
//
// Statistical tolerance: |estimate - exact| < 4 sigma with sigma from batch
// means (sampling_test_support.hpp): B = walkers x batches_per_walker batch
// means, each over a batch far longer than the autocorrelation time, so the
// false-failure probability is P(|t_{B-1}| > 4) ~ 1e-4 for B = 80 (and the
// seeds are fixed, so a pass is reproducible). Variances are checked the
// same way, with batch means of the centred squares (x - mean)^2.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "slaterlab/reference/harmonic_trap.hpp"
#include "sampling_test_support.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "slaterlab/strategies/sampling/step_tuner.hpp"
#include "slaterlab/strategies/sampling/vmc.hpp"
#include "slaterlab/strategies/sampling/walker.hpp"

namespace slaterlab {
namespace {

using testing::batch_means;
using testing::MeanError;
using testing::rng_factory;
using testing::rng_stream;

StrategySpec spec(const std::string& name, Precision precision = Precision::double_) {
  StrategySpec s;
  s.name = name;
  s.options.precision = precision;
  return s;
}

std::vector<std::vector<double>> centred_squares(const std::vector<std::vector<double>>& series,
                                                 double mean) {
  std::vector<std::vector<double>> out;
  for (const auto& s : series) {
    std::vector<double> sq;
    for (double x : s) sq.push_back((x - mean) * (x - mean));
    out.push_back(sq);
  }
  return out;
}

void expect_within_4_sigma(const MeanError& m, double exact, const std::string& what) {
  EXPECT_LT(std::abs(m.mean - exact), 4.0 * m.error)
      << what << ": " << m.mean << " +- " << m.error << " vs exact " << exact << " (z = "
      << (m.mean - exact) / m.error << ")";
  EXPECT_GT(m.error, 0.0) << what;
}

// A valid Metropolis chain (pbp, and qs-batched, which is pbp with another
// draw order) samples |Psi|^2: its mean E_L is E(alpha) and its variance is
// ((w^2 - alpha^2)/2)^2 Var(R2).
void check_energy(Scheme scheme) {
  SCOPED_TRACE(std::string(to_string(scheme)));
  const Eigen::Index n = 4;
  const double alpha = 1.25, omega = 1.0;
  HarmonicOscillatorOrbitals orbitals(n, alpha);
  VmcConfig c;
  c.scheme = scheme;
  c.omega = omega;
  c.walkers = 4;
  c.equilibration_sweeps = 300;
  c.sweeps = 4000;
  c.step = 1.0;
  c.tune_step = true;
  c.initial_width = 1.0;
  const VmcResult r = run_vmc(c, orbitals, spec("sm"), rng_factory(20240601));
  ASSERT_EQ(r.walkers.size(), 4u);
  std::vector<std::vector<double>> series;
  for (const auto& w : r.walkers) {
    ASSERT_EQ(w.energy.size(), 4000u);
    EXPECT_GT(w.acceptance(), 0.3);
    EXPECT_LT(w.acceptance(), 0.7);
    series.push_back(w.energy);
  }
  const MeanError e = batch_means(series, 20);
  expect_within_4_sigma(e, reference::exact_energy(n, alpha, omega), "E");
  const MeanError v = batch_means(centred_squares(series, e.mean), 20);
  expect_within_4_sigma(v, reference::exact_local_energy_variance(n, alpha, omega), "Var(E_L)");
}

TEST(VmcEnergy, PbpMatchesExactEnergy) { check_energy(Scheme::pbp); }
TEST(VmcEnergy, QsBatchedMatchesExactEnergy) { check_energy(Scheme::qs_batched); }

TEST(VmcEnergy, OneGaussianDensity) {
  // Detailed balance of pbp, N = 1: phi = Gaussian of frequency alpha, so
  // r^2 has mean 3/(2 alpha) and variance 3/(2 alpha^2) under |phi|^2.
  const double alpha = 0.8;
  HarmonicOscillatorOrbitals orbitals(1, alpha);
  std::vector<std::vector<double>> r2(4);
  for (int k = 0; k < 4; ++k) {
    UpdaterOptions o;
    Walker w(orbitals, make_updater("sm", o), rng_stream(77, std::uint64_t(k)), 1.0);
    w.place_random(1.0);
    for (int s = 0; s < 200; ++s) w.sweep(Scheme::pbp, 2.0);
    for (int s = 0; s < 20000; ++s) {
      w.sweep(Scheme::pbp, 2.0);
      r2[std::size_t(k)].push_back(w.positions().squaredNorm());
    }
  }
  const MeanError m = batch_means(r2, 20);
  expect_within_4_sigma(m, reference::exact_r2_mean(1, alpha), "<r^2>");
  const MeanError v = batch_means(centred_squares(r2, m.mean), 20);
  expect_within_4_sigma(v, reference::exact_r2_variance(1, alpha), "Var(r^2)");
}

TEST(VmcEnergy, QsRunsWithEveryStrategy) {
  // Whatever its bias, qs must run with every strategy and give finite
  // energies near E(alpha) (loose: a gross failure, not a bias, is sought).
  const Eigen::Index n = 10;
  const double alpha = 1.1;
  HarmonicOscillatorOrbitals orbitals(n, alpha);
  VmcConfig c;
  c.omega = 1.0;
  c.walkers = 2;
  c.equilibration_sweeps = 50;
  c.sweeps = 150;
  c.step = 0.6;
  for (Scheme scheme : {Scheme::qs, Scheme::qs_batched})
    for (const std::string name : {"sm", "delayed", "qr-givens"})
      for (Precision p : {Precision::double_, Precision::single}) {
        SCOPED_TRACE(name + " " + std::string(to_string(scheme)) + " " + std::string(to_string(p)));
        c.scheme = scheme;
        const VmcResult r = run_vmc(c, orbitals, spec(name, p), rng_factory(5));
        double mean = 0.0;
        for (const auto& w : r.walkers) {
          for (double e : w.energy) ASSERT_TRUE(std::isfinite(e));
          for (double e : w.energy) mean += e;
          EXPECT_GT(w.accepted, 0);
        }
        mean /= double(c.walkers * c.sweeps);
        EXPECT_NEAR(mean, reference::exact_energy(n, alpha, 1.0), 0.05 * reference::exact_energy(n, alpha, 1.0));
      }
}

TEST(VmcTuning, ReachesTargetThenFreezes) {
  const Eigen::Index n = 4;
  HarmonicOscillatorOrbitals orbitals(n, 1.0);
  VmcConfig c;
  c.walkers = 2;
  c.equilibration_sweeps = 600;
  c.sweeps = 3000;
  c.step = 0.05;  // far too small: acceptance near 1 at first
  c.tune_step = true;
  c.tuner.target = 0.4;
  c.tuner.block = 50;
  const VmcResult r = run_vmc(c, orbitals, spec("sm"), rng_factory(31));
  for (const auto& w : r.walkers) {
    ASSERT_EQ(w.step_history.size(), 12u);  // 600 / 50 blocks
    EXPECT_EQ(w.step, w.step_history.back()) << "measured with the last tuned step";
    EXPECT_GT(w.step, 4 * c.step);
    // Measured acceptance (3000 sweeps x 4 moves: sd ~ 0.01) near the target;
    // the tolerance 0.05 also covers the jitter of the last tuned step.
    EXPECT_NEAR(w.acceptance(), 0.4, 0.05);
  }
}

TEST(VmcTuning, StepTunerRules) {
  StepTunerOptions o;
  o.target = 0.5;
  o.max_factor = 2.0;
  o.min_step = 0.1;
  o.max_step = 3.0;
  StepTuner t(1.0, o);
  EXPECT_DOUBLE_EQ(t.update(25, 100), 0.5);   // acc/target = 0.5
  EXPECT_DOUBLE_EQ(t.update(0, 100), 0.25);   // factor clamped at 1/2
  EXPECT_DOUBLE_EQ(t.update(100, 100), 0.5);  // factor 2
  EXPECT_DOUBLE_EQ(t.update(0, 0), 0.5);      // empty block: unchanged
  EXPECT_DOUBLE_EQ(t.update(60, 100), 0.6);   // 1.2
  for (int i = 0; i < 5; ++i) t.update(100, 100);
  EXPECT_DOUBLE_EQ(t.step(), 3.0);  // max_step
  EXPECT_EQ(t.history().size(), 10u);
  t.freeze();
  EXPECT_TRUE(t.frozen());
  EXPECT_THROW(t.update(1, 2), std::logic_error);
  EXPECT_DOUBLE_EQ(t.step(), 3.0);
  EXPECT_THROW(StepTuner(10.0, o), std::invalid_argument);
  o.target = 1.0;
  EXPECT_THROW(StepTuner(1.0, o), std::invalid_argument);
}

TEST(VmcDivergence, DoubleAgainstItselfNeverDiverges) {
  HarmonicOscillatorOrbitals orbitals(10, 1.2);
  VmcConfig c;
  c.walkers = 2;
  c.equilibration_sweeps = 20;
  c.sweeps = 200;
  c.step = 0.6;
  for (Scheme scheme : {Scheme::pbp, Scheme::qs, Scheme::qs_batched}) {
    c.scheme = scheme;
    const ReferenceSpec ref{{&orbitals}, spec("sm")};
    const VmcResult r = run_vmc(c, orbitals, spec("sm"), rng_factory(9), &ref);
    for (const auto& w : r.walkers) {
      EXPECT_TRUE(w.divergence.compared);
      EXPECT_EQ(w.divergence.sweep, -1);
      EXPECT_EQ(w.divergence.move, -1);
      EXPECT_EQ(w.divergence.lockstep_sweeps, 220);
      EXPECT_EQ(w.divergence.max_ratio_rel_difference, 0.0);  // bit-identical
      EXPECT_EQ(w.divergence.expected_flips, 0.0);
      EXPECT_EQ(w.divergence.max_energy_difference, 0.0);
    }
  }
}

TEST(VmcDivergence, FloatAgainstDoubleReference) {
  HarmonicOscillatorOrbitals orbitals(10, 1.2);
  VmcConfig c;
  c.walkers = 3;
  c.equilibration_sweeps = 20;
  c.sweeps = 300;
  c.step = 0.6;
  const ReferenceSpec ref{{&orbitals}, spec("sm")};
  const VmcResult r = run_vmc(c, orbitals, spec("sm", Precision::single), rng_factory(9), &ref);
  for (const auto& w : r.walkers) {
    const Divergence& d = w.divergence;
    EXPECT_TRUE(d.compared);
    EXPECT_GE(d.sweep, -1);
    if (d.sweep >= 0) {
      EXPECT_EQ(d.move, d.sweep * 10 + d.electron);
      EXPECT_EQ(d.lockstep_sweeps, d.sweep + 1);
    } else {
      EXPECT_EQ(d.lockstep_sweeps, 320);
    }
    // Float ratios differ from double ones; a relative ratio difference is
    // unbounded near a node, the flip probability of a decision is <= 1.
    EXPECT_GT(d.max_ratio_rel_difference, 0.0);
    EXPECT_GT(d.max_flip_probability, 0.0);
    EXPECT_LE(d.max_flip_probability, 1.0);
    EXPECT_GE(d.expected_flips, d.max_flip_probability);
    EXPECT_TRUE(std::isfinite(d.max_energy_difference));
  }
}

TEST(VmcDivergence, PerturbedReferenceDivergesAndIsLocated) {
  // A reference with other orbitals (alpha 10% off) must part from the
  // subject early, and the point must be located consistently.
  HarmonicOscillatorOrbitals orbitals(4, 1.0), other(4, 1.1);
  VmcConfig c;
  c.walkers = 2;
  c.equilibration_sweeps = 0;
  c.sweeps = 500;
  c.step = 0.8;
  const ReferenceSpec ref{{&other}, spec("sm")};
  const VmcResult r = run_vmc(c, orbitals, spec("sm"), rng_factory(4), &ref);
  for (const auto& w : r.walkers) {
    const Divergence& d = w.divergence;
    ASSERT_GE(d.sweep, 0);
    EXPECT_GE(d.electron, 0);
    EXPECT_LT(d.electron, 4);
    EXPECT_EQ(d.move, d.sweep * 4 + d.electron);
    EXPECT_EQ(d.lockstep_sweeps, d.sweep + 1);
  }
}

// Analytic orbitals that report the matrix singular from the given
// evaluation on, as a strategy's refactorisation would.
class FailingOrbitals final : public OrbitalSet {
 public:
  FailingOrbitals(Eigen::Index n, int fail_at) : inner_(n, 1.0), fail_at_(fail_at) {}
  Eigen::Index size() const override { return inner_.size(); }
  std::string label() const override { return "failing"; }
  void evaluate_values(const Eigen::Matrix3Xd& r, Eigen::MatrixXd& v) const override {
    if (++calls_ >= fail_at_) throw SingularMatrixError("singular to working precision (test)");
    inner_.evaluate_values(r, v);
  }
  void evaluate_vgl(const Eigen::Matrix3Xd& r, OrbitalVGL& out) const override { inner_.evaluate_vgl(r, out); }

 private:
  HarmonicOscillatorOrbitals inner_;
  int fail_at_;
  mutable int calls_ = 0;
};

TEST(VmcFailure, StrategyFailureIsReportedNotThrown) {
  // pbp, N = 4: evaluation 1 builds A, then 4 per sweep; evaluation 1 + 4 * 30 + 2
  // fails in sweep 30 (the 11th measured sweep after 20 equilibration sweeps).
  FailingOrbitals orbitals(4, 1 + 4 * 30 + 2);
  VmcConfig c;
  c.equilibration_sweeps = 20;
  c.sweeps = 100;
  const WalkerResult r = run_walker(c, 0, orbitals, spec("sm"), rng_factory(1));
  EXPECT_FALSE(r.failure.empty());
  EXPECT_EQ(r.failed_sweep, 30);
  EXPECT_EQ(r.energy.size(), 10u);
  // The subject survives a failing reference; the comparison just stops.
  FailingOrbitals failing_ref(4, 1 + 4 * 5 + 1);
  HarmonicOscillatorOrbitals good(4, 1.0);
  const ReferenceSpec ref{{&failing_ref}, spec("sm")};
  const WalkerResult s = run_walker(c, 0, good, spec("sm"), rng_factory(1), &ref);
  EXPECT_TRUE(s.failure.empty());
  EXPECT_EQ(s.energy.size(), 100u);
  EXPECT_FALSE(s.divergence.reference_failure.empty());
  EXPECT_EQ(s.divergence.lockstep_sweeps, 5);
  EXPECT_EQ(s.divergence.sweep, -1);
}

TEST(VmcConfig, Validation) {
  HarmonicOscillatorOrbitals orbitals(4, 1.0);
  VmcConfig c;
  c.sweeps = 1;
  c.equilibration_sweeps = 0;
  EXPECT_NO_THROW(run_vmc(c, orbitals, spec("sm"), rng_factory(1)));
  auto bad = [&](auto mutate) {
    VmcConfig b = c;
    mutate(b);
    EXPECT_THROW(run_vmc(b, orbitals, spec("sm"), rng_factory(1)), std::invalid_argument);
  };
  bad([](VmcConfig& b) { b.walkers = 0; });
  bad([](VmcConfig& b) { b.omega = -1.0; });
  bad([](VmcConfig& b) { b.step = std::nan(""); });
  bad([](VmcConfig& b) { b.sweeps = -1; });
  bad([](VmcConfig& b) { b.tune_step = true; b.tuner.block = 0; });
  EXPECT_THROW(run_vmc(c, orbitals, spec("no-such"), rng_factory(1)), std::invalid_argument);
  EXPECT_THROW(run_walker(c, 1, orbitals, spec("sm"), rng_factory(1)), std::invalid_argument);
  HarmonicOscillatorOrbitals wrong(10, 1.0);
  const ReferenceSpec ref{{&wrong}, spec("sm")};
  EXPECT_THROW(run_vmc(c, orbitals, spec("sm"), rng_factory(1), &ref), std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab
