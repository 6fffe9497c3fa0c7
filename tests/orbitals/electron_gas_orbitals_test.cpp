// Plane-wave orbitals of the electron gas (strategies/orbitals/electron_gas.hpp):
// closed shells against hand counts, the refusal of open shells, the
// documented order, values against the defining formula, gradients and
// Laplacians against finite differences, exact discrete orthonormality on a
// grid, the kinetic identity, the B-spline grid rule and the spline errors
// against the cubic-spline interpolation bounds.
//
// Hand counts: r3(m) = #{n in Z^3 : |n|^2 = m} = 1, 6, 12, 8, 6, 24, 24, 0, 12,
// 30 for m = 0..9 (m = 7 is not a sum of three squares), so the closed shells
// are 1, 7, 19, 27, 33, 57, 81, 81 (no new shell), 93, 123. The counts up to
// 8192 (131 shells, the last 8121, the next 8217) were counted by a separate
// enumeration of the cube |n_d| <= 16.

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"
#include "slaterlab/strategies/orbitals/orbital_accuracy.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kTwoPi = 2.0 * std::numbers::pi;

Eigen::Matrix3Xd uniform_points(Eigen::Index m, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Eigen::Matrix3Xd r(3, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = u(rng);
  return r;
}

TEST(ElectronGas, ClosedShellsByHand) {
  const std::vector<Eigen::Index> expected = {1, 7, 19, 27, 33, 57, 81, 93, 123};
  EXPECT_EQ(gas_closed_shells(123), expected);
  EXPECT_EQ(gas_closed_shells(130), expected);
  for (Eigen::Index n : expected) EXPECT_TRUE(gas_is_closed_shell(n)) << n;
  for (Eigen::Index n : {0, -1, 2, 6, 8, 20, 100, 122, 124}) EXPECT_FALSE(gas_is_closed_shell(n)) << n;
  EXPECT_TRUE(gas_closed_shells(0).empty());
}

TEST(ElectronGas, ClosedShellsTo8192) {
  const auto shells = gas_closed_shells(8192);
  ASSERT_EQ(shells.size(), 131u);
  EXPECT_EQ(shells.back(), 8121);
  EXPECT_TRUE(std::is_sorted(shells.begin(), shells.end()));
  for (Eigen::Index n : {257, 1021, 2109, 4169}) EXPECT_TRUE(gas_is_closed_shell(n)) << n;
  EXPECT_FALSE(gas_is_closed_shell(8192));
  EXPECT_TRUE(gas_is_closed_shell(8217));
  // Every closed shell is odd: the constant plus +-n pairs.
  for (Eigen::Index n : shells) EXPECT_EQ(n % 2, 1) << n;
}

TEST(ElectronGas, OpenShellsAreRefusedNamingTheNearest) {
  try {
    ElectronGasOrbitals(100, 1.0);
    FAIL() << "N = 100 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "electron gas: N = 100 per spin is not a closed shell; the nearest are 93 and 123");
  }
  try {
    gas_require_closed_shell(2);
    FAIL() << "N = 2 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "electron gas: N = 2 per spin is not a closed shell; the nearest are 1 and 7");
  }
  EXPECT_THROW(ElectronGasOrbitals(0, 1.0), std::invalid_argument);
  EXPECT_THROW(ElectronGasOrbitals(8192, 1.0), std::invalid_argument);
  EXPECT_THROW(ElectronGasOrbitals(7, 0.0), std::invalid_argument);
  EXPECT_THROW(ElectronGasOrbitals(7, -1.0), std::invalid_argument);
  EXPECT_THROW(ElectronGasOrbitals(7, std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_NO_THROW(ElectronGasOrbitals(7, 2.0));
}

TEST(ElectronGas, DocumentedOrder) {
  const ElectronGasOrbitals gas(33, 1.0);
  ASSERT_EQ(gas.size(), 33);
  using W = std::array<int, 3>;
  // Shell |n|^2 = 1, then the first representatives of |n|^2 = 2, descending.
  const std::vector<W> expected = {{0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 1},
                                   {1, 1, 0}, {1, 1, 0}, {1, 0, 1}, {1, 0, 1}, {1, 0, -1}, {1, 0, -1},
                                   {1, -1, 0}, {1, -1, 0}, {0, 1, 1}, {0, 1, 1}, {0, 1, -1}, {0, 1, -1}};
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(gas.wave_numbers(Eigen::Index(i)), expected[i]) << i;
  // The representatives and their negatives are exactly the ball |n|^2 <= 4.
  std::set<W> ball;
  for (Eigen::Index i = 0; i < gas.size(); ++i) {
    const W n = gas.wave_numbers(i);
    ball.insert(n);
    ball.insert({-n[0], -n[1], -n[2]});
    const int first = n[0] != 0 ? n[0] : (n[1] != 0 ? n[1] : n[2]);
    EXPECT_GE(first, 0) << i;
  }
  std::set<W> expected_ball;
  for (int a = -2; a <= 2; ++a)
    for (int b = -2; b <= 2; ++b)
      for (int c = -2; c <= 2; ++c)
        if (a * a + b * b + c * c <= 4) expected_ball.insert({a, b, c});
  EXPECT_EQ(ball, expected_ball);
  EXPECT_EQ(gas.max_wave_number(), 2);
  EXPECT_EQ(gas.k_vector(1), Eigen::Vector3d(kTwoPi, 0, 0));
}

// Values against sqrt(2) cos / sin of k.r computed directly, at positions up
// to 3 cells away (|x / L| <= 3). The orbitals are within sqrt(2) (2 pi |n|_1
// (3 + 1) + 8) eps of the plane wave (electron_gas.cpp); the direct phase
// k.r (|k.r| <= 2 pi |n|_1 3) carries about 2 pi |n|_1 3 eps, its cos/sin
// 1 ulp more: together within sqrt(2) (14 pi |n|_1 + 16) eps.
TEST(ElectronGas, ValuesAreThePlaneWaves) {
  const double box = 3.7;
  const ElectronGasOrbitals gas(123, box);
  const Eigen::Matrix3Xd r = uniform_points(50, -3.0 * box, 3.0 * box, 11);
  Eigen::MatrixXd v;
  gas.evaluate_values(r, v);
  OrbitalVGL vgl;
  gas.evaluate_vgl(r, vgl);
  EXPECT_EQ(v, vgl.value);  // the same arithmetic in both
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    EXPECT_EQ(v(0, j), 1.0);
    for (Eigen::Index i = 1; i < gas.size(); ++i) {
      const auto& n = gas.wave_numbers(i);
      const double phase = gas.k_vector(i).dot(r.col(j));
      const bool is_cos = i % 2 == 1;
      const double exact = std::numbers::sqrt2 * (is_cos ? std::cos(phase) : std::sin(phase));
      const double n1 = std::abs(n[0]) + std::abs(n[1]) + std::abs(n[2]);
      const double tol = std::numbers::sqrt2 * (14.0 * std::numbers::pi * n1 + 16.0) * kEps;
      ASSERT_NEAR(v(i, j), exact, tol) << "orbital " << i << " position " << j;
    }
  }
}

// Gradients and Laplacians against central differences of the values with
// step h: truncation |k|^3 h^2 / 6 sqrt(2) (gradient) and |k|^4 h^2 / 12
// sqrt(2) (second difference, per direction), rounding about 4 sqrt(2) eps
// / (2h) and 4 sqrt(2) eps / h^2 per direction.
TEST(ElectronGas, DerivativesAgreeWithFiniteDifferences) {
  const double box = 2.0;
  const ElectronGasOrbitals gas(57, box);
  const Eigen::Matrix3Xd r = uniform_points(5, -box, box, 5);
  const double h = 1e-4 * box;
  OrbitalVGL vgl;
  gas.evaluate_vgl(r, vgl);
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    Eigen::VectorXd lap_fd = Eigen::VectorXd::Zero(gas.size());
    Eigen::MatrixXd v0;
    gas.evaluate_values(r.col(j), v0);
    for (int d = 0; d < 3; ++d) {
      Eigen::Matrix3Xd plus = r.col(j), minus = r.col(j);
      plus(d, 0) += h;
      minus(d, 0) -= h;
      Eigen::MatrixXd vp, vm;
      gas.evaluate_values(plus, vp);
      gas.evaluate_values(minus, vm);
      for (Eigen::Index i = 0; i < gas.size(); ++i) {
        const double k = gas.k_vector(i).norm();
        const double grad_tol = std::numbers::sqrt2 * (k * k * k * h * h / 6.0 + 4.0 * kEps / (2.0 * h));
        EXPECT_NEAR(vgl.gradient(3 * i + d, j), (vp(i, 0) - vm(i, 0)) / (2.0 * h), grad_tol) << i;
      }
      lap_fd += ((vp - 2.0 * v0 + vm) / (h * h)).col(0);
    }
    for (Eigen::Index i = 0; i < gas.size(); ++i) {
      const double k = gas.k_vector(i).norm();
      const double lap_tol = 3.0 * std::numbers::sqrt2 * (std::pow(k, 4) * h * h / 12.0 + 4.0 * kEps / (h * h));
      EXPECT_NEAR(vgl.laplacian(i, j), lap_fd(i), lap_tol) << i;
      // The Helmholtz identity holds by construction, to one rounding.
      EXPECT_NEAR(vgl.laplacian(i, j), -gas.k_vector(i).squaredNorm() * vgl.value(i, j),
                  4.0 * kEps * k * k * std::numbers::sqrt2);
    }
  }
}

// On a uniform grid of G points per direction the discrete mean of
// e^{i 2 pi m x / L} is exactly 0 for 0 < |m| < G, so the products of two
// orbitals (wave numbers up to 2 n_max) average to delta_ij when G > 2 n_max:
// orthonormality in the cell's mean square. Rounding: G^3 terms of size <= 2.
TEST(ElectronGas, OrthonormalOnTheCell) {
  const double box = 1.3;
  const ElectronGasOrbitals gas(81, box);
  const int g = 2 * gas.max_wave_number() + 1;
  Eigen::Matrix3Xd r(3, g * g * g);
  Eigen::Index col = 0;
  for (int a = 0; a < g; ++a)
    for (int b = 0; b < g; ++b)
      for (int c = 0; c < g; ++c) r.col(col++) = box / g * Eigen::Vector3d(a + 0.25, b + 0.5, c + 0.125);
  Eigen::MatrixXd v;
  gas.evaluate_values(r, v);
  const Eigen::MatrixXd overlap = v * v.transpose() / double(r.cols());
  const double tol = 2.0 * 64.0 * kEps * 4.0;  // sum of g^3 products: pairwise-blocked by Eigen, generous
  EXPECT_LE((overlap - Eigen::MatrixXd::Identity(gas.size(), gas.size())).cwiseAbs().maxCoeff(), tol);
}

// sum_i |k_i|^2 / 2 by hand: N = 7 has six |n|^2 = 1 orbitals; N = 19 adds
// twelve with |n|^2 = 2; N = 27 adds eight with |n|^2 = 3.
TEST(ElectronGas, KineticSumByHand) {
  const double box = 3.0;
  const double unit2 = (kTwoPi / box) * (kTwoPi / box);
  EXPECT_EQ(ElectronGasOrbitals(1, box).kinetic_sum(), 0.0);
  EXPECT_NEAR(ElectronGasOrbitals(7, box).kinetic_sum(), 0.5 * unit2 * 6, 2 * kEps * unit2 * 3);
  EXPECT_NEAR(ElectronGasOrbitals(19, box).kinetic_sum(), 0.5 * unit2 * 30, 2 * kEps * unit2 * 15);
  EXPECT_NEAR(ElectronGasOrbitals(27, box).kinetic_sum(), 0.5 * unit2 * 54, 2 * kEps * unit2 * 27);
}

// -1/2 sum_j lap_j D / D = -1/2 trace(A^{-1} Lap) equals kinetic_sum at any
// configuration. The solve's relative error is about kappa(A) N eps, on the
// scale sum_i |k_i|^2.
TEST(ElectronGas, LocalKineticEnergyIsConstant) {
  const double box = 2.5;
  for (Eigen::Index n : {7, 19, 33}) {
    const ElectronGasOrbitals gas(n, box);
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const Eigen::Matrix3Xd r = uniform_points(n, -box, box, seed);
      OrbitalVGL vgl;
      gas.evaluate_vgl(r, vgl);
      const Eigen::MatrixXd x = vgl.value.fullPivLu().solve(vgl.laplacian);  // A^{-1} Lap
      Eigen::JacobiSVD<Eigen::MatrixXd> svd(vgl.value);
      const double kappa = svd.singularValues()(0) / svd.singularValues()(n - 1);
      const double kinetic = -0.5 * x.trace();
      EXPECT_NEAR(kinetic, gas.kinetic_sum(), 8.0 * kappa * double(n) * kEps * 2.0 * gas.kinetic_sum())
          << "N " << n << " seed " << seed;
    }
  }
}

