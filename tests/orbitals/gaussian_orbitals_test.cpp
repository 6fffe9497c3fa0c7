// Contracted Gaussian AOs and molecular orbitals (gaussian_basis.hpp,
// gaussian_overlap.hpp, molecular_orbitals.hpp): the solid harmonics against
// their defining properties and literature forms, the analytic overlap
// against exact Gauss-Hermite quadrature for every pair of l up to 4,
// cartesian and spherical, gradients and Laplacians against Richardson-
// extrapolated central differences, and the float set against the double one
// within a derived float bound.

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <vector>

#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"
#include "slaterlab/strategies/orbitals/gaussian_overlap.hpp"
#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"
#include "tests/orbitals/gauss_hermite.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// int x^{2n} e^{-x^2} dx = (2n-1)!! sqrt(pi) / 2^n, independently of the code.
double moment1d(int power) {
  if (power % 2 != 0) return 0.0;
  double value = std::sqrt(std::numbers::pi);
  for (int k = 1; k < power; k += 2) value *= k / 2.0;
  return value;
}

// <P Q> over the unit Gaussian e^{-r^2}, P and Q over cartesian_powers(l).
double gaussian_inner(int l, const std::vector<double>& p, const std::vector<double>& q) {
  const auto powers = cartesian_powers(l);
  double sum = 0.0;
  for (std::size_t i = 0; i < powers.size(); ++i)
    for (std::size_t j = 0; j < powers.size(); ++j)
      sum += p[i] * q[j] * moment1d(powers[i][0] + powers[j][0]) * moment1d(powers[i][1] + powers[j][1]) *
             moment1d(powers[i][2] + powers[j][2]);
  return sum;
}

TEST(GaussianBasis, OrdersAreTheDocumentedOnes) {
  const std::vector<std::array<int, 3>> d{{2, 0, 0}, {1, 1, 0}, {1, 0, 1}, {0, 2, 0}, {0, 1, 1}, {0, 0, 2}};
  EXPECT_EQ(cartesian_powers(2), d);
  EXPECT_EQ(cartesian_powers(4).size(), 15u);
  EXPECT_EQ(cartesian_powers(4)[3], (std::array<int, 3>{2, 2, 0}));
  const std::vector<int> m{0, 1, -1, 2, -2, 3, -3, 4, -4};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(spherical_m(i), m[static_cast<std::size_t>(i)]);
  for (int l = 0; l <= 4; ++l) {
    EXPECT_EQ(shell_size(l, true), 2 * l + 1);
    EXPECT_EQ(shell_size(l, false), (l + 1) * (l + 2) / 2);
  }
}

TEST(GaussianBasis, SolidHarmonicsAreHarmonicOrthogonalAndRacahNormalised) {
  for (int l = 0; l <= kMaxAngularMomentum; ++l) {
    const auto powers = cartesian_powers(l);
    // The norm of z^l; Racah's S_lm all share it.
    std::vector<double> zl(powers.size(), 0.0);
    zl.back() = 1.0;
    const double reference = gaussian_inner(l, zl, zl);
    for (int m = -l; m <= l; ++m) {
      const auto s = solid_harmonic(l, m);
      // Laplacian of the polynomial, term by term: must vanish. Each
      // coefficient is a sum of at most 3 products of a coefficient (itself a
      // few roundings of an exact rational) by an integer: 16 eps relative
      // to the largest coefficient covers it.
      if (l >= 2) {
        const auto lower = cartesian_powers(l - 2);
        std::vector<double> laplacian(lower.size(), 0.0);
        double largest = 0.0;
        for (std::size_t i = 0; i < powers.size(); ++i) {
          largest = std::max(largest, std::abs(s[i]));
          for (int d = 0; d < 3; ++d) {
            auto q = powers[i];
            if (q[static_cast<std::size_t>(d)] < 2) continue;
            const double factor = q[static_cast<std::size_t>(d)] * (q[static_cast<std::size_t>(d)] - 1);
            q[static_cast<std::size_t>(d)] -= 2;
            const auto at = std::find(lower.begin(), lower.end(), q) - lower.begin();
            laplacian[static_cast<std::size_t>(at)] += factor * s[i];
          }
        }
        for (const double c : laplacian) EXPECT_LE(std::abs(c), 16 * kEps * largest * l * l) << l << " " << m;
      }
      // Orthogonal to the other m, of z^l's norm (sums of <= 225 products of
      // exact moments: 256 eps relative).
      for (int m2 = -l; m2 <= l; ++m2) {
        const double inner = gaussian_inner(l, s, solid_harmonic(l, m2));
        const double expected = m == m2 ? reference : 0.0;
        EXPECT_NEAR(inner, expected, 256 * kEps * reference) << l << " " << m << " " << m2;
      }
    }
  }
}

