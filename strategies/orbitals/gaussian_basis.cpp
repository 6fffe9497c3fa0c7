#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"

// Normalisation. A shell's contraction coefficients d_k weigh normalised
// primitives; the primitive x^l exp(-alpha r^2) has norm
// primitive_norm(l, alpha)^{-1}, and every other component x^a y^b z^c of
// degree l differs from it by a factor independent of alpha, so the weights
// w_k = d_k primitive_norm(l, alpha_k) give every component the same relative
// contraction. Each AO i = sum_m T(i, m) x^a y^b z^c sum_k w_k e^{-alpha_k r^2}
// is then scaled to norm 1 by its exact norm (gaussian_function_norm): the
// Gaussian moments int x^{2n} e^{-p x^2} dx = (2n - 1)!! / (2p)^n sqrt(pi / p)
// make it a finite sum, with no table of per-component factors.
//
// Solid harmonics (Helgaker, Jorgensen and Olsen, eq. 6.4.47-6.4.50):
//   S_lm = N_lm sum_{t=0}^{(l-|m|)/2} sum_{u=0}^{t} sum_{v} C_tuv
//          x^{2t+|m|-2(u+v)} y^{2(u+v)} z^{l-2t-|m|},
//   C_tuv = (-1)^{t+v-v_m} 4^{-t} binom(l,t) binom(l-t,|m|+t) binom(t,u) binom(|m|,2v),
//   N_lm = sqrt(2 (l+|m|)! (l-|m|)! / 2^{delta_m0}) / (2^|m| l!),
// with v_m = 0 (v = 0, 1, ..., |m|/2) for m >= 0 and v_m = 1/2 (v = 1/2,
// 3/2, ..., |m|/2) for m < 0. Below, 2v runs over the integers of the parity
// of 2 v_m up to |m|. N_lm makes every S_lm of one l equal in norm to z^l
// (S_l0 = z^l + ...), Racah's normalisation.
//
// Derivatives. With s = r^2 and g(s) = sum_k w_k e^{-alpha_k s}, an AO is
// f = P g, P homogeneous of degree l, so r . grad P = l P and
//   grad f = g grad P + 2 g'(s) P r,
//   lap f  = g lap P + P (4 l g' + 6 g' + 4 s g''),
// every term computed from the monomials' own derivatives.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace slaterlab {

template <class Real>
struct EvaluationShell {
  int l = 0;
  int size = 0;       // AOs
  int cartesians = 0;
  Eigen::Index first_ao = 0;
  std::array<Real, 3> centre{};
  std::vector<Real> exponents;
  std::vector<Real> weights;
  std::vector<Real> angular;  // size x cartesians, row-major
  std::vector<std::array<int, 3>> powers;
  // Beyond s = cutoff every e^{-alpha_k s} is 0 in Real: the smallest
  // exponent times s passes -log(smallest subnormal).
  Real cutoff = 0;
};

namespace {

double double_factorial(int n) {  // n!!, with (-1)!! = 1
  double result = 1.0;
  for (int k = n; k > 1; k -= 2) result *= k;
  return result;
}

double factorial(int n) {
  double result = 1.0;
  for (int k = 2; k <= n; ++k) result *= k;
  return result;
}

double binomial(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  return factorial(n) / (factorial(k) * factorial(n - k));
}

// int x^a y^b z^c e^{-p r^2} d^3r: 0 unless every power is even.
double gaussian_moment(int a, int b, int c, double p) {
  if (a % 2 != 0 || b % 2 != 0 || c % 2 != 0) return 0.0;
  const int n = (a + b + c) / 2;
  return double_factorial(a - 1) * double_factorial(b - 1) * double_factorial(c - 1) *
         std::pow(std::numbers::pi / p, 1.5) / std::pow(2.0 * p, n);
}

int cartesian_index(const std::array<int, 3>& power) {
  // Alphabetical order: the position of (a, b, c) among degree l = a + b + c.
  const int l = power[0] + power[1] + power[2];
  const int rest = l - power[0];  // b + c
  return rest * (rest + 1) / 2 + power[2];
}

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

}  // namespace

int cartesian_count(int l) { return (l + 1) * (l + 2) / 2; }

int shell_size(int l, bool spherical) { return spherical ? 2 * l + 1 : cartesian_count(l); }