TEST(ElectronGas, BsplineBoxRule) {
  const double box = 5.0;
  // n_max = 1 up to N = 27, 2 up to N = 93 (the shell |n|^2 = 8 holds (2,2,0)).
  EXPECT_EQ(gas_bspline_box(1, box).grid, 4);
  EXPECT_EQ(gas_bspline_box(7, box).grid, 8);
  EXPECT_EQ(gas_bspline_box(27, box).grid, 8);
  EXPECT_EQ(gas_bspline_box(33, box).grid, 15);
  EXPECT_EQ(gas_bspline_box(123, box).grid, 23);  // (3,0,0) at |n|^2 = 9
  EXPECT_EQ(gas_bspline_box(33, box, 10.0).grid, 20);
  EXPECT_EQ(gas_bspline_box(33, box, 7.5, 12).grid, 12);
  EXPECT_EQ(gas_bspline_box(33, box).half_width, 2.5);
  EXPECT_THROW(gas_bspline_box(34, box), std::invalid_argument);
  EXPECT_THROW(gas_bspline_box(33, -box), std::invalid_argument);
  EXPECT_THROW(gas_bspline_box(33, box, 0.0), std::invalid_argument);
  EXPECT_THROW(gas_bspline_box(33, box, 7.5, -1), std::invalid_argument);
}