TEST(GaussianBasis, SolidHarmonicsMatchTheLiteratureTable) {
  // Helgaker, Jorgensen and Olsen, Table 6.3 (no Condon-Shortley phase);
  // the same functions and phases as Molden's (Gaussian's) d+1 = xz, d-1 =
  // yz, d+2 ~ x^2 - y^2, d-2 ~ xy.
  const auto c = [](int l, int m, std::array<int, 3> q) {
    const auto powers = cartesian_powers(l);
    return solid_harmonic(l, m)[static_cast<std::size_t>(std::find(powers.begin(), powers.end(), q) - powers.begin())];
  };
  const double s3 = std::sqrt(3.0), s58 = std::sqrt(5.0 / 8.0), s38 = std::sqrt(3.0 / 8.0);
  struct Case {
    int l, m;
    std::array<int, 3> q;
    double value;
  };
  const std::vector<Case> table{
      {1, 1, {1, 0, 0}, 1.0},        {1, -1, {0, 1, 0}, 1.0},      {1, 0, {0, 0, 1}, 1.0},
      {2, 0, {0, 0, 2}, 1.0},        {2, 0, {2, 0, 0}, -0.5},      {2, 1, {1, 0, 1}, s3},
      {2, -1, {0, 1, 1}, s3},        {2, 2, {2, 0, 0}, s3 / 2},    {2, 2, {0, 2, 0}, -s3 / 2},
      {2, -2, {1, 1, 0}, s3},        {3, 3, {3, 0, 0}, s58},       {3, 3, {1, 2, 0}, -3 * s58},
      {3, -3, {2, 1, 0}, 3 * s58},   {3, -3, {0, 3, 0}, -s58},     {3, 2, {2, 0, 1}, std::sqrt(15.0) / 2},
      {3, -2, {1, 1, 1}, std::sqrt(15.0)}, {3, 1, {1, 0, 2}, 4 * s38}, {3, 1, {3, 0, 0}, -s38},
      {3, -1, {0, 1, 2}, 4 * s38},   {3, 0, {0, 0, 3}, 1.0},       {3, 0, {2, 0, 1}, -1.5},
      {4, 0, {4, 0, 0}, 3.0 / 8.0},  {4, 0, {2, 2, 0}, 3.0 / 4.0}, {4, 0, {2, 0, 2}, -3.0},
      {4, 4, {4, 0, 0}, std::sqrt(35.0) / 8}, {4, 4, {2, 2, 0}, -6 * std::sqrt(35.0) / 8},
      {4, -4, {3, 1, 0}, std::sqrt(35.0) / 2}};
  for (const auto& t : table)
    EXPECT_NEAR(c(t.l, t.m, t.q), t.value, 8 * kEps * std::abs(t.value)) << t.l << " " << t.m;
}

// A basis of two shells, one per centre, from a table of parameters.
struct TwoShells {
  std::vector<Nucleus> nuclei{{1.0, Eigen::Vector3d(0.25, -0.5, 0.125), "A"},
                              {2.0, Eigen::Vector3d(-0.75, 0.5, 1.0), "B"}};
  std::vector<GaussianShell> shells;
};

// Exact overlaps of normalised single-primitive AOs by a product Gauss-Hermite
// rule about the Gaussian product centre, with a first-order rounding bound:
// each node's term carries the evaluation's chain (the exponentials'
// arguments alpha s relative, <= 40 roundings of powers, contraction and
// products) and the sum over the 6^3 nodes adds 216 more.
struct Quadrature {
  double value = 0.0;
  double rounding = 0.0;
};

