#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"

// phi_{nx,ny,nz}(r) = h_nx(x) h_ny(y) h_nz(z), with the normalised Hermite
// functions of frequency alpha
//
//   h_n(x) = (alpha/pi)^{1/4} (2^n n!)^{-1/2} H_n(sqrt(alpha) x) exp(-alpha x^2 / 2).
//
// They are evaluated by the three-term recurrence of the normalised functions
// (xi = sqrt(alpha) x)
//
//   h_0 = (alpha/pi)^{1/4} exp(-xi^2/2),   h_1 = sqrt(2) xi h_0,
//   h_{n+1} = sqrt(2/(n+1)) xi h_n - sqrt(n/(n+1)) h_{n-1},
//
// which never forms a factorial or a raw Hermite polynomial, so it neither
// overflows nor cancels catastrophically for n up to 20 and beyond. Derivatives
// are analytic:
//
//   h_n'  = sqrt(alpha) (sqrt(n/2) h_{n-1} - sqrt((n+1)/2) h_{n+1}),
//   h_n'' = (alpha^2 x^2 - alpha (2n+1)) h_n,
//
// so each orbital satisfies -1/2 lap phi + alpha^2 r^2/2 phi = alpha (n + 3/2) phi
// (n = nx+ny+nz) to rounding: the exactness the VMC exact energy relies on.
//
// Orbital order. The lowest N states, by shell n = nx+ny+nz (shell n holds
// (n+1)(n+2)/2 states); inside a shell, nx descending, then ny descending
// (nz = n - nx - ny). For shell 1: (1,0,0), (0,1,0), (0,0,1). Shell 2:
// (2,0,0), (1,1,0), (1,0,1), (0,2,0), (0,1,1), (0,0,2).
// Closed shells (all shells up to n_max filled) give N = (n_max+1)(n_max+2)(n_max+3)/6
// = 1, 4, 10, 20, 35, 56, 84, 120, 165, 220, ...; only these have a unique
// ground state. Any N >= 1 is accepted: an open shell takes the first states
// of the last shell in the order above (a valid, but arbitrary, choice among
// degenerate ground states).

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace slaterlab {

Eigen::Index ho_closed_shell_size(int n_max) {
  if (n_max < 0) return 0;
  const Eigen::Index m = n_max;
  return (m + 1) * (m + 2) * (m + 3) / 6;
}

int ho_shell_of(Eigen::Index i) {
  if (i < 0) throw std::invalid_argument("ho_shell_of: negative orbital index");
  int n = 0;
  while (ho_closed_shell_size(n) <= i) ++n;
  return n;
}

bool ho_is_closed_shell(Eigen::Index n) {
  return n >= 1 && ho_closed_shell_size(ho_shell_of(n - 1)) == n;
}

std::vector<std::array<int, 3>> ho_quantum_numbers(Eigen::Index n) {
  if (n < 1) throw std::invalid_argument("ho_quantum_numbers: N must be >= 1, got " + std::to_string(n));
  std::vector<std::array<int, 3>> q;
  q.reserve(static_cast<std::size_t>(n));
  for (int shell = 0; static_cast<Eigen::Index>(q.size()) < n; ++shell)
    for (int nx = shell; nx >= 0 && static_cast<Eigen::Index>(q.size()) < n; --nx)
      for (int ny = shell - nx; ny >= 0 && static_cast<Eigen::Index>(q.size()) < n; --ny)
        q.push_back({nx, ny, shell - nx - ny});
  return q;
}

double ho_energy_sum(Eigen::Index n) {
  double sum = 0.0;
  for (const auto& q : ho_quantum_numbers(n)) sum += q[0] + q[1] + q[2] + 1.5;
  return sum;
}

void hermite_functions(double x, double alpha, int n_max, double* h) {
  const double xi = std::sqrt(alpha) * x;
  h[0] = std::pow(alpha / std::numbers::pi, 0.25) * std::exp(-0.5 * xi * xi);
  if (n_max >= 1) h[1] = std::numbers::sqrt2 * xi * h[0];
  for (int n = 1; n < n_max; ++n) {
    const double np1 = n + 1;
    h[n + 1] = std::sqrt(2.0 / np1) * xi * h[n] - std::sqrt(n / np1) * h[n - 1];
  }
}

HarmonicOscillatorOrbitals::HarmonicOscillatorOrbitals(Eigen::Index n, double alpha) : alpha_(alpha) {
  if (!(alpha > 0.0) || !std::isfinite(alpha))
    throw std::invalid_argument("HarmonicOscillatorOrbitals: alpha must be a finite positive number, got " +
                                std::to_string(alpha));
  quanta_ = ho_quantum_numbers(n);  // throws for n < 1
  n_max_ = ho_shell_of(n - 1);
}

double HarmonicOscillatorOrbitals::orbital_energy(Eigen::Index i) const {
  const auto& q = quanta_[static_cast<std::size_t>(i)];
  return alpha_ * (q[0] + q[1] + q[2] + 1.5);
}

void HarmonicOscillatorOrbitals::evaluate_values(const Eigen::Matrix3Xd& positions,
                                                 Eigen::MatrixXd& values) const {
  const Eigen::Index n = size();
  const int stride = n_max_ + 1;
  std::vector<double> h(3 * static_cast<std::size_t>(stride));
  values.resize(n, positions.cols());
  for (Eigen::Index m = 0; m < positions.cols(); ++m) {
    for (int d = 0; d < 3; ++d) hermite_functions(positions(d, m), alpha_, n_max_, &h[d * stride]);
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto& q = quanta_[static_cast<std::size_t>(i)];
      values(i, m) = h[q[0]] * h[stride + q[1]] * h[2 * stride + q[2]];
    }
  }
}

void HarmonicOscillatorOrbitals::evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const {
  const Eigen::Index n = size();
  // h needs one order more than the occupied shells for h_n'.
  const int stride = n_max_ + 2;
  std::vector<double> h(3 * static_cast<std::size_t>(stride));
  std::vector<double> dh(h.size());
  std::vector<double> d2h(h.size());
  const double sa = std::sqrt(alpha_);
  out.value.resize(n, positions.cols());
  out.gradient.resize(3 * n, positions.cols());
  out.laplacian.resize(n, positions.cols());
  for (Eigen::Index m = 0; m < positions.cols(); ++m) {
    for (int d = 0; d < 3; ++d) {
      const double x = positions(d, m);
      double* hd = &h[d * stride];
      hermite_functions(x, alpha_, n_max_ + 1, hd);
      for (int k = 0; k <= n_max_; ++k) {
        const double lower = k > 0 ? std::sqrt(0.5 * k) * hd[k - 1] : 0.0;
        dh[d * stride + k] = sa * (lower - std::sqrt(0.5 * (k + 1)) * hd[k + 1]);
        d2h[d * stride + k] = (alpha_ * alpha_ * x * x - alpha_ * (2 * k + 1)) * hd[k];
      }
    }
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto& q = quanta_[static_cast<std::size_t>(i)];
      const int ix = q[0], iy = stride + q[1], iz = 2 * stride + q[2];
      out.value(i, m) = h[ix] * h[iy] * h[iz];
      out.gradient(3 * i + 0, m) = dh[ix] * h[iy] * h[iz];
      out.gradient(3 * i + 1, m) = h[ix] * dh[iy] * h[iz];
      out.gradient(3 * i + 2, m) = h[ix] * h[iy] * dh[iz];
      out.laplacian(i, m) = d2h[ix] * h[iy] * h[iz] + h[ix] * d2h[iy] * h[iz] + h[ix] * h[iy] * d2h[iz];
    }
  }
}

}  // namespace slaterlab
