// Analytic harmonic-oscillator orbitals: shell structure and order, the
// Schrodinger equation to rounding, orthonormality by Gauss-Hermite
// quadrature, and gradient/Laplacian against central finite differences with
// a derived step and tolerance.
//
// Bounds used below (alpha-scaled Hermite functions, C = 1.086435 (alpha/pi)^{1/4}):
// - Cramer's inequality: |h_n(x)| <= C for every n and x.
// - By induction on h_n' = sqrt(alpha)(sqrt(n/2) h_{n-1} - sqrt((n+1)/2) h_{n+1})
//   and sqrt(n/2) + sqrt((n+1)/2) <= sqrt(2n+1):
//   |h_n^{(k)}| <= (alpha (2n + 2k - 1))^{k/2} C.
// A 3D orbital differentiated k times along one axis is therefore bounded by
// (alpha (2 n_max + 2k - 1))^{k/2} C^3.

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

double cramer_bound(double alpha) { return 1.086435 * std::pow(alpha / std::numbers::pi, 0.25); }

/// Gauss-Hermite rule with K nodes t_q, returned with the scaled weights
/// W_q = w_q exp(t_q^2), so that sum_q W_q g(t_q) = int g(t) dt exactly whenever
/// g(t) = exp(-t^2) p(t) with deg p <= 2K - 1. Computed in long double:
/// Golub-Welsch nodes refined by Newton on h_K (h_K' = sqrt(2K) h_{K-1} - t h_K
/// at alpha = 1), and W_q = 1 / sum_{k<K} h_k(t_q)^2 (the Christoffel function),
/// which keeps full relative accuracy where the Golub-Welsch weights (tiny at
/// the outer nodes, then multiplied by exp(t^2)) do not.
void gauss_hermite(int k, Eigen::VectorXd& nodes, Eigen::VectorXd& scaled_weights) {
  using LongDouble = long double;
  using MatrixLongDouble = Eigen::Matrix<LongDouble, Eigen::Dynamic, Eigen::Dynamic>;
  MatrixLongDouble jacobi = MatrixLongDouble::Zero(k, k);
  for (int i = 1; i < k; ++i) jacobi(i, i - 1) = jacobi(i - 1, i) = std::sqrt(0.5L * i);
  Eigen::SelfAdjointEigenSolver<MatrixLongDouble> es(jacobi);
  // Normalised Hermite functions (alpha = 1) h_0..h_k at t, in long double.
  auto hermite = [k](LongDouble t) {
    std::vector<LongDouble> h(static_cast<std::size_t>(k) + 1);
    h[0] = std::pow(std::numbers::pi_v<LongDouble>, -0.25L) * std::exp(-0.5L * t * t);
    if (k >= 1) h[1] = std::sqrt(2.0L) * t * h[0];
    for (int n = 1; n < k; ++n)
      h[n + 1] =
          std::sqrt(2.0L / (n + 1)) * t * h[n] - std::sqrt(LongDouble(n) / (n + 1)) * h[n - 1];
    return h;
  };
  nodes.resize(k);
  scaled_weights.resize(k);
  for (int q = 0; q < k; ++q) {
    LongDouble t = es.eigenvalues()(q);
    for (int it = 0; it < 3; ++it) {
      const auto h = hermite(t);
      t -= h[k] / (std::sqrt(2.0L * k) * h[k - 1] - t * h[k]);
    }
    const auto h = hermite(t);
    LongDouble sum = 0;
    for (int n = 0; n < k; ++n) sum += h[n] * h[n];
    nodes(q) = static_cast<double>(t);
    scaled_weights(q) = static_cast<double>(1.0L / sum);
  }
}

Eigen::Matrix3Xd random_points(Eigen::Index m, double width, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, width);
  Eigen::Matrix3Xd r(3, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = normal(rng);
  return r;
}