Quadrature primitive_overlap(const std::vector<Nucleus>& nuclei, const GaussianShell& a, int ia,
                             const GaussianShell& b, int ib) {
  constexpr int kNodes = 6;  // exact for degree <= 11 per direction (la + lb <= 8)
  Eigen::VectorXd t, w;
  gauss_hermite(kNodes, t, w);
  const double alpha = a.exponents[0], beta = b.exponents[0], p = alpha + beta;
  const Eigen::Vector3d ca = nuclei[static_cast<std::size_t>(a.nucleus)].position;
  const Eigen::Vector3d cb = nuclei[static_cast<std::size_t>(b.nucleus)].position;
  const Eigen::Vector3d centre = (alpha * ca + beta * cb) / p;
  const GaussianBasis basis({a, b}, nuclei);
  const Eigen::Index first_b = shell_size(a.l, a.spherical);
  std::vector<double> ao(static_cast<std::size_t>(basis.size()));
  Quadrature q;
  for (int x = 0; x < kNodes; ++x)
    for (int y = 0; y < kNodes; ++y)
      for (int z = 0; z < kNodes; ++z) {
        const Eigen::Vector3d r = centre + Eigen::Vector3d(t(x), t(y), t(z)) / std::sqrt(p);
        basis.values<double>(r.data(), ao.data());
        const double term = w(x) * w(y) * w(z) / std::pow(p, 1.5) * ao[static_cast<std::size_t>(ia)] *
                            ao[static_cast<std::size_t>(first_b + ib)];
        q.value += term;
        const double chain = alpha * (r - ca).squaredNorm() + beta * (r - cb).squaredNorm() + 40.0 + 216.0;
        q.rounding += std::abs(term) * chain * kEps;
      }
  return q;
}

GaussianShell single(const GaussianShell& shell, std::size_t k) {
  return {shell.nucleus, shell.l, shell.spherical, {shell.exponents[k]}, {1.0}};
}

// <AO_ia | AO_jb> of contracted shells from the primitive quadratures: a
// contracted AO is sum_k d_k (normalised primitive AO), normalised.
Quadrature contracted_overlap(const TwoShells& s, int ia, int ib) {
  const auto& a = s.shells[0];
  const auto& b = s.shells[1];
  const auto gram = [&](const GaussianShell& x, int ix, const GaussianShell& y, int iy) {
    Quadrature sum;
    for (std::size_t k = 0; k < x.exponents.size(); ++k)
      for (std::size_t q = 0; q < y.exponents.size(); ++q) {
        const Quadrature one = primitive_overlap(s.nuclei, single(x, k), ix, single(y, q), iy);
        const double weight = x.coefficients[k] * y.coefficients[q];
        sum.value += weight * one.value;
        sum.rounding += std::abs(weight) * (one.rounding + 8 * kEps * std::abs(one.value));
      }
    return sum;
  };
  const Quadrature ab = gram(a, ia, b, ib), aa = gram(a, ia, a, ia), bb = gram(b, ib, b, ib);
  Quadrature out;
  out.value = ab.value / std::sqrt(aa.value * bb.value);
  // Relative errors add; the square root halves the norms'.
  out.rounding = std::abs(out.value) * (0.5 * aa.rounding / aa.value + 0.5 * bb.rounding / bb.value + 4 * kEps) +
                 ab.rounding / std::sqrt(aa.value * bb.value);
  return out;
}

