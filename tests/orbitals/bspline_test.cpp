// Tricubic B-spline orbitals: interpolation at the nodes to rounding, exact
// derivatives of the piecewise cubic, convergence orders h^4 / h^3 / h^2
// against the analytic orbitals, float rounding against double interpolation
// error, batch = one-at-a-time bit for bit, the box rule, and refusal of bad
// configurations.
//
// Rounding model used below: evaluating the spline sums 64 products w c with
// non-negative weights summing to 1, in T, so its rounding error is at most
// about 64 eps_T max|c| (a generous count of the additions); coefficients of
// a float table carry in addition their own rounding, eps_f/2 relative.

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"

namespace slaterlab {
namespace {

template <class T>
constexpr double kEps = std::numeric_limits<T>::epsilon();

Eigen::Matrix3Xd gaussian_points(Eigen::Index m, double sigma, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, sigma);
  Eigen::Matrix3Xd r(3, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = normal(rng);
  return r;
}

template <class T>
double max_abs_coefficient(const BsplineOrbitals<T>& s) {
  double c = 0.0;
  const Eigen::Index g = s.box().grid;
  for (Eigen::Index ix = 0; ix < g; ++ix)
    for (Eigen::Index iy = 0; iy < g; ++iy)
      for (Eigen::Index iz = 0; iz < g; ++iz)
        for (Eigen::Index i = 0; i < s.size(); ++i)
          c = std::max(c, std::abs(double(s.coefficient(ix, iy, iz, i))));
  return c;
}

/// Orbitals 1 + delta prod_d cos(k x_d + phase), k = pi / L: periodic on
/// [-L, L)^3, a large exactly representable part plus a small wave, so the
/// interpolation error (proportional to delta) can be pushed far below float
/// rounding (proportional to the value, ~1) on a small grid.
class ConstantPlusWave final : public OrbitalSet {
 public:
  ConstantPlusWave(Eigen::Index n, double half_width, double delta)
      : n_(n), k_(std::numbers::pi / half_width), delta_(delta) {}
  Eigen::Index size() const override { return n_; }
  std::string label() const override { return "constant-plus-wave"; }
  double k() const { return k_; }
  void evaluate_values(const Eigen::Matrix3Xd& r, Eigen::MatrixXd& values) const override {
    OrbitalVGL vgl;
    evaluate_vgl(r, vgl);
    values = vgl.value;
  }
  void evaluate_vgl(const Eigen::Matrix3Xd& r, OrbitalVGL& out) const override {
    out.value.resize(n_, r.cols());
    out.gradient.resize(3 * n_, r.cols());
    out.laplacian.resize(n_, r.cols());
    for (Eigen::Index j = 0; j < r.cols(); ++j)
      for (Eigen::Index i = 0; i < n_; ++i) {
        double c[3], s[3];
        for (int d = 0; d < 3; ++d) {
          const double phase = 0.7 * double(i) + 1.3 * d + 0.1;
          c[d] = std::cos(k_ * r(d, j) + phase);
          s[d] = std::sin(k_ * r(d, j) + phase);
        }
        const double wave = delta_ * c[0] * c[1] * c[2];
        out.value(i, j) = 1.0 + wave;
        out.gradient(3 * i + 0, j) = -delta_ * k_ * s[0] * c[1] * c[2];
        out.gradient(3 * i + 1, j) = -delta_ * k_ * c[0] * s[1] * c[2];
        out.gradient(3 * i + 2, j) = -delta_ * k_ * c[0] * c[1] * s[2];
        out.laplacian(i, j) = -3.0 * k_ * k_ * wave;
      }
  }

 private:
  Eigen::Index n_;
  double k_, delta_;
};

// ---------------------------------------------------------------------------
// Interpolation at the nodes

// The coefficient solve is three 1D circulant solves of condition number 3
// (eigenvalues (4 + 2 cos theta)/6 in [1/3, 1]), each two stable first-order
// recursions; it loses a few ulps of max|f| per direction, ~36 eps in all
// (3 directions x kappa 3 x ~4 roundings); the evaluation adds <= 27 eps
// (27 non-zero weights at a node). Tolerance: 64 eps_T max|f|, plus for a
// float table the coefficient rounding (eps_f/2 max|c|, inside the same budget).
template <class T>
void check_interpolates_at_nodes() {
  HarmonicOscillatorOrbitals ho(10, 1.3);
  BsplineBoxRule rule;
  rule.grid = 20;
  BsplineOrbitals<T> s(ho, rule);
  const Eigen::Index g = s.box().grid;
  const double h = s.box().spacing();
  Eigen::Matrix3Xd nodes(3, g * g * g);
  Eigen::Index col = 0;
  for (Eigen::Index ix = 0; ix < g; ++ix)
    for (Eigen::Index iy = 0; iy < g; ++iy)
      for (Eigen::Index iz = 0; iz < g; ++iz, ++col)
        nodes.col(col) << -s.box().half_width + double(ix) * h, -s.box().half_width + double(iy) * h,
            -s.box().half_width + double(iz) * h;
  Eigen::MatrixXd exact, spline;
  ho.evaluate_values(nodes, exact);
  s.evaluate_values(nodes, spline);
  const double scale = exact.cwiseAbs().maxCoeff();
  const double err = (spline - exact).cwiseAbs().maxCoeff();
  EXPECT_LE(err, 64 * kEps<T> * scale) << s.label() << ": error " << err / (kEps<T> * scale) << " eps";
}

TEST(Bspline, InterpolatesAtNodesToRoundingDouble) { check_interpolates_at_nodes<double>(); }
TEST(Bspline, InterpolatesAtNodesToRoundingFloat) { check_interpolates_at_nodes<float>(); }

// ---------------------------------------------------------------------------
// Derivatives of the piecewise cubic, exactly

// Inside one grid cell the spline is a polynomial of degree 3 in each
// coordinate. The 5-point first difference
//   (8 (s(x+d) - s(x-d)) - (s(x+2d) - s(x-2d))) / (12 d)
// and the 3-point second difference (s(x+e) - 2 s(x) + s(x-e)) / e^2 are
// exact for such polynomials, so with all points in the same cell (fractional
// positions in [0.3, 0.7], d = 0.14 h, e = 0.28 h) the only error is the
// evaluation's rounding: <= 18 * 64 eps max|c| / (12 d) for the gradient and
// 3 * 4 * 64 eps max|c| / e^2 for the Laplacian (three directions). This
// checks the derivative weights and their 1/h, 1/h^2 scaling to rounding.
template <class T>
void check_exact_derivatives() {
  HarmonicOscillatorOrbitals ho(10, 1.0);
  BsplineBoxRule rule;
  rule.grid = 24;
  BsplineOrbitals<T> s(ho, rule);
  const double h = s.box().spacing();
  const double big_l = s.box().half_width;
  const double d = 0.14 * h, e = 0.28 * h;
  const double cmax = max_abs_coefficient(s);
  const double tol_g = 18.0 * 64.0 * kEps<T> * cmax / (12.0 * d);
  const double tol_l = 3.0 * 4.0 * 64.0 * kEps<T> * cmax / (e * e);

  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> cell(6, 17);  // the central cells, where the orbitals live
  std::uniform_real_distribution<double> frac(0.3, 0.7);
  Eigen::Matrix3Xd r(3, 200);
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    for (int k = 0; k < 3; ++k) r(k, j) = -big_l + (cell(rng) + frac(rng)) * h;

  OrbitalVGL vgl;
  s.evaluate_vgl(r, vgl);
  Eigen::MatrixXd v0, vp, vm, vp2, vm2;
  s.evaluate_values(r, v0);
  Eigen::MatrixXd fd_lap = Eigen::MatrixXd::Zero(s.size(), r.cols());
  auto shifted = [&](int dim, double by) {
    Eigen::Matrix3Xd q = r;
    q.row(dim).array() += by;
    return q;
  };
  for (int dim = 0; dim < 3; ++dim) {
    s.evaluate_values(shifted(dim, d), vp);
    s.evaluate_values(shifted(dim, -d), vm);
    s.evaluate_values(shifted(dim, 2 * d), vp2);
    s.evaluate_values(shifted(dim, -2 * d), vm2);
    const Eigen::MatrixXd fd_grad = (8.0 * (vp - vm) - (vp2 - vm2)) / (12.0 * d);
    for (Eigen::Index i = 0; i < s.size(); ++i) {
      const double err = (fd_grad.row(i) - vgl.gradient.row(3 * i + dim)).cwiseAbs().maxCoeff();
      EXPECT_LE(err, tol_g) << s.label() << " orbital " << i << " direction " << dim;
    }
    s.evaluate_values(shifted(dim, e), vp);
    s.evaluate_values(shifted(dim, -e), vm);
    fd_lap += (vp - 2.0 * v0 + vm) / (e * e);
  }
  EXPECT_LE((fd_lap - vgl.laplacian).cwiseAbs().maxCoeff(), tol_l) << s.label();
  // Non-vacuous: the derivatives themselves are far above the tolerances.
  EXPECT_GT(vgl.gradient.cwiseAbs().maxCoeff(), 100 * tol_g);
  EXPECT_GT(vgl.laplacian.cwiseAbs().maxCoeff(), 100 * tol_l);
}

TEST(Bspline, DerivativesAreThoseOfThePiecewiseCubicDouble) { check_exact_derivatives<double>(); }
TEST(Bspline, DerivativesAreThoseOfThePiecewiseCubicFloat) { check_exact_derivatives<float>(); }

// ---------------------------------------------------------------------------
// Convergence orders

double fitted_order(const double (&h)[3], const double (&e)[3]) {
  double mx = 0.0, my = 0.0;
  for (int k = 0; k < 3; ++k) {
    mx += std::log(h[k]) / 3.0;
    my += std::log(e[k]) / 3.0;
  }
  double sxy = 0.0, sxx = 0.0;
  for (int k = 0; k < 3; ++k) {
    sxy += (std::log(h[k]) - mx) * (std::log(e[k]) - my);
    sxx += (std::log(h[k]) - mx) * (std::log(h[k]) - mx);
  }
  return sxy / sxx;
}

// Cubic-spline interpolation converges as h^4 in values, h^3 in gradients and
// h^2 in second derivatives: the classic check that derivatives are right. The
// least-squares slope of log(error) against log(h) over three grids must lie
// within +-0.5 of the theory.
// - Box: L = 7 for N = 4, alpha = 1 (shell 1): |phi| at a face is at most
//   |h_1(7)| / max|h_1| = 7 e^{-24} ~ 3e-10 of its maximum, far below the
//   errors measured here (>= 1e-7), so the periodic wrap does not pollute them.
// - Grids 42, 60, 84 (h = 0.33 .. 0.17, k h <= 0.75 at the centre): the
//   asymptotic regime.
// - RMS over 2000 Gaussian points (width 1, the density's) rather than the
//   max: the max of the Laplacian error at finitely many points depends on
//   where they fall inside cells and fluctuates by tens of percent between
//   grids, the RMS averages over cell positions.
TEST(Bspline, ConvergenceOrdersFourThreeTwo) {
  HarmonicOscillatorOrbitals ho(4, 1.0);
  const Eigen::Matrix3Xd r = gaussian_points(2000, 1.0, 3);
  OrbitalVGL exact;
  ho.evaluate_vgl(r, exact);
  const Eigen::Index grids[3] = {42, 60, 84};
  double h[3], ev[3], eg[3], el[3];
  for (int k = 0; k < 3; ++k) {
    BsplineOrbitals<double> s(ho, BsplineBox{7.0, grids[k]});
    OrbitalVGL vgl;
    s.evaluate_vgl(r, vgl);
    h[k] = s.box().spacing();
    auto rms = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
      return std::sqrt((a - b).squaredNorm() / double(a.size()));
    };
    ev[k] = rms(vgl.value, exact.value);
    eg[k] = rms(vgl.gradient, exact.gradient);
    el[k] = rms(vgl.laplacian, exact.laplacian);
  }
  EXPECT_NEAR(fitted_order(h, ev), 4.0, 0.5);
  EXPECT_NEAR(fitted_order(h, eg), 3.0, 0.5);
  EXPECT_NEAR(fitted_order(h, el), 2.0, 0.5);
}

// ---------------------------------------------------------------------------
// Float rounding against double interpolation error

// With f = 1 + delta wave (delta = 1e-5, one period per box, G = 32):
// - the double table's error is interpolation error: bounded per direction by
//   the 1D bound (5/384) h^4 max|f''''| = (5/384) (k h)^4 delta, each passed
//   through the other directions' interpolation (norm Lambda <= 1.55, the
//   cardinal cubic spline's Lebesgue constant):
//   U_d = (5/384) (k h)^4 delta (1 + Lambda + Lambda^2) + 64 eps_d ~ 1e-9;
//   and it is interpolation error, not rounding: >= 1e3 eps_d;
// - the float table's error is rounding: coefficients ~1 rounded to float
//   (uniform errors up to eps_f/2), so over 20000 samples the worst error is
//   surely above L_f = eps_f / 8, and at most 64 eps_f + U_d.
// Hence float error / double error >= L_f / U_d (~15), the derived factor.
TEST(Bspline, FloatErrorIsRoundingDoubleErrorIsInterpolation) {
  const double big_l = 1.0, delta = 1e-5;
  const Eigen::Index g = 32;
  ConstantPlusWave f(4, big_l, delta);
  const BsplineBox box{big_l, g};
  BsplineOrbitals<double> sd(f, box);
  BsplineOrbitals<float> sf(f, box);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-big_l, big_l);
  Eigen::Matrix3Xd r(3, 5000);
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = u(rng);
  Eigen::MatrixXd exact, vd, vf;
  f.evaluate_values(r, exact);
  sd.evaluate_values(r, vd);
  sf.evaluate_values(r, vf);
  const double ed = (vd - exact).cwiseAbs().maxCoeff();
  const double ef = (vf - exact).cwiseAbs().maxCoeff();

  const double kh = f.k() * box.spacing();
  const double lambda = 1.55;
  const double upper_d =
      5.0 / 384.0 * std::pow(kh, 4) * delta * (1 + lambda + lambda * lambda) + 64 * kEps<double>;
  const double lower_f = kEps<float> / 8.0;
  EXPECT_LE(ed, upper_d);
  EXPECT_GE(ed, 1e3 * kEps<double>);
  EXPECT_GE(ef, lower_f);
  EXPECT_LE(ef, 64 * kEps<float> + upper_d);
  EXPECT_GE(ef / ed, lower_f / upper_d) << "float " << ef << " double " << ed;
}

// At practical grids the opposite holds for the orbitals themselves: the
// interpolation error dominates both tables and they agree to within the float
// rounding budget.
TEST(Bspline, FloatAndDoubleAgreeWhereInterpolationDominates) {
  HarmonicOscillatorOrbitals ho(4, 1.0);
  BsplineBoxRule rule;
  rule.grid = 40;
  BsplineOrbitals<double> sd(ho, rule);
  BsplineOrbitals<float> sf(ho, rule);
  const Eigen::Matrix3Xd r = gaussian_points(1000, 1.0, 9);
  Eigen::MatrixXd exact, vd, vf;
  ho.evaluate_values(r, exact);
  sd.evaluate_values(r, vd);
  sf.evaluate_values(r, vf);
  const double scale = exact.cwiseAbs().maxCoeff();
  const double ed = (vd - exact).cwiseAbs().maxCoeff();
  const double ef = (vf - exact).cwiseAbs().maxCoeff();
  EXPECT_GT(ed, 1e3 * kEps<float> * scale);  // interpolation error well above float rounding
  EXPECT_LE(std::abs(ef - ed), 64 * kEps<float> * max_abs_coefficient(sd));
  EXPECT_LE((vf - vd).cwiseAbs().maxCoeff(), 64 * kEps<float> * max_abs_coefficient(sd));
}

// ---------------------------------------------------------------------------
// Batch evaluation

template <class T>
void check_batch_equals_single() {
  HarmonicOscillatorOrbitals ho(10, 1.0);
  BsplineBoxRule rule;
  rule.grid = 16;
  BsplineOrbitals<T> s(ho, rule);
  Eigen::Matrix3Xd r = gaussian_points(64, 2.0, 21);
  r.col(0) << 3 * s.box().half_width, -2.5 * s.box().half_width, 0.1;  // wraps
  Eigen::MatrixXd batch;
  OrbitalVGL batch_vgl;
  s.evaluate_values(r, batch);
  s.evaluate_vgl(r, batch_vgl);
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    const Eigen::Matrix3Xd one = r.col(j);
    Eigen::MatrixXd v;
    OrbitalVGL vgl;
    s.evaluate_values(one, v);
    s.evaluate_vgl(one, vgl);
    ASSERT_TRUE(v.col(0) == batch.col(j)) << s.label() << " position " << j;
    ASSERT_TRUE(vgl.value.col(0) == batch_vgl.value.col(j));
    ASSERT_TRUE(vgl.gradient.col(0) == batch_vgl.gradient.col(j));
    ASSERT_TRUE(vgl.laplacian.col(0) == batch_vgl.laplacian.col(j));
  }
}

TEST(Bspline, BatchEqualsOneAtATimeBitForBitDouble) { check_batch_equals_single<double>(); }
TEST(Bspline, BatchEqualsOneAtATimeBitForBitFloat) { check_batch_equals_single<float>(); }

// ---------------------------------------------------------------------------
// Layout, periodicity, box rule

TEST(Bspline, LayoutPaddingAndLabels) {
  HarmonicOscillatorOrbitals ho(10, 1.0);
  BsplineBoxRule rule;
  rule.grid = 8;
  BsplineOrbitals<float> sf(ho, rule);
  BsplineOrbitals<double> sd(ho, rule);
  EXPECT_EQ(sf.padded_size(), 16);
  EXPECT_EQ(sd.padded_size(), 16);
  EXPECT_EQ(bspline_padded_size<float>(17), 32);
  EXPECT_EQ(bspline_padded_size<double>(17), 24);
  // A row of a multiple of 4 KiB gets one SIMD width more (L1 set conflicts).
  EXPECT_EQ(bspline_padded_size<float>(1021), 1040);
  EXPECT_EQ(bspline_padded_size<double>(512), 520);
  EXPECT_EQ(bspline_padded_size<double>(513), 520);
  EXPECT_EQ(sf.table_bytes(), std::size_t{8 * 8 * 8 * 16 * 4});
  EXPECT_DOUBLE_EQ(bspline_table_bytes<float>(8, 10), 8.0 * 8 * 8 * 16 * 4);
  EXPECT_DOUBLE_EQ(bspline_build_bytes<float>(8, 10), 8.0 * 8 * 8 * 16 * 8);
  EXPECT_EQ(sf.label(), "bspline-float");
  EXPECT_EQ(sd.label(), "bspline-double");
  for (Eigen::Index i = 10; i < 16; ++i) EXPECT_EQ(sf.coefficient(3, 4, 5, i), 0.0f);  // padding stays zero
  // The low-level kernel accepts 64-byte aligned buffers of padded_size().
  detail::AlignedVector<float> v(16);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0u);
  const double r[3] = {0.1, -0.2, 0.3};
  sf.evaluate_v(r, v.data());
  Eigen::MatrixXd viaset;
  sf.evaluate_values(Eigen::Vector3d(0.1, -0.2, 0.3), viaset);
  for (Eigen::Index i = 0; i < 10; ++i) EXPECT_EQ(double(v[i]), viaset(i, 0));
}

TEST(Bspline, PositionsWrapPeriodically) {
  HarmonicOscillatorOrbitals ho(4, 1.0);
  BsplineBoxRule rule;
  rule.grid = 16;
  BsplineOrbitals<double> s(ho, rule);
  const double period = 2.0 * s.box().half_width;
  const Eigen::Matrix3Xd r = gaussian_points(50, 1.0, 4);
  Eigen::Matrix3Xd shifted = r;
  shifted.row(0).array() += period;
  shifted.row(1).array() -= 3 * period;
  Eigen::MatrixXd a, b;
  s.evaluate_values(r, a);
  s.evaluate_values(shifted, b);
  // The shift moves (x + L)/h by a multiple of G, rounded: t changes by a few
  // ulps of 4G, the values by as many ulps of max|phi| times the slope.
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), 1e-12);
}

// The derived margin keeps |h_n(L)| / max|h_n| below the edge tolerance for
// every occupied shell (the 3D ratio at a face reduces to this 1D one).
TEST(Bspline, BoxRuleEdgeBelowTolerance) {
  for (const double tol : {std::numeric_limits<double>::epsilon(), 1e-8}) {
    for (int n_max = 0; n_max <= 9; ++n_max) {
      for (const double alpha : {0.5, 1.0, 3.0}) {
        BsplineBoxRule rule;
        rule.edge_tolerance = tol;
        const BsplineBox box = ho_bspline_box(ho_closed_shell_size(n_max), alpha, rule);
        std::vector<double> h(static_cast<std::size_t>(n_max) + 1), peak(h.size(), 0.0);
        for (double x = 0.0; x < box.half_width; x += 0.002 / std::sqrt(alpha)) {
          hermite_functions(x, alpha, n_max, h.data());
          for (std::size_t n = 0; n < h.size(); ++n) peak[n] = std::max(peak[n], std::abs(h[n]));
        }
        hermite_functions(box.half_width, alpha, n_max, h.data());
        for (std::size_t n = 0; n < h.size(); ++n)
          EXPECT_LE(std::abs(h[n]), tol * peak[n]) << "n " << n << " alpha " << alpha << " tol " << tol;
      }
    }
  }
  EXPECT_NEAR(ho_box_margin(0, std::numeric_limits<double>::epsilon()), 8.49, 0.01);
  EXPECT_NEAR(ho_box_margin(3, std::numeric_limits<double>::epsilon()), 7.87, 0.01);
  EXPECT_NEAR(ho_box_margin(9, std::numeric_limits<double>::epsilon()), 6.83, 0.01);
}

// The documented default fits every closed shell up to N = 220 under the
// default cap, in either precision (checked from the formulas, nothing built).
TEST(Bspline, DefaultRuleFitsClosedShellsUnderTheCap) {
  for (int n_max = 0; n_max <= 9; ++n_max) {
    const Eigen::Index n = ho_closed_shell_size(n_max);
    const BsplineBox box = ho_bspline_box(n, 1.0);
    EXPECT_LE(bspline_build_bytes<double>(box.grid, n), double(kBsplineDefaultMemoryCap)) << "N " << n;
    EXPECT_LE(bspline_build_bytes<float>(box.grid, n), double(kBsplineDefaultMemoryCap)) << "N " << n;
  }
  const BsplineBox b220 = ho_bspline_box(220, 2.0);
  EXPECT_EQ(b220.grid, 125);  // the grid is scale-free: the same for every alpha
  EXPECT_EQ(ho_bspline_box(220, 0.3).grid, 125);
}

// ---------------------------------------------------------------------------
// Bad configuration

void expect_invalid(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Bspline, BadConfigurationThrowsWithAClearMessage) {
  HarmonicOscillatorOrbitals ho(4, 1.0);
  expect_invalid([&] { BsplineOrbitals<double>(ho, BsplineBox{5.0, 3}); }, "at least 4 points");
  expect_invalid([&] { BsplineOrbitals<float>(ho, BsplineBox{0.0, 16}); }, "half-width");
  expect_invalid([&] { BsplineOrbitals<float>(ho, BsplineBox{-2.0, 16}); }, "half-width");
  expect_invalid([&] { BsplineOrbitals<float>(ho, BsplineBox{std::nan(""), 16}); }, "half-width");
  expect_invalid([&] { BsplineOrbitals<double>(ho, BsplineBox{5.0, 16}, 1000); }, "memory cap");
  // Far above the default cap: refused before anything is allocated.
  expect_invalid([&] { BsplineOrbitals<float>(ho, BsplineBox{5.0, 2000}); }, "memory cap");
  BsplineBoxRule rule;
  rule.margin = -1.0;
  expect_invalid([&] { ho_bspline_box(4, 1.0, rule); }, "margin");
  rule = {};
  rule.points_per_wavelength = 0.0;
  expect_invalid([&] { ho_bspline_box(4, 1.0, rule); }, "points_per_wavelength");
  rule = {};
  rule.edge_tolerance = 2.0;
  expect_invalid([&] { ho_bspline_box(4, 1.0, rule); }, "edge_tolerance");
  BsplineBoxRule small;
  small.grid = 8;
  BsplineOrbitals<double> s(ho, small);
  Eigen::MatrixXd v;
  expect_invalid([&] { s.evaluate_values(Eigen::Vector3d(0.0, std::nan(""), 0.0), v); }, "non-finite");
}

}  // namespace
}  // namespace slaterlab