TEST(HarmonicOscillator, ShellCountsAndClosedShells) {
  const std::array<Eigen::Index, 10> closed = {1, 4, 10, 20, 35, 56, 84, 120, 165, 220};
  for (int n = 0; n < 10; ++n) EXPECT_EQ(ho_closed_shell_size(n), closed[n]);
  for (Eigen::Index n = 1; n <= 220; ++n) {
    const bool is_closed = std::find(closed.begin(), closed.end(), n) != closed.end();
    EXPECT_EQ(ho_is_closed_shell(n), is_closed) << "N = " << n;
  }
  const auto q = ho_quantum_numbers(220);
  ASSERT_EQ(q.size(), 220u);
  std::array<int, 10> per_shell{};
  for (std::size_t i = 0; i < q.size(); ++i) {
    const int shell = q[i][0] + q[i][1] + q[i][2];
    EXPECT_EQ(shell, ho_shell_of(static_cast<Eigen::Index>(i)));
    ++per_shell[static_cast<std::size_t>(shell)];
    if (i > 0) {  // shells non-decreasing; inside a shell (nx, ny) strictly descending
      const int prev = q[i - 1][0] + q[i - 1][1] + q[i - 1][2];
      ASSERT_LE(prev, shell);
      if (prev == shell) {
        EXPECT_TRUE(q[i - 1][0] > q[i][0] || (q[i - 1][0] == q[i][0] && q[i - 1][1] > q[i][1]));
      }
    }
  }
  for (int n = 0; n < 10; ++n) EXPECT_EQ(per_shell[n], (n + 1) * (n + 2) / 2) << "shell " << n;
}

TEST(HarmonicOscillator, DocumentedOrderAndOpenShells) {
  const auto q = ho_quantum_numbers(7);  // 1 + 3 + first 3 states of shell 2
  const std::vector<std::array<int, 3>> expected = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1},
                                                    {2, 0, 0}, {1, 1, 0}, {1, 0, 1}};
  EXPECT_EQ(q, expected);
  EXPECT_DOUBLE_EQ(ho_energy_sum(20), 1 * 1.5 + 3 * 2.5 + 6 * 3.5 + 10 * 4.5);
  EXPECT_DOUBLE_EQ(ho_energy_sum(5), 1 * 1.5 + 3 * 2.5 + 3.5);
  HarmonicOscillatorOrbitals orb(5, 1.0);
  EXPECT_EQ(orb.size(), 5);
  EXPECT_EQ(orb.max_shell(), 2);
}

TEST(HarmonicOscillator, RejectsBadArguments) {
  EXPECT_THROW(HarmonicOscillatorOrbitals(0, 1.0), std::invalid_argument);
  EXPECT_THROW(HarmonicOscillatorOrbitals(4, 0.0), std::invalid_argument);
  EXPECT_THROW(HarmonicOscillatorOrbitals(4, -1.0), std::invalid_argument);
  EXPECT_THROW(HarmonicOscillatorOrbitals(4, std::numeric_limits<double>::infinity()),
               std::invalid_argument);
  EXPECT_THROW(ho_quantum_numbers(-3), std::invalid_argument);
}

// 1D normalisation of h_0..h_30 by a Gauss-Hermite rule of K = 31 nodes: h_a h_b
// is exp(-t^2) times a polynomial of degree a + b <= 60 <= 2K - 1 in
// t = sqrt(alpha) x, so the rule is exact and any departure is rounding (or
// overflow in the recurrence, which would show as inf/nan).
TEST(HarmonicOscillator, HermiteFunctionsOrthonormalUpToOrder30) {
  constexpr int kMax = 30;
  const double alpha = 1.7;
  Eigen::VectorXd t, w;
  gauss_hermite(kMax + 1, t, w);
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(kMax + 1, kMax + 1);
  std::array<double, kMax + 1> h{};
  for (Eigen::Index q = 0; q < t.size(); ++q) {
    hermite_functions(t(q) / std::sqrt(alpha), alpha, kMax, h.data());
    const double weight = w(q) / std::sqrt(alpha);
    for (int a = 0; a <= kMax; ++a)
      for (int b = 0; b <= kMax; ++b) gram(a, b) += weight * h[a] * h[b];
  }
  // Rounding of a sum of 31 terms of size ~1 plus the nodes' own rounding:
  // a generous 1e3 eps.
  EXPECT_LT((gram - Eigen::MatrixXd::Identity(kMax + 1, kMax + 1)).cwiseAbs().maxCoeff(), 1e3 * kEps);
}

// 3D orthonormality through the OrbitalSet interface: phi_a phi_b is
// exp(-alpha r^2) times a polynomial of degree <= 2 n_max in each coordinate,
// so the tensor Gauss-Hermite rule with K = n_max + 1 nodes per axis
// (exact to degree 2K - 1 = 2 n_max + 1) integrates it exactly.
TEST(HarmonicOscillator, OrthonormalByGaussHermiteQuadrature) {
  for (const double alpha : {0.6, 1.0, 2.5}) {
    HarmonicOscillatorOrbitals orb(56, alpha);  // shells 0..5
    const int k = orb.max_shell() + 1;
    Eigen::VectorXd t, w;
    gauss_hermite(k, t, w);
    Eigen::Matrix3Xd r(3, k * k * k);
    Eigen::VectorXd weight(k * k * k);
    Eigen::Index col = 0;
    for (int a = 0; a < k; ++a)
      for (int b = 0; b < k; ++b)
        for (int c = 0; c < k; ++c, ++col) {
          r.col(col) << t(a), t(b), t(c);
          r.col(col) /= std::sqrt(alpha);
          weight(col) = w(a) * w(b) * w(c) / std::pow(alpha, 1.5);
        }
    Eigen::MatrixXd values;
    orb.evaluate_values(r, values);
    const Eigen::MatrixXd gram = values * weight.asDiagonal() * values.transpose();
    EXPECT_LT((gram - Eigen::MatrixXd::Identity(56, 56)).cwiseAbs().maxCoeff(), 1e3 * kEps)
        << "alpha = " << alpha;
  }
}

// -1/2 lap phi + alpha^2 r^2/2 phi = alpha (n + 3/2) phi. The three terms are
// computed separately, each with a few roundings, so the residual is bounded
// by c eps times the sum of their magnitudes; c = 32 covers the ~10 operations
// in the Laplacian's three products and sums.
TEST(HarmonicOscillator, SchrodingerEquationToRounding) {
  for (const double alpha : {0.5, 1.0, 2.3}) {
    HarmonicOscillatorOrbitals orb(220, alpha);  // shells 0..9
    const Eigen::Matrix3Xd r = random_points(400, 1.5 / std::sqrt(alpha), 17);
    OrbitalVGL vgl;
    orb.evaluate_vgl(r, vgl);
    double worst = 0.0;
    for (Eigen::Index j = 0; j < r.cols(); ++j) {
      const double r2 = r.col(j).squaredNorm();
      for (Eigen::Index i = 0; i < orb.size(); ++i) {
        const double phi = vgl.value(i, j);
        const double kinetic = -0.5 * vgl.laplacian(i, j);
        const double potential = 0.5 * alpha * alpha * r2 * phi;
        const double energy = orb.orbital_energy(i) * phi;
        const double scale = std::abs(kinetic) + std::abs(potential) + std::abs(energy);
        if (scale == 0.0) continue;
        worst = std::max(worst, std::abs(kinetic + potential - energy) / (kEps * scale));
      }
    }
    EXPECT_LT(worst, 32.0) << "alpha = " << alpha;
  }
}