std::vector<std::array<int, 3>> cartesian_powers(int l) {
  std::vector<std::array<int, 3>> powers;
  for (int a = l; a >= 0; --a)
    for (int b = l - a; b >= 0; --b) powers.push_back({a, b, l - a - b});
  return powers;
}

int spherical_m(int index) { return index % 2 == 1 ? (index + 1) / 2 : -(index / 2); }

std::vector<double> solid_harmonic(int l, int m) {
  require(l >= 0 && std::abs(m) <= l, "solid_harmonic: |m| > l");
  const int am = std::abs(m);
  const int two_vm = m < 0 ? 1 : 0;
  std::vector<double> coefficients(static_cast<std::size_t>(cartesian_count(l)), 0.0);
  const double norm = std::sqrt(2.0 * factorial(l + am) * factorial(l - am) / (m == 0 ? 2.0 : 1.0)) /
                      (std::pow(2.0, am) * factorial(l));
  for (int t = 0; t <= (l - am) / 2; ++t)
    for (int u = 0; u <= t; ++u)
      for (int two_v = two_vm; two_v <= am; two_v += 2) {
        const int sign_power = t + (two_v - two_vm) / 2;
        const double c = (sign_power % 2 == 0 ? 1.0 : -1.0) * std::pow(0.25, t) * binomial(l, t) *
                         binomial(l - t, am + t) * binomial(t, u) * binomial(am, two_v);
        const int y_power = 2 * u + two_v;
        const std::array<int, 3> power{2 * t + am - y_power, y_power, l - 2 * t - am};
        coefficients[static_cast<std::size_t>(cartesian_index(power))] += norm * c;
      }
  return coefficients;
}

std::vector<double> angular_polynomial(int l, bool spherical, int index) {
  if (spherical) return solid_harmonic(l, spherical_m(index));
  std::vector<double> monomial(static_cast<std::size_t>(cartesian_count(l)), 0.0);
  monomial[static_cast<std::size_t>(index)] = 1.0;
  return monomial;
}

double gaussian_function_norm(int l, const std::vector<double>& angular,
                              const std::vector<double>& exponents,
                              const std::vector<double>& weights, double* magnitude) {
  const auto powers = cartesian_powers(l);
  double norm2 = 0.0, absolute = 0.0;
  for (std::size_t k = 0; k < exponents.size(); ++k)
    for (std::size_t q = 0; q < exponents.size(); ++q) {
      const double p = exponents[k] + exponents[q];
      for (std::size_t i = 0; i < powers.size(); ++i) {
        if (angular[i] == 0.0) continue;
        for (std::size_t j = 0; j < powers.size(); ++j) {
          if (angular[j] == 0.0) continue;
          const double term = weights[k] * weights[q] * angular[i] * angular[j] *
                              gaussian_moment(powers[i][0] + powers[j][0], powers[i][1] + powers[j][1],
                                              powers[i][2] + powers[j][2], p);
          norm2 += term;
          absolute += std::abs(term);
        }
      }
    }
  if (magnitude != nullptr) *magnitude = absolute;
  return std::sqrt(std::max(norm2, 0.0));
}

double primitive_norm(int l, double alpha) {
  return 1.0 / std::sqrt(gaussian_moment(2 * l, 0, 0, 2.0 * alpha));
}

