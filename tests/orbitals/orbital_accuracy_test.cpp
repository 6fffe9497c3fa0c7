// measure_orbital_accuracy: exact against itself is zero; known perturbations
// are reported exactly (max, RMS, relative, in eps); the epsilon follows the
// approximate set's precision; chunked evaluation changes nothing; bad input
// is refused.

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "slaterlab/strategies/orbitals/orbital_accuracy.hpp"

namespace slaterlab {
namespace {

Eigen::Matrix3Xd gaussian_points(Eigen::Index m, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::Matrix3Xd r(3, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = normal(rng);
  return r;
}

/// Another set plus fixed offsets: value + a, every gradient component + b,
/// Laplacian + c.
class Offset final : public OrbitalSet {
 public:
  Offset(const OrbitalSet& base, double a, double b, double c) : base_(base), a_(a), b_(b), c_(c) {}
  Eigen::Index size() const override { return base_.size(); }
  std::string label() const override { return "offset"; }
  void evaluate_values(const Eigen::Matrix3Xd& r, Eigen::MatrixXd& v) const override {
    base_.evaluate_values(r, v);
    v.array() += a_;
  }
  void evaluate_vgl(const Eigen::Matrix3Xd& r, OrbitalVGL& out) const override {
    base_.evaluate_vgl(r, out);
    out.value.array() += a_;
    out.gradient.array() += b_;
    out.laplacian.array() += c_;
  }

 private:
  const OrbitalSet& base_;
  double a_, b_, c_;
};

TEST(OrbitalAccuracy, ExactAgainstItselfIsZero) {
  HarmonicOscillatorOrbitals ho(10, 1.0);
  const Eigen::Matrix3Xd r = gaussian_points(300, 1);
  const OrbitalAccuracy acc = measure_orbital_accuracy(ho, ho, r);
  for (const QuantityError* q : {&acc.value, &acc.gradient, &acc.laplacian}) {
    EXPECT_EQ(q->max_abs, 0.0);
    EXPECT_EQ(q->rms_abs, 0.0);
    EXPECT_EQ(q->max_eps, 0.0);
    EXPECT_GT(q->max_exact, 0.0);
  }
  EXPECT_EQ(acc.epsilon, std::numeric_limits<double>::epsilon());
  EXPECT_EQ(acc.orbitals, 10);
  EXPECT_EQ(acc.samples, 300);
  EXPECT_EQ(acc.approx_label, "analytic");
  EXPECT_EQ(acc.exact_label, "analytic");
}

// 2500 samples: three chunks of evaluation (1024 each), so this also checks
// that the chunks are combined correctly (max of maxes, pooled sum of squares).
TEST(OrbitalAccuracy, KnownOffsetsAreReportedExactly) {
  HarmonicOscillatorOrbitals ho(4, 0.8);
  const double a = 1e-6, b = -2e-5, c = 3e-4;
  Offset approx(ho, a, b, c);
  const Eigen::Matrix3Xd r = gaussian_points(2500, 2);
  const OrbitalAccuracy acc = measure_orbital_accuracy(approx, ho, r);
  OrbitalVGL exact;
  ho.evaluate_vgl(r, exact);
  const double eps = std::numeric_limits<double>::epsilon();
  // The offsets survive the round trip through (x + a) - x to a few ulps of x.
  const double slack = 8 * eps;
  EXPECT_NEAR(acc.value.max_abs, a, slack);
  EXPECT_NEAR(acc.value.rms_abs, a, slack);
  EXPECT_NEAR(acc.gradient.max_abs, std::abs(b), slack * 10);
  EXPECT_NEAR(acc.gradient.rms_abs, std::abs(b), slack * 10);
  EXPECT_NEAR(acc.laplacian.max_abs, c, slack * 100);
  EXPECT_DOUBLE_EQ(acc.value.max_exact, exact.value.cwiseAbs().maxCoeff());
  EXPECT_DOUBLE_EQ(acc.gradient.max_exact, exact.gradient.cwiseAbs().maxCoeff());
  EXPECT_DOUBLE_EQ(acc.laplacian.max_exact, exact.laplacian.cwiseAbs().maxCoeff());
  EXPECT_DOUBLE_EQ(acc.value.max_rel, acc.value.max_abs / acc.value.max_exact);
  EXPECT_DOUBLE_EQ(acc.value.rms_rel, acc.value.rms_abs / acc.value.max_exact);
  EXPECT_DOUBLE_EQ(acc.laplacian.max_eps, acc.laplacian.max_rel / eps);
  EXPECT_DOUBLE_EQ(acc.gradient.rms_eps, acc.gradient.rms_rel / eps);
  EXPECT_EQ(acc.samples, 2500);
}

TEST(OrbitalAccuracy, RmsIsOverAllEntries) {
  HarmonicOscillatorOrbitals ho(4, 1.0);
  const Eigen::Matrix3Xd r = gaussian_points(700, 3);
  // Compare the analytic set with a coarse B-spline and recompute the RMS by hand.
  BsplineBoxRule rule;
  rule.grid = 24;
  BsplineOrbitals<double> s(ho, rule);
  const OrbitalAccuracy acc = measure_orbital_accuracy(s, ho, r);
  OrbitalVGL e, a;
  ho.evaluate_vgl(r, e);
  s.evaluate_vgl(r, a);
  EXPECT_NEAR(acc.gradient.rms_abs, std::sqrt((a.gradient - e.gradient).squaredNorm() / double(3 * 4 * 700)),
              1e-12 * acc.gradient.rms_abs);
  EXPECT_DOUBLE_EQ(acc.laplacian.max_abs, (a.laplacian - e.laplacian).cwiseAbs().maxCoeff());
  EXPECT_EQ(acc.approx_label, "bspline-double");
}

TEST(OrbitalAccuracy, EpsilonFollowsThePrecisionOfTheApproximateSet) {
  HarmonicOscillatorOrbitals ho(4, 1.0);
  BsplineBoxRule rule;
  rule.grid = 8;
  BsplineOrbitals<float> sf(ho, rule);
  BsplineOrbitals<double> sd(ho, rule);
  EXPECT_EQ(orbital_set_epsilon(sf), std::ldexp(1.0, -23));
  EXPECT_EQ(orbital_set_epsilon(sd), std::ldexp(1.0, -52));
  EXPECT_EQ(orbital_set_epsilon(ho), std::ldexp(1.0, -52));
  const Eigen::Matrix3Xd r = gaussian_points(50, 4);
  const OrbitalAccuracy acc = measure_orbital_accuracy(sf, ho, r);
  EXPECT_EQ(acc.epsilon, std::ldexp(1.0, -23));
  EXPECT_DOUBLE_EQ(acc.value.max_eps, acc.value.max_rel / std::ldexp(1.0, -23));
  const OrbitalAccuracy explicit_eps = measure_orbital_accuracy(sf, ho, r, 1e-3);
  EXPECT_DOUBLE_EQ(explicit_eps.value.max_eps, acc.value.max_rel / 1e-3);
}

// The figures documented with BsplineBoxRule: N = 20, alpha = 1, default grid
// (G = 78), 20000 samples from a Gaussian of the density's width
// (<x^2> = sum_i (n_i + 3/2) / (3 N alpha)). Printed, and held to 1.5x the
// documented values so that a regression in the spline or the rule shows.
TEST(OrbitalAccuracy, DefaultGridFiguresForTwentyOrbitals) {
  const Eigen::Index n = 20;
  HarmonicOscillatorOrbitals ho(n, 1.0);
  BsplineOrbitals<float> sf(ho);
  BsplineOrbitals<double> sd(ho);
  ASSERT_EQ(sd.box().grid, 78);
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> normal(0.0, std::sqrt(ho_energy_sum(n) / (3.0 * double(n))));
  Eigen::Matrix3Xd r(3, 20000);
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = normal(rng);
  const OrbitalAccuracy af = measure_orbital_accuracy(sf, ho, r);
  const OrbitalAccuracy ad = measure_orbital_accuracy(sd, ho, r);
  for (const OrbitalAccuracy* a : {&af, &ad}) {
    std::printf("%-15s G=%ld  max_rel / rms_rel: value %.2e / %.2e  gradient %.2e / %.2e  laplacian %.2e / %.2e"
                "  (value max %.3g eps)\n",
                a->approx_label.c_str(), long(sd.box().grid), a->value.max_rel, a->value.rms_rel,
                a->gradient.max_rel, a->gradient.rms_rel, a->laplacian.max_rel, a->laplacian.rms_rel,
                a->value.max_eps);
    EXPECT_LT(a->value.max_rel, 1.5 * 6e-4);
    EXPECT_LT(a->value.rms_rel, 1.5 * 8e-5);
    EXPECT_LT(a->gradient.max_rel, 1.5 * 3.5e-3);
    EXPECT_LT(a->gradient.rms_rel, 1.5 * 3e-4);
    EXPECT_LT(a->laplacian.max_rel, 1.5 * 4e-2);
    EXPECT_LT(a->laplacian.rms_rel, 1.5 * 3.3e-3);
  }
  // Interpolation dominates: float and double agree to far better than their error.
  EXPECT_NEAR(af.value.max_abs, ad.value.max_abs, 1e-3 * ad.value.max_abs);
  EXPECT_NEAR(af.laplacian.rms_abs, ad.laplacian.rms_abs, 1e-3 * ad.laplacian.rms_abs);
}

TEST(OrbitalAccuracy, RefusesBadInput) {
  HarmonicOscillatorOrbitals four(4, 1.0), ten(10, 1.0);
  const Eigen::Matrix3Xd r = gaussian_points(5, 5);
  EXPECT_THROW(measure_orbital_accuracy(four, ten, r), std::invalid_argument);
  EXPECT_THROW(measure_orbital_accuracy(four, four, Eigen::Matrix3Xd(3, 0)), std::invalid_argument);
  EXPECT_THROW(measure_orbital_accuracy(four, four, r, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab
