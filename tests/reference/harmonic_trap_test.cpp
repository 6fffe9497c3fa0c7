// Tests of the exact harmonic-trap results (reference/harmonic_trap.hpp)
// against values worked out by hand.
//
// Hand values. S(N) = sum_i (n_i + 3/2):
//   N = 1:  1 * 3/2                       = 3/2
//   N = 4:  3/2 + 3 * 5/2                 = 9
//   N = 10: 9 + 6 * 7/2                   = 30
//   N = 20: 30 + 10 * 9/2                 = 75
//   N = 35: 75 + 15 * 11/2                = 157.5
//   open:   N = 2: 3/2 + 5/2 = 4;  N = 5: 9 + 7/2 = 12.5
// Every quantity is a handful of exact-in-binary operations (halves, small
// integers) or one division, so equality is asserted to a few ulp.
//
// Var(R2), N = 2 with states (000), (100), by the textbook formula
// Var = sum_i <i|f^2|i> - sum_{i,k} |<i|f|k>|^2 and Gaussian moments
// (sigma^2 = 1/(2 alpha) per axis; <x^2>_n = (2n+1) sigma^2,
// <x^4>_n = 3 (2n^2 + 2n + 1) sigma^4):
//   <0|r^4|0> = 15 sigma^4,  <1x|r^4|1x> = (15 + 3 + 3 + 2 (3 + 3 + 1)) sigma^4 = 35 sigma^4,
//   <0|r^2|0> = 3 sigma^2,   <1x|r^2|1x> = 5 sigma^2,  <0|r^2|1x> = 0 (parity),
//   Var = (15 + 35 - 9 - 25) sigma^4 = 16 sigma^4 = 4 / alpha^2,
// an independent route to what the excitation sum of the header gives.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "slaterlab/reference/harmonic_trap.hpp"

namespace slaterlab::reference {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

void expect_close(double actual, double expected, double ulps = 4.0) {
  EXPECT_LE(std::abs(actual - expected), ulps * kEps * std::abs(expected))
      << "actual " << actual << " expected " << expected;
}

TEST(HarmonicTrap, ClosedShellSizesAndShells) {
  const std::vector<Eigen::Index> closed = {1, 4, 10, 20, 35, 56, 84, 120, 165, 220};
  for (int k = 0; k < static_cast<int>(closed.size()); ++k) {
    EXPECT_EQ(trap_closed_shell_size(k), closed[k]);
    EXPECT_TRUE(is_closed_shell(closed[k]));
    EXPECT_EQ(trap_shell_of(closed[k] - 1), k);  // last state of shell k
    EXPECT_EQ(trap_shell_of(closed[k]), k + 1);  // first state of shell k + 1
  }
  for (Eigen::Index n : {0, 2, 3, 5, 9, 11, 19, 21, 219})
    EXPECT_FALSE(is_closed_shell(n)) << n;
  EXPECT_EQ(trap_shell_of(0), 0);
  EXPECT_EQ(trap_shell_of(1), 1);
  EXPECT_EQ(trap_shell_of(3), 1);
  EXPECT_EQ(trap_shell_of(4), 2);
  EXPECT_THROW(trap_shell_of(-1), std::invalid_argument);
  EXPECT_THROW(trap_closed_shell_size(-1), std::invalid_argument);
}

TEST(HarmonicTrap, EnergySumsByHand) {
  EXPECT_EQ(trap_energy_sum(1), 1.5);
  EXPECT_EQ(trap_energy_sum(4), 9.0);
  EXPECT_EQ(trap_energy_sum(10), 30.0);
  EXPECT_EQ(trap_energy_sum(20), 75.0);
  EXPECT_EQ(trap_energy_sum(35), 157.5);
  EXPECT_EQ(trap_energy_sum(2), 4.0);
  EXPECT_EQ(trap_energy_sum(5), 12.5);
  EXPECT_THROW(trap_energy_sum(0), std::invalid_argument);
}

TEST(HarmonicTrap, ExactEnergyByHand) {
  // E = (alpha/2 + w^2/(2 alpha)) S.
  expect_close(exact_energy(1, 1.0, 1.0), 1.5);        // one particle in its ground state: 3w/2
  expect_close(exact_energy(1, 2.0, 1.0), 1.5 * 1.25);  // (1 + 1/4) * 3/2
  expect_close(exact_energy(4, 2.0, 1.0), 9.0 * 1.25);
  expect_close(exact_energy(4, 0.5, 1.0), 9.0 * 1.25);  // alpha -> w^2/alpha symmetry
  expect_close(exact_energy(10, 1.0, 1.0), 30.0);
  expect_close(exact_energy(20, 3.0, 3.0), 225.0);  // w S at alpha = w
  EXPECT_THROW(exact_energy(4, 0.0, 1.0), std::invalid_argument);
  EXPECT_THROW(exact_energy(4, 1.0, -1.0), std::invalid_argument);
  EXPECT_THROW(exact_energy(4, std::nan(""), 1.0), std::invalid_argument);
}

TEST(HarmonicTrap, MinimumAtAlphaEqualsOmega) {
  for (Eigen::Index n : {1, 4, 10, 20}) {
    for (double w : {0.5, 1.0, 2.0}) {
      const double e_min = exact_energy(n, w, w);
      expect_close(e_min, w * trap_energy_sum(n));
      for (double f : {0.5, 0.9, 0.99, 1.01, 1.1, 2.0})
        EXPECT_GT(exact_energy(n, f * w, w), e_min) << n << " " << w << " " << f;
    }
  }
}

TEST(HarmonicTrap, LocalEnergyClosedForm) {
  // alpha = w: constant, whatever R2.
  for (double r2 : {0.0, 1.0, 37.5}) expect_close(exact_local_energy(10, 1.5, 1.5, r2), 45.0);
  // Its mean over <R2> = S / alpha is E(alpha).
  for (double alpha : {0.6, 1.0, 1.7}) {
    expect_close(exact_local_energy(4, alpha, 1.0, exact_r2_mean(4, alpha)),
                 exact_energy(4, alpha, 1.0), 8.0);
  }
}

TEST(HarmonicTrap, R2MomentsOfOneGaussian) {
  for (double alpha : {0.5, 1.0, 2.0}) {
    expect_close(exact_r2_mean(1, alpha), 1.5 / alpha);
    expect_close(exact_r2_variance(1, alpha), 1.5 / (alpha * alpha));
  }
}

TEST(HarmonicTrap, R2VarianceOfTwoStatesByHand) {
  for (double alpha : {0.5, 1.0, 3.0}) {
    expect_close(exact_r2_variance({{0, 0, 0}, {1, 0, 0}}, alpha), 4.0 / (alpha * alpha));
    // Which axis is excited does not matter.
    expect_close(exact_r2_variance({{0, 0, 1}, {0, 0, 0}}, alpha), 4.0 / (alpha * alpha));
  }
}

TEST(HarmonicTrap, R2VarianceOfClosedShells) {
  // N = 4: (000) contributes 3 * 1*2, each (100)-type state (1+1)(1+2) + 2 * 1*2 = 10:
  // (6 + 30) / (4 alpha^2) = 9 / alpha^2.
  expect_close(exact_r2_variance(4, 1.0), 9.0);
  expect_close(exact_r2_variance(4, 2.0), 9.0 / 4.0);
  // The closed-shell overload equals the explicit list in any order.
  std::vector<OscillatorState> shells = {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {0, 0, 0}};
  expect_close(exact_r2_variance(shells, 1.3), exact_r2_variance(4, 1.3));
  EXPECT_THROW(exact_r2_variance(5, 1.0), std::invalid_argument);
  EXPECT_THROW(exact_r2_variance({{0, 0, 0}, {0, 0, 0}}, 1.0), std::invalid_argument);
  EXPECT_THROW(exact_r2_variance(std::vector<OscillatorState>{}, 1.0), std::invalid_argument);
}

TEST(HarmonicTrap, LocalEnergyVariance) {
  // Zero at alpha = w; ((w^2 - alpha^2)/2)^2 Var(R2) otherwise.
  EXPECT_EQ(exact_local_energy_variance(10, 1.0, 1.0), 0.0);
  expect_close(exact_local_energy_variance(1, 2.0, 1.0), (1.5 * 1.5) * (1.5 / 4.0));
  expect_close(exact_local_energy_variance(4, 2.0, 1.0), (1.5 * 1.5) * (9.0 / 4.0));
}

}  // namespace
}  // namespace slaterlab::reference