// Central differences. For f with |f| <= C^3 (Cramer) evaluated with absolute
// error <= gamma eps C^3 (gamma = 8 (n_max + 2): the recurrence's roundings,
// generously), and |d^k f / dx^k| <= K_k^k C^3 with K_k^2 = alpha (2 n_max + 2k - 1):
// - gradient, (f(x+h) - f(x-h)) / 2h: error <= h^2 K_3^3 C^3 / 6 + gamma eps C^3 / h,
//   minimised at h = (3 gamma eps)^{1/3} / K_3, i.e. h ~ eps^{1/3};
// - each second difference (f(x+h) - 2 f(x) + f(x-h)) / h^2: error
//   <= h^2 K_4^4 C^3 / 12 + 4 gamma eps C^3 / h^2, minimised at
//   h = (48 gamma eps)^{1/4} / K_4, i.e. h ~ eps^{1/4}; the Laplacian sums three.
// The asserted tolerance is the bound itself (plus the analytic side's own
// rounding, negligible at these levels).
TEST(HarmonicOscillator, GradientAndLaplacianMatchFiniteDifferences) {
  for (const double alpha : {0.7, 1.0, 3.0}) {
    for (const Eigen::Index n : {Eigen::Index{4}, Eigen::Index{20}, Eigen::Index{84}}) {
      HarmonicOscillatorOrbitals orb(n, alpha);
      const int nm = orb.max_shell();
      const double c3 = std::pow(cramer_bound(alpha), 3);
      const double gamma = 8.0 * (nm + 2);
      const double k3 = std::sqrt(alpha * (2 * nm + 5));
      const double k4 = std::sqrt(alpha * (2 * nm + 7));
      const double hg = std::cbrt(3 * gamma * kEps) / k3;
      const double hl = std::pow(48 * gamma * kEps, 0.25) / k4;
      const double tol_g = hg * hg * std::pow(k3, 3) * c3 / 6 + gamma * kEps * c3 / hg;
      const double tol_l = 3 * (hl * hl * std::pow(k4, 4) * c3 / 12 + 4 * gamma * kEps * c3 / (hl * hl));

      const Eigen::Matrix3Xd r = random_points(50, 1.2 / std::sqrt(alpha), 5);
      OrbitalVGL vgl;
      orb.evaluate_vgl(r, vgl);
      Eigen::MatrixXd fd_lap = -6.0 * vgl.value / (hl * hl);
      Eigen::MatrixXd plus, minus;
      for (int d = 0; d < 3; ++d) {
        Eigen::Matrix3Xd rp = r, rm = r;
        rp.row(d).array() += hg;
        rm.row(d).array() -= hg;
        orb.evaluate_values(rp, plus);
        orb.evaluate_values(rm, minus);
        const Eigen::MatrixXd fd_grad = (plus - minus) / (2 * hg);
        for (Eigen::Index i = 0; i < n; ++i) {
          const double err = (fd_grad.row(i) - vgl.gradient.row(3 * i + d)).cwiseAbs().maxCoeff();
          ASSERT_LE(err, tol_g) << "alpha " << alpha << " orbital " << i << " d " << d;
        }
        rp = r;
        rm = r;
        rp.row(d).array() += hl;
        rm.row(d).array() -= hl;
        orb.evaluate_values(rp, plus);
        orb.evaluate_values(rm, minus);
        fd_lap += (plus + minus) / (hl * hl);
      }
      const double err_l = (fd_lap - vgl.laplacian).cwiseAbs().maxCoeff();
      EXPECT_LE(err_l, tol_l) << "alpha " << alpha << " N " << n;
      // The bound should not be vacuous: the Laplacian itself is much larger.
      EXPECT_LT(tol_l, 1e-3 * vgl.laplacian.cwiseAbs().maxCoeff());
    }
  }
}

TEST(HarmonicOscillator, ValuesAgreeBetweenEntryPointsAndColumns) {
  HarmonicOscillatorOrbitals orb(35, 1.3);
  const Eigen::Matrix3Xd r = random_points(20, 1.0, 3);
  Eigen::MatrixXd values;
  OrbitalVGL vgl;
  orb.evaluate_values(r, values);
  orb.evaluate_vgl(r, vgl);
  EXPECT_EQ(values, vgl.value);
  EXPECT_EQ(vgl.gradient.rows(), 3 * 35);
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    Eigen::MatrixXd one;
    orb.evaluate_values(Eigen::Matrix3Xd(r.col(j)), one);
    EXPECT_EQ(one.col(0), values.col(j));
  }
  // Ground state: (alpha/pi)^{3/4} exp(-alpha r^2 / 2).
  const double r2 = r.col(0).squaredNorm();
  EXPECT_NEAR(values(0, 0), std::pow(1.3 / std::numbers::pi, 0.75) * std::exp(-0.65 * r2), 4 * kEps);
}

}  // namespace
}  // namespace slaterlab