namespace {

PreparedShell prepare(const GaussianShell& shell, const std::vector<Nucleus>& nuclei, std::size_t index) {
  const std::string where = "shell " + std::to_string(index);
  require(shell.nucleus >= 0 && static_cast<std::size_t>(shell.nucleus) < nuclei.size(),
          where + " names nucleus " + std::to_string(shell.nucleus) + " of " + std::to_string(nuclei.size()));
  require(shell.l >= 0 && shell.l <= kMaxAngularMomentum,
          where + " has l = " + std::to_string(shell.l) + ", outside 0.." +
              std::to_string(kMaxAngularMomentum));
  require(!shell.exponents.empty() && shell.exponents.size() == shell.coefficients.size(),
          where + " has " + std::to_string(shell.exponents.size()) + " exponents and " +
              std::to_string(shell.coefficients.size()) + " coefficients");
  PreparedShell prepared;
  prepared.l = shell.l;
  prepared.spherical = shell.spherical;
  prepared.centre = nuclei[static_cast<std::size_t>(shell.nucleus)].position;
  require(prepared.centre.allFinite(), where + ": its nucleus has a position that is not finite");
  for (std::size_t k = 0; k < shell.exponents.size(); ++k) {
    const double alpha = shell.exponents[k];
    require(std::isfinite(alpha) && alpha > 0.0,
            where + " has exponent " + std::to_string(alpha) + ", not finite and positive");
    require(std::isfinite(shell.coefficients[k]), where + " has a coefficient that is not finite");
    prepared.exponents.push_back(alpha);
    prepared.weights.push_back(shell.coefficients[k] * primitive_norm(shell.l, alpha));
  }
  const int size = shell_size(shell.l, shell.spherical);
  prepared.angular.resize(size, cartesian_count(shell.l));
  for (int i = 0; i < size; ++i) {
    const auto polynomial = angular_polynomial(shell.l, shell.spherical, i);
    double magnitude = 0.0;
    const double norm =
        gaussian_function_norm(shell.l, polynomial, prepared.exponents, prepared.weights, &magnitude);
    require(std::isfinite(norm) && norm > 0.0, where + ": its contraction has norm 0 or not finite");
    // A sum of `terms` products (6 roundings each: the moment's powers and
    // factorials, 4 products), then the square root and the division.
    const double terms = static_cast<double>(prepared.exponents.size() * prepared.exponents.size()) *
                         static_cast<double>(polynomial.size() * polynomial.size());
    prepared.normalisation_rounding =
        std::max(prepared.normalisation_rounding, (terms + 6.0) * magnitude / (norm * norm) / 2.0 + 2.0);
    for (std::size_t m = 0; m < polynomial.size(); ++m)
      prepared.angular(i, static_cast<Eigen::Index>(m)) = polynomial[m] / norm;
  }
  return prepared;
}

template <class Real>
EvaluationShell<Real> convert(const PreparedShell& shell) {
  EvaluationShell<Real> out;
  out.l = shell.l;
  out.size = static_cast<int>(shell.angular.rows());
  out.cartesians = static_cast<int>(shell.angular.cols());
  out.first_ao = shell.first_ao;
  for (int d = 0; d < 3; ++d) out.centre[static_cast<std::size_t>(d)] = static_cast<Real>(shell.centre(d));
  double smallest = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < shell.exponents.size(); ++k) {
    out.exponents.push_back(static_cast<Real>(shell.exponents[k]));
    out.weights.push_back(static_cast<Real>(shell.weights[k]));
    smallest = std::min(smallest, static_cast<double>(out.exponents.back()));
  }
  for (Eigen::Index i = 0; i < shell.angular.rows(); ++i)
    for (Eigen::Index m = 0; m < shell.angular.cols(); ++m)
      out.angular.push_back(static_cast<Real>(shell.angular(i, m)));
  out.powers = cartesian_powers(shell.l);
  // exp(-x) is 0 in Real once x > -log(denorm_min); 1 more for the rounding
  // of alpha * s itself. In double: 745.1 + 1.
  const double limit = -std::log(static_cast<double>(std::numeric_limits<Real>::denorm_min())) + 1.0;
  out.cutoff = static_cast<Real>(limit / smallest);
  return out;
}

// Monomials of degree l at d and, when wanted, their derivatives.
template <class Real, bool kDerivatives>
struct Monomials {
  static constexpr int kMax = (kMaxAngularMomentum + 1) * (kMaxAngularMomentum + 2) / 2;
  Real value[kMax];
  Real dx[kMax], dy[kMax], dz[kMax], laplacian[kMax];

  void compute(const EvaluationShell<Real>& shell, const Real d[3]) {
    Real pw[3][kMaxAngularMomentum + 1];
    for (int k = 0; k < 3; ++k) {
      pw[k][0] = Real(1);
      for (int p = 1; p <= shell.l; ++p) pw[k][p] = pw[k][p - 1] * d[k];
    }
    const auto at = [&](int k, int p) { return p < 0 ? Real(0) : pw[k][p]; };
    for (int m = 0; m < shell.cartesians; ++m) {
      const auto& q = shell.powers[static_cast<std::size_t>(m)];
      const Real x = pw[0][q[0]], y = pw[1][q[1]], z = pw[2][q[2]];
      value[m] = x * y * z;
      if constexpr (kDerivatives) {
        dx[m] = Real(q[0]) * at(0, q[0] - 1) * y * z;
        dy[m] = Real(q[1]) * x * at(1, q[1] - 1) * z;
        dz[m] = Real(q[2]) * x * y * at(2, q[2] - 1);
        laplacian[m] = Real(q[0] * (q[0] - 1)) * at(0, q[0] - 2) * y * z +
                       Real(q[1] * (q[1] - 1)) * x * at(1, q[1] - 2) * z +
                       Real(q[2] * (q[2] - 1)) * x * y * at(2, q[2] - 2);
      }
    }
  }
};