// Bounds on the tricubic spline of one orbital, sqrt(2) Re prod_d e^{i k_d x_d}.
// Tensor-product interpolation of a product is the product of the 1D periodic
// cubic interpolants s_d of e^{i k_d x}, whose errors are bounded (Hall and
// Meyer, J. Approx. Theory 16, 105 (1976); f'''' = k^4 here) by
//   |s - f| <= e0 = 5/384 h^4 k^4,  |s' - f'| <= e1 = 1/24 h^3 k^4,  |s'' - f''| <= e2 = 3/8 h^2 k^4.
// With |f| = 1, |f'| = k, |f''| = k^2 and |s| <= 1 + e0, the product rule gives
//   value:      P - 1,  P = prod_d (1 + e0_d);
//   gradient d: e1_d P_d + k_d (P_d - 1),  P_d = prod_{d' != d} (1 + e0_d');
//   Laplacian:  sum_d [e2_d P_d + k_d^2 (P_d - 1)],
// times sqrt(2) (the real part of a complex error is at most its modulus).
// Rounding in T adds 64 eps_T C (value), 64 eps_T C / h (gradient) and
// 3 * 4 * 64 eps_T C / h^2 (Laplacian): 64 products with weights summing in
// absolute value to 1, 1/h and 4/h^2 per direction; C = sqrt(2) 27 bounds the
// coefficients (1D coefficient 3 / (2 + cos kh) <= 3).
struct SplineBound {
  double value = 0.0, gradient = 0.0, laplacian = 0.0;
};