TEST(GaussianOverlap, MatchesGaussHermiteQuadratureForEveryPairOfShells) {
  double largest = 0.0, largest_ratio = 0.0;
  for (int la = 0; la <= kMaxAngularMomentum; ++la)
    for (int lb = 0; lb <= kMaxAngularMomentum; ++lb)
      for (const bool spherical : {false, true}) {
        TwoShells s;
        s.shells = {{0, la, spherical, {1.7, 0.45}, {0.4, 0.7}}, {1, lb, !spherical || lb == 1, {0.9, 0.3}, {-0.3, 1.0}}};
        const GaussianBasis basis(s.shells, s.nuclei);
        const Eigen::MatrixXd overlap = gaussian_overlap(basis);
        const Eigen::MatrixXd rounding = gaussian_overlap_rounding(basis);
        const int na = shell_size(la, spherical);
        for (int i = 0; i < na; ++i)
          for (int j = 0; j < shell_size(lb, s.shells[1].spherical); ++j) {
            const Quadrature reference = contracted_overlap(s, i, j);
            const double bound = reference.rounding + kEps * rounding(i, na + j);
            EXPECT_NEAR(overlap(i, na + j), reference.value, bound)
                << "la " << la << " lb " << lb << " spherical " << spherical << " (" << i << ", " << j << ")";
            largest = std::max(largest, std::abs(overlap(i, na + j) - reference.value));
            largest_ratio = std::max(largest_ratio, std::abs(overlap(i, na + j) - reference.value) / bound);
          }
        // Each AO is normalised: the diagonal is 1 within its rounding bound.
        for (Eigen::Index i = 0; i < overlap.rows(); ++i)
          EXPECT_NEAR(overlap(i, i), 1.0, kEps * rounding(i, i)) << "la " << la << " lb " << lb;
      }
  std::printf("overlap against quadrature: largest difference %.3g, %.3g of its bound\n", largest, largest_ratio);
}

// A wavefunction with every l on two centres, both kinds, 2 or 3 primitives.
std::shared_ptr<MolecularWavefunction> mixed_wavefunction() {
  auto wf = std::make_shared<MolecularWavefunction>();
  wf->nuclei = {{6.0, Eigen::Vector3d(0.25, -0.5, 0.125), "C"}, {1.0, Eigen::Vector3d(-0.75, 0.5, 1.0), "H"}};
  for (int l = 0; l <= kMaxAngularMomentum; ++l)
    for (const bool spherical : {false, true})
      wf->shells.push_back({l % 2, l, spherical, {2.5, 0.8, 0.25}, {0.3, 0.5, 0.4}});
  return wf;
}

Eigen::MatrixXd random_coefficients(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd c(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) c(i, j) = u(rng);
  return c;
}