template <class Real, bool kDerivatives>
void evaluate_shell(const EvaluationShell<Real>& shell, const Real* point, const AoVgl<Real>& out) {
  const Real d[3] = {point[0] - shell.centre[0], point[1] - shell.centre[1], point[2] - shell.centre[2]};
  const Real s = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
  const Eigen::Index first = shell.first_ao;
  if (!(s <= shell.cutoff)) {  // also a NaN position: no exponential is evaluated
    const Real fill = s > shell.cutoff ? Real(0) : s;  // NaN propagates
    for (int i = 0; i < shell.size; ++i) {
      out.value[first + i] = fill;
      if constexpr (kDerivatives)
        out.dx[first + i] = out.dy[first + i] = out.dz[first + i] = out.laplacian[first + i] = fill;
    }
    return;
  }
  Real g = 0, g1 = 0, g2 = 0;  // g(s) and its first two derivatives in s
  for (std::size_t k = 0; k < shell.exponents.size(); ++k) {
    const Real alpha = shell.exponents[k];
    const Real term = shell.weights[k] * std::exp(-alpha * s);
    g += term;
    if constexpr (kDerivatives) {
      g1 -= alpha * term;
      g2 += alpha * alpha * term;
    }
  }
  Monomials<Real, kDerivatives> mono;
  mono.compute(shell, d);
  const Real* row = shell.angular.data();
  for (int i = 0; i < shell.size; ++i, row += shell.cartesians) {
    Real p = 0, px = 0, py = 0, pz = 0, plap = 0;
    for (int m = 0; m < shell.cartesians; ++m) {
      p += row[m] * mono.value[m];
      if constexpr (kDerivatives) {
        px += row[m] * mono.dx[m];
        py += row[m] * mono.dy[m];
        pz += row[m] * mono.dz[m];
        plap += row[m] * mono.laplacian[m];
      }
    }
    out.value[first + i] = p * g;
    if constexpr (kDerivatives) {
      const Real radial = Real(2) * g1 * p;
      out.dx[first + i] = px * g + radial * d[0];
      out.dy[first + i] = py * g + radial * d[1];
      out.dz[first + i] = pz * g + radial * d[2];
      out.laplacian[first + i] =
          plap * g + p * (Real(4 * shell.l + 6) * g1 + Real(4) * s * g2);
    }
  }
}

}  // namespace

GaussianBasis::GaussianBasis(const std::vector<GaussianShell>& shells, const std::vector<Nucleus>& nuclei) {
  for (std::size_t s = 0; s < shells.size(); ++s) {
    PreparedShell prepared = prepare(shells[s], nuclei, s);
    prepared.first_ao = size_;
    size_ += prepared.angular.rows();
    shells_.push_back(std::move(prepared));
  }
  for (const auto& shell : shells_) {
    double_shells_.push_back(convert<double>(shell));
    float_shells_.push_back(convert<float>(shell));
  }
}

GaussianBasis::~GaussianBasis() = default;
GaussianBasis::GaussianBasis(GaussianBasis&&) noexcept = default;

template <>
const std::vector<EvaluationShell<double>>& GaussianBasis::evaluation_shells<double>() const {
  return double_shells_;
}
template <>
const std::vector<EvaluationShell<float>>& GaussianBasis::evaluation_shells<float>() const {
  return float_shells_;
}

template <class Real>
void GaussianBasis::values(const Real* point, Real* values) const {
  const AoVgl<Real> out{values, nullptr, nullptr, nullptr, nullptr};
  for (const auto& shell : evaluation_shells<Real>()) evaluate_shell<Real, false>(shell, point, out);
}

template <class Real>
void GaussianBasis::vgl(const Real* point, const AoVgl<Real>& out) const {
  for (const auto& shell : evaluation_shells<Real>()) evaluate_shell<Real, true>(shell, point, out);
}

template void GaussianBasis::values<double>(const double*, double*) const;
template void GaussianBasis::values<float>(const float*, float*) const;
template void GaussianBasis::vgl<double>(const double*, const AoVgl<double>&) const;
template void GaussianBasis::vgl<float>(const float*, const AoVgl<float>&) const;

}  // namespace slaterlab