SplineBound spline_bound(const ElectronGasOrbitals& gas, double h, double eps_t) {
  SplineBound b;
  for (Eigen::Index i = 0; i < gas.size(); ++i) {
    const Eigen::Vector3d k = gas.k_vector(i).cwiseAbs();
    std::array<double, 3> e0{}, e1{}, e2{};
    for (int d = 0; d < 3; ++d) {
      const double k4 = std::pow(k[d], 4);
      e0[d] = 5.0 / 384.0 * std::pow(h, 4) * k4;
      e1[d] = 1.0 / 24.0 * std::pow(h, 3) * k4;
      e2[d] = 3.0 / 8.0 * h * h * k4;
    }
    const double p = (1 + e0[0]) * (1 + e0[1]) * (1 + e0[2]);
    double lap = 0.0;
    for (int d = 0; d < 3; ++d) {
      const double pd = p / (1 + e0[d]);
      b.gradient = std::max(b.gradient, e1[d] * pd + k[d] * (pd - 1));
      lap += e2[d] * pd + k[d] * k[d] * (pd - 1);
    }
    b.value = std::max(b.value, p - 1);
    b.laplacian = std::max(b.laplacian, lap);
  }
  const double c = std::numbers::sqrt2 * 27.0;
  b.value = std::numbers::sqrt2 * b.value + 64.0 * eps_t * c;
  b.gradient = std::numbers::sqrt2 * b.gradient + 64.0 * eps_t * c / h;
  b.laplacian = std::numbers::sqrt2 * b.laplacian + 12.0 * 64.0 * eps_t * c / (h * h);
  return b;
}

template <class T>
OrbitalAccuracy spline_accuracy(const ElectronGasOrbitals& gas, const BsplineBox& box, Eigen::Index samples) {
  const BsplineOrbitals<T> spline(gas, box);
  const double l = gas.box_length();
  return measure_orbital_accuracy(spline, gas, uniform_points(samples, -l, l, 17));
}

template <class T>
void check_spline_within_bound(Eigen::Index n, double box_length) {
  const ElectronGasOrbitals gas(n, box_length);
  const BsplineBox box = gas_bspline_box(n, box_length);
  const OrbitalAccuracy acc = spline_accuracy<T>(gas, box, 400);
  const SplineBound bound = spline_bound(gas, box.spacing(), std::numeric_limits<T>::epsilon());
  EXPECT_LE(acc.value.max_abs, bound.value) << "N " << n;
  EXPECT_LE(acc.gradient.max_abs, bound.gradient) << "N " << n;
  EXPECT_LE(acc.laplacian.max_abs, bound.laplacian) << "N " << n;
}

TEST(ElectronGas, SplineErrorsWithinInterpolationBoundDouble) {
  for (Eigen::Index n : {7, 27, 123}) check_spline_within_bound<double>(n, 4.2);
}
TEST(ElectronGas, SplineErrorsWithinInterpolationBoundFloat) {
  for (Eigen::Index n : {7, 27, 123}) check_spline_within_bound<float>(n, 4.2);
}

// The measured table of docs/electron-gas.md (the larger N take minutes and
// up to 1.5 GB): run with --gtest_also_run_disabled_tests
// --gtest_filter='*SplineErrorTable*'.
TEST(ElectronGas, DISABLED_SplineErrorTable) {
  std::cout << "| N | n_max | p | G | T | table MB | value max / rms | gradient max / rms | Laplacian max / rms |\n"
               "|---|---|---|---|---|---|---|---|---|\n";
  const auto row = [](const ElectronGasOrbitals& gas, double p, const BsplineBox& box, const char* t,
                      const OrbitalAccuracy& a, double bytes) {
    std::cout.precision(2);
    std::cout << "| " << gas.size() << " | " << gas.max_wave_number() << " | " << p << " | " << box.grid << " | "
              << t << " | " << std::fixed << bytes / 1e6 << std::scientific << " | " << a.value.max_rel << " / "
              << a.value.rms_rel << " | " << a.gradient.max_rel << " / " << a.gradient.rms_rel << " | "
              << a.laplacian.max_rel << " / " << a.laplacian.rms_rel << " |\n"
              << std::defaultfloat;
  };
  for (const auto& [n, p] : std::vector<std::pair<Eigen::Index, double>>{
           {27, 7.5}, {123, 7.5}, {257, 7.5}, {1021, 7.5}, {123, 15.0}, {257, 15.0}}) {
    const ElectronGasOrbitals gas(n, 5.0);
    const BsplineBox box = gas_bspline_box(n, 5.0, p);
    row(gas, p, box, "double", spline_accuracy<double>(gas, box, 2000), bspline_table_bytes<double>(box.grid, n));
    row(gas, p, box, "float", spline_accuracy<float>(gas, box, 2000), bspline_table_bytes<float>(box.grid, n));
  }
}

}  // namespace
}  // namespace slaterlab