// Points on a grid of 2^-10 within 3 bohr of the centres: representable in
// float, and so is their displacement from the centres (multiples of 2^-10
// below 8 in magnitude take 13 bits), so a float evaluation sees exactly the
// positions the double one does.
Eigen::Matrix3Xd dyadic_points(Eigen::Index m, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> grid(-3 * 1024, 3 * 1024);
  Eigen::Matrix3Xd r(3, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = grid(rng) / 1024.0;
  return r;
}

std::vector<int> every_column(const Eigen::MatrixXd& mo) {
  std::vector<int> all(static_cast<std::size_t>(mo.cols()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  return all;
}

// Central differences D(h) = f' + c2 h^2 + c4 h^4 + ... at h, h/2, h/4, h/8,
// extrapolated (Richardson) to T33; |T33 - T22|, the last correction, bounds
// the error of T33 once the table converges.
struct Extrapolated {
  Eigen::VectorXd value;
  Eigen::VectorXd error;
};

Extrapolated richardson(std::array<Eigen::VectorXd, 4> t) {
  Eigen::VectorXd previous;
  for (int level = 1; level < 4; ++level) {
    const double factor = std::pow(4.0, level);
    previous = t[3];
    for (int k = 3; k >= level; --k) t[static_cast<std::size_t>(k)] =
        (factor * t[static_cast<std::size_t>(k)] - t[static_cast<std::size_t>(k - 1)]) / (factor - 1);
  }
  return {t[3], (t[3] - previous).cwiseAbs()};
}

TEST(MolecularOrbitals, GradientsAndLaplaciansMatchRichardsonDifferences) {
  const auto wf = mixed_wavefunction();
  const Eigen::Index n = wf->ao_count();
  Eigen::MatrixXd mo(n, n + 3);
  mo << Eigen::MatrixXd::Identity(n, n), random_coefficients(n, 3, 7);  // every AO, 3 mixtures
  const MolecularOrbitals orbitals(wf, mo, every_column(mo), OrbitalPrecision::kDouble);
  const Eigen::Matrix3Xd points = dyadic_points(12, 11);
  OrbitalVGL at;
  orbitals.evaluate_vgl(points, at);
  const Eigen::Index k = mo.cols();
  const double h0 = 0.04;
  double worst_gradient = 0.0, worst_laplacian = 0.0;
  for (Eigen::Index p = 0; p < points.cols(); ++p) {
    Eigen::VectorXd laplacian = Eigen::VectorXd::Zero(k), laplacian_bound = Eigen::VectorXd::Zero(k);
    for (int d = 0; d < 3; ++d) {
      std::array<Eigen::VectorXd, 4> first, second;
      double scale = 0.0;
      for (int level = 0; level < 4; ++level) {
        const double h = h0 / (1 << level);
        Eigen::Matrix3Xd pm(3, 2);
        pm.col(0) = pm.col(1) = points.col(p);
        pm(d, 0) += h;
        pm(d, 1) -= h;
        OrbitalVGL shifted;
        orbitals.evaluate_vgl(pm, shifted);
        scale = std::max({scale, shifted.value.cwiseAbs().maxCoeff(), shifted.gradient.cwiseAbs().maxCoeff()});
        first[static_cast<std::size_t>(level)] = (shifted.value.col(0) - shifted.value.col(1)) / (2 * h);
        Eigen::VectorXd g(k);
        for (Eigen::Index i = 0; i < k; ++i) g(i) = shifted.gradient(3 * i + d, 0) - shifted.gradient(3 * i + d, 1);
        second[static_cast<std::size_t>(level)] = g / (2 * h);
      }
      // Rounding: each value carries <= 64 eps max|f| (the exponentials'
      // arguments, <= 30 here, relative, and <= 34 roundings of powers and
      // sums); a difference divides it by 2h; the extrapolation weights sum
      // to < 2: 128 eps max|f| / h_min.
      const double rounding = 128 * kEps * scale / (h0 / 8);
      const Extrapolated gradient = richardson(first);
      for (Eigen::Index i = 0; i < k; ++i) {
        EXPECT_NEAR(at.gradient(3 * i + d, p), gradient.value(i), gradient.error(i) + rounding)
            << "orbital " << i << " point " << p << " direction " << d;
        worst_gradient = std::max(worst_gradient, std::abs(at.gradient(3 * i + d, p) - gradient.value(i)) /
                                                      (gradient.error(i) + rounding));
      }
      const Extrapolated curvature = richardson(second);
      laplacian += curvature.value;
      laplacian_bound += curvature.error + Eigen::VectorXd::Constant(k, rounding);
    }
    for (Eigen::Index i = 0; i < k; ++i) {
      EXPECT_NEAR(at.laplacian(i, p), laplacian(i), laplacian_bound(i)) << "orbital " << i << " point " << p;
      worst_laplacian = std::max(worst_laplacian, std::abs(at.laplacian(i, p) - laplacian(i)) / laplacian_bound(i));
    }
  }
  std::printf("against differences: gradients %.3g, Laplacians %.3g of their bounds\n", worst_gradient,
              worst_laplacian);
}

// The float evaluation's error, bounded term by term (first order in the
// unit roundoff u = 2^-24), at points where the displacements are exact in
// float (dyadic_points): every value, gradient and Laplacian is a sum of
// terms w_k e^{-alpha_k s} T_im x^a y^b z^c (or their derivatives) times C_i;
// a term's relative error is at most u times its chain: the exponential
// 5 alpha s + 2 (alpha and s = |d|^2 rounded, 3 roundings in s, the product,
// expf within 2 ulp), the contraction sum n_k + 4, the polynomial l +
// cartesians + 4, the derivative's products 6, the MO's rounded coefficient
// and its sum over the AOs n_ao + 2. The bound is u times the sum of
// |term| * chain, evaluated in double from the prepared shells.
struct FloatBound {
  Eigen::MatrixXd value, gradient, laplacian;
};

FloatBound float_bound(const GaussianBasis& basis, const Eigen::MatrixXd& mo, const Eigen::Matrix3Xd& points) {
  constexpr double kUnit = 0.5 * std::numeric_limits<float>::epsilon();
  const Eigen::Index n = basis.size();
  FloatBound out{Eigen::MatrixXd::Zero(mo.cols(), points.cols()), Eigen::MatrixXd::Zero(3 * mo.cols(), points.cols()),
                 Eigen::MatrixXd::Zero(mo.cols(), points.cols())};
  for (Eigen::Index p = 0; p < points.cols(); ++p) {
    Eigen::VectorXd v = Eigen::VectorXd::Zero(n), lap = Eigen::VectorXd::Zero(n);
    Eigen::MatrixXd g = Eigen::MatrixXd::Zero(3, n);
    for (const auto& shell : basis.shells()) {
      const Eigen::Vector3d d = points.col(p) - shell.centre;
      const double s = d.squaredNorm();
      const auto powers = cartesian_powers(shell.l);
      const double fixed = static_cast<double>(shell.exponents.size()) + 4 + shell.l + powers.size() + 4 + 6 +
                           static_cast<double>(n) + 2;
      for (std::size_t k = 0; k < shell.exponents.size(); ++k) {
        const double alpha = shell.exponents[k];
        const double e = std::abs(shell.weights[k]) * std::exp(-alpha * s) * (5 * alpha * s + 2 + fixed);
        for (Eigen::Index i = 0; i < shell.angular.rows(); ++i) {
          const Eigen::Index ao = shell.first_ao + i;
          for (std::size_t m = 0; m < powers.size(); ++m) {
            const double t = std::abs(shell.angular(i, static_cast<Eigen::Index>(m))) * e;
            if (t == 0.0) continue;
            const auto mono = [&](int a, int b, int c) {
              return (a < 0 || b < 0 || c < 0) ? 0.0
                                               : std::pow(std::abs(d(0)), a) * std::pow(std::abs(d(1)), b) *
                                                     std::pow(std::abs(d(2)), c);
            };
            const int a = powers[m][0], b = powers[m][1], c = powers[m][2];
            const double value = mono(a, b, c);
            v(ao) += t * value;
            const double da[3] = {a * mono(a - 1, b, c), b * mono(a, b - 1, c), c * mono(a, b, c - 1)};
            for (int x = 0; x < 3; ++x) g(x, ao) += t * (da[x] + 2 * alpha * std::abs(d(x)) * value);
            const double mono_laplacian = a * (a - 1) * mono(a - 2, b, c) + b * (b - 1) * mono(a, b - 2, c) +
                                          c * (c - 1) * mono(a, b, c - 2);
            lap(ao) += t * (mono_laplacian + value * ((4 * shell.l + 6) * alpha + 4 * s * alpha * alpha));
          }
        }
      }
    }
    const Eigen::MatrixXd c = mo.cwiseAbs();
    out.value.col(p) = kUnit * c.transpose() * v;
    out.laplacian.col(p) = kUnit * c.transpose() * lap;
    for (Eigen::Index i = 0; i < mo.cols(); ++i)
      for (int x = 0; x < 3; ++x) out.gradient(3 * i + x, p) = kUnit * c.col(i).dot(g.row(x).transpose());
  }
  return out;
}

TEST(MolecularOrbitals, FloatMatchesDoubleWithinTheDerivedBound) {
  const auto wf = mixed_wavefunction();
  const Eigen::Index n = wf->ao_count();
  Eigen::MatrixXd mo(n, n + 4);
  mo << Eigen::MatrixXd::Identity(n, n), random_coefficients(n, 4, 5);
  const auto columns = every_column(mo);
  const MolecularOrbitals in_double(wf, mo, columns, OrbitalPrecision::kDouble);
  const MolecularOrbitals in_float(wf, mo, columns, OrbitalPrecision::kFloat);
  EXPECT_EQ(in_double.label(), "gaussian-double");
  EXPECT_EQ(in_float.label(), "gaussian-float");
  const Eigen::Matrix3Xd points = dyadic_points(40, 3);
  OrbitalVGL d, f;
  in_double.evaluate_vgl(points, d);
  in_float.evaluate_vgl(points, f);
  const FloatBound bound = float_bound(GaussianBasis(wf->shells, wf->nuclei), mo, points);
  // The double results' own error is the same bound times 2^-29.
  const double both = 1.0 + std::ldexp(1.0, -29);
  double worst = 0.0;
  for (Eigen::Index p = 0; p < points.cols(); ++p)
    for (Eigen::Index i = 0; i < mo.cols(); ++i) {
      EXPECT_LE(std::abs(f.value(i, p) - d.value(i, p)), both * bound.value(i, p)) << i << " " << p;
      EXPECT_LE(std::abs(f.laplacian(i, p) - d.laplacian(i, p)), both * bound.laplacian(i, p)) << i << " " << p;
      for (int x = 0; x < 3; ++x)
        EXPECT_LE(std::abs(f.gradient(3 * i + x, p) - d.gradient(3 * i + x, p)), both * bound.gradient(3 * i + x, p))
            << i << " " << p << " " << x;
      if (bound.value(i, p) > 0) worst = std::max(worst, std::abs(f.value(i, p) - d.value(i, p)) / bound.value(i, p));
    }
  // The values-only path computes the same numbers as the values of vgl.
  Eigen::MatrixXd values;
  in_float.evaluate_values(points, values);
  EXPECT_EQ((values - f.value).cwiseAbs().maxCoeff(), 0.0);
  in_double.evaluate_values(points, values);
  EXPECT_EQ((values - d.value).cwiseAbs().maxCoeff(), 0.0);
  std::printf("float values: largest error / bound = %.3g\n", worst);
}

TEST(MolecularOrbitals, FarFromEveryNucleusTheOrbitalsAreExactlyZero) {
  const auto wf = mixed_wavefunction();
  const Eigen::MatrixXd mo = random_coefficients(wf->ao_count(), 2, 1);
  const MolecularOrbitals orbitals(wf, mo, {0, 1}, OrbitalPrecision::kDouble);
  Eigen::Matrix3Xd far(3, 1);
  far << 60.0, 0.0, 0.0;  // 0.25 * 60^2 = 900 > 745: every exponential underflows
  OrbitalVGL out;
  orbitals.evaluate_vgl(far, out);
  EXPECT_EQ(out.value.cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(out.gradient.cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(out.laplacian.cwiseAbs().maxCoeff(), 0.0);
}

TEST(MolecularWavefunction, CountsAndNuclearRepulsion) {
  MolecularWavefunction wf;
  // Three charges on a 3-4-5 right triangle (bohr): 1*2/3 + 1*3/4 + 2*3/5.
  wf.nuclei = {{1.0, Eigen::Vector3d(0, 0, 0), ""}, {2.0, Eigen::Vector3d(3, 0, 0), ""},
               {3.0, Eigen::Vector3d(0, 4, 0), ""}};
  EXPECT_NEAR(wf.nuclear_repulsion(), 2.0 / 3.0 + 3.0 / 4.0 + 6.0 / 5.0, 8 * kEps);
  wf.shells = {{0, 0, false, {1.0}, {1.0}}, {1, 2, true, {1.0}, {1.0}}, {2, 4, false, {1.0}, {1.0}}};
  EXPECT_EQ(wf.ao_count(), 1 + 5 + 15);
}

TEST(MolecularOrbitals, RefusesWhatTheContractForbids) {
  auto wf = mixed_wavefunction();
  const Eigen::MatrixXd mo = random_coefficients(wf->ao_count(), 2, 1);
  EXPECT_THROW(MolecularOrbitals(wf, mo, {2}, OrbitalPrecision::kDouble), std::invalid_argument);
  EXPECT_THROW(MolecularOrbitals(wf, mo.topRows(3), {0}, OrbitalPrecision::kDouble), std::invalid_argument);
  auto bad = std::make_shared<MolecularWavefunction>(*wf);
  bad->shells[0].nucleus = 5;
  EXPECT_THROW(MolecularOrbitals(bad, mo, {0}, OrbitalPrecision::kDouble), std::invalid_argument);
  bad = std::make_shared<MolecularWavefunction>(*wf);
  bad->shells[0].l = 5;
  EXPECT_THROW(MolecularOrbitals(bad, mo, {0}, OrbitalPrecision::kDouble), std::invalid_argument);
  bad = std::make_shared<MolecularWavefunction>(*wf);
  bad->shells[0].exponents[1] = -1.0;
  EXPECT_THROW(MolecularOrbitals(bad, mo, {0}, OrbitalPrecision::kDouble), std::invalid_argument);
  bad = std::make_shared<MolecularWavefunction>(*wf);
  bad->shells[0].coefficients = {0.0, 0.0, 0.0};
  EXPECT_THROW(MolecularOrbitals(bad, mo, {0}, OrbitalPrecision::kDouble), std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab
