#include "slaterlab/strategies/sampling/ewald.hpp"

// The Ewald sum (Ewald, Ann. Phys. 369, 253 (1921)) for N charges -1 in a
// cube of side L, V = L^3, with a uniform background of charge +N.
//
// Splitting 1/r = erfc(alpha r)/r + erf(alpha r)/r and summing the smooth part
// in Fourier space gives the periodic potential with the G = 0 term removed
//
//   phi(r) = sum_n erfc(alpha |r + nL|) / |r + nL|
//          + (4 pi / V) sum_{G != 0} exp(-G^2 / (4 alpha^2)) / G^2 cos(G.r)
//          - pi / (alpha^2 V),
//
// G = (2 pi / L) g, g in Z^3. The last term is the G -> 0 limit of the smooth
// part minus that of 4 pi / (V G^2): the background. phi does not depend on
// alpha. Its constant at the origin is
//
//   xi = sum_{n != 0} erfc(alpha |n| L) / (|n| L)
//      + (4 pi / V) sum_{G != 0} exp(-G^2 / (4 alpha^2)) / G^2 - pi / (alpha^2 V) - 2 alpha / sqrt(pi),
//
// the last term from erf(alpha r)/r -> 2 alpha / sqrt(pi). The energy per cell
// E = 1/2 sum_{i != j} phi(r_ij) + N xi / 2 then reads, with S(G) = sum_j e^{iG.r_j}
// (the i = j terms of |S|^2 cancel against the reciprocal part of N xi / 2),
//
//   E = sum_{i<j} sum_n erfc(alpha |r_ij + nL|) / |r_ij + nL|  +  (N/2) sum_{n != 0} erfc(alpha |n| L) / (|n| L)
//     + (2 pi / V) sum_{G != 0} exp(-G^2 / (4 alpha^2)) / G^2 |S(G)|^2
//     - N alpha / sqrt(pi) - pi N^2 / (2 alpha^2 V).
//
// Cut-offs from the tolerance tau. A real-space term beyond r_c is below
// erfc(alpha r_c) / r_c; a reciprocal term beyond G_c is below
// exp(-G_c^2 / (4 alpha^2)) times its largest coefficient 4 pi / (V G_min^2).
// So each neglected term is below tau times the scale of the leading one when
//
//   erfc(alpha r_c) = tau,    G_c = 2 alpha sqrt(ln(1 / tau)).
//
// The neglected tails decay as Gaussians past the cut-offs, so their sums are
// a modest multiple of the first neglected terms (tested: three alphas agree
// to 1e-12 relative at tau = 1e-12 or below). Default r_c = L/2: every pair
// then needs only its minimum image (an image beyond it is at least L/2
// away), and alpha = x / r_c with erfc(x) = tau (x = 5.05 for 1e-12: alpha L
// = 10.1, G_c L / (2 pi) = 16.9, about 10^4 vectors of a half space). With an
// explicit alpha, r_c = x / alpha; when r_c > L/2 the image cells with
// (|n_d| - 1/2) L < r_c are summed (a minimum-image component is at most L/2).
//
// Reciprocal part: per electron and direction the powers e^{i 2 pi m x / L},
// m = 0..g_max, each by its own sin/cos (no accumulated rounding); S(G) of
// one (gx, gy) column shares the product of its x and y powers.

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace slaterlab {
namespace {

constexpr double kPi = std::numbers::pi;

// x with erfc(x) = tau, by bisection (erfc is decreasing).
double erfc_inverse(double tau) {
  double lo = 0.0, hi = 27.0;  // erfc(27) < 1e-300
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (std::erfc(mid) > tau ? lo : hi) = mid;
  }
  return hi;
}

// x wrapped into [-L/2, L/2).
double minimum_image(double x, double box_length) {
  return x - box_length * std::floor(x / box_length + 0.5);
}

}  // namespace

EwaldSum::EwaldSum(double box_length, double tolerance, double splitting) : box_length_(box_length) {
  if (!(box_length > 0.0) || !std::isfinite(box_length))
    throw std::invalid_argument("EwaldSum: the box length must be a finite positive number, got " +
                                std::to_string(box_length));
  if (!(tolerance > 0.0 && tolerance <= 1e-2))
    throw std::invalid_argument("EwaldSum: the tolerance must be in (0, 1e-2], got " + std::to_string(tolerance));
  if (!(splitting >= 0.0) || !std::isfinite(splitting))
    throw std::invalid_argument("EwaldSum: the splitting parameter must be >= 0 (0: from the rule), got " +
                                std::to_string(splitting));
  const double x = erfc_inverse(tolerance);
  if (splitting == 0.0) {
    real_cutoff_ = 0.5 * box_length;
    alpha_ = x / real_cutoff_;
  } else {
    alpha_ = splitting;
    real_cutoff_ = x / alpha_;
  }
  reciprocal_cutoff_ = 2.0 * alpha_ * std::sqrt(std::log(1.0 / tolerance));
  images_ = static_cast<int>(std::ceil(real_cutoff_ / box_length + 0.5)) - 1;
  // A splitting far from alpha L ~ 10, or an extreme tolerance, makes a sum huge.
  if (images_ > 16 || reciprocal_cutoff_ * box_length / (2.0 * kPi) > 256.0)
    throw std::invalid_argument("EwaldSum: tolerance " + std::to_string(tolerance) + " with splitting " +
                                std::to_string(alpha_) + " needs too many image cells or reciprocal vectors " +
                                "for the box length " + std::to_string(box_length));

  const double volume = box_length * box_length * box_length;
  const double unit = 2.0 * kPi / box_length;
  const double g_cut = reciprocal_cutoff_ / unit;  // in units of 2 pi / L
  g_max_ = static_cast<int>(std::floor(g_cut));
  const double g_cut2 = g_cut * g_cut;
  long double reciprocal_at_origin = 0.0L;  // ~10^4 positive terms: keep their rounding out of xi
  for (int gx = 0; gx <= g_max_; ++gx)
    for (int gy = gx == 0 ? 0 : -g_max_; gy <= g_max_; ++gy) {
      // Half space: gx > 0, or gx = 0 and gy > 0, or gx = gy = 0 and gz > 0.
      // The gz inside the sphere form one interval.
      Column column{gx, gy, 0, -1, coefficient_.size()};
      bool empty = true;
      for (int gz = (gx == 0 && gy == 0) ? 1 : -g_max_; gz <= g_max_; ++gz) {
        const double g2 = double(gx * gx + gy * gy + gz * gz);
        if (g2 > g_cut2) continue;
        if (empty) column.gz_first = gz;
        empty = false;
        column.gz_last = gz;
        const double k2 = unit * unit * g2;
        const double c = 4.0 * kPi / volume * std::exp(-k2 / (4.0 * alpha_ * alpha_)) / k2;
        coefficient_.push_back(c);
        reciprocal_at_origin += 2.0 * c;
      }
      if (!empty) columns_.push_back(column);
    }

  self_images_ = 0.0;
  for (int a = -images_; a <= images_; ++a)  // |n| L < r_c needs |n_d| <= images_
    for (int b = -images_; b <= images_; ++b)
      for (int c = -images_; c <= images_; ++c) {
        if (a == 0 && b == 0 && c == 0) continue;
        const double d = box_length * std::sqrt(double(a * a + b * b + c * c));
        if (d < real_cutoff_) self_images_ += std::erfc(alpha_ * d) / d;
      }
  madelung_ = self_images_ + static_cast<double>(reciprocal_at_origin) - kPi / (alpha_ * alpha_ * volume) -
              2.0 * alpha_ / std::sqrt(kPi);
}

double EwaldSum::real_space_potential(const Eigen::Vector3d& d) const {
  const double rc2 = real_cutoff_ * real_cutoff_;
  double sum = 0.0;
  for (int a = -images_; a <= images_; ++a)
    for (int b = -images_; b <= images_; ++b)
      for (int c = -images_; c <= images_; ++c) {
        const Eigen::Vector3d r = d + box_length_ * Eigen::Vector3d(a, b, c);
        const double r2 = r.squaredNorm();
        if (r2 < rc2) {
          const double rn = std::sqrt(r2);
          sum += std::erfc(alpha_ * rn) / rn;
        }
      }
  return sum;
}

double EwaldSum::real_space_pairs(const Eigen::Matrix3Xd& wrapped) const {
  const Eigen::Index n = wrapped.cols();
  const double rc2 = real_cutoff_ * real_cutoff_;
  const double half = 0.5 * box_length_;
  // Coordinates are in [-L/2, L/2), so a difference is in (-L, L) and one
  // conditional shift gives its minimum image (a loop the compiler vectorises).
  std::vector<double> dx(static_cast<std::size_t>(n)), dy(dx.size()), dz(dx.size()), r2(dx.size());
  const auto image = [&](double d) { return d >= half ? d - box_length_ : (d < -half ? d + box_length_ : d); };
  double total = 0.0;
  for (Eigen::Index i = 1; i < n; ++i) {
    const auto m = static_cast<std::size_t>(i);
    for (std::size_t j = 0; j < m; ++j) {
      dx[j] = image(wrapped(0, i) - wrapped(0, Eigen::Index(j)));
      dy[j] = image(wrapped(1, i) - wrapped(1, Eigen::Index(j)));
      dz[j] = image(wrapped(2, i) - wrapped(2, Eigen::Index(j)));
      r2[j] = dx[j] * dx[j] + dy[j] * dy[j] + dz[j] * dz[j];
    }
    double row = 0.0;  // per-row partial sums keep the rounding near sqrt(N) eps
    for (std::size_t j = 0; j < m; ++j) {
      if (images_ > 0) {
        row += real_space_potential(Eigen::Vector3d(dx[j], dy[j], dz[j]));
      } else if (r2[j] < rc2) {
        const double r = std::sqrt(r2[j]);
        row += std::erfc(alpha_ * r) / r;
      }
    }
    total += row;
  }
  return total;
}

double EwaldSum::reciprocal_space(const Eigen::Matrix3Xd& wrapped) const {
  const Eigen::Index n = wrapped.cols();
  const auto nn = static_cast<std::size_t>(n);
  const int width = 2 * g_max_ + 1;
  // cos_m[(d * width + m + g_max) * N + j] = cos(2 pi m x_dj / L), likewise sin.
  std::vector<double> cos_m(3 * static_cast<std::size_t>(width) * nn), sin_m(cos_m.size());
  for (int d = 0; d < 3; ++d)
    for (int m = -g_max_; m <= g_max_; ++m) {
      const std::size_t row = (static_cast<std::size_t>(d) * width + (m + g_max_)) * nn;
      for (Eigen::Index j = 0; j < n; ++j) {
        const double angle = 2.0 * kPi * (static_cast<double>(m) * (wrapped(d, j) / box_length_));
        cos_m[row + j] = std::cos(angle);
        sin_m[row + j] = std::sin(angle);
      }
    }
  const auto power_row = [&](int d, int m) {
    return (static_cast<std::size_t>(d) * width + (m + g_max_)) * nn;
  };
  std::vector<double> xy_cos(nn), xy_sin(nn);
  double total = 0.0;
  for (const Column& column : columns_) {
    const std::size_t px = power_row(0, column.gx), py = power_row(1, column.gy);
    for (std::size_t j = 0; j < nn; ++j) {
      xy_cos[j] = cos_m[px + j] * cos_m[py + j] - sin_m[px + j] * sin_m[py + j];
      xy_sin[j] = cos_m[px + j] * sin_m[py + j] + sin_m[px + j] * cos_m[py + j];
    }
    for (int gz = column.gz_first; gz <= column.gz_last; ++gz) {
      const std::size_t pz = power_row(2, gz);
      double re = 0.0, im = 0.0;
      for (std::size_t j = 0; j < nn; ++j) {
        re += xy_cos[j] * cos_m[pz + j] - xy_sin[j] * sin_m[pz + j];
        im += xy_cos[j] * sin_m[pz + j] + xy_sin[j] * cos_m[pz + j];
      }
      total += coefficient_[column.offset + static_cast<std::size_t>(gz - column.gz_first)] * (re * re + im * im);
    }
  }
  return total;
}

double EwaldSum::energy(const Eigen::Matrix3Xd& positions) const {
  const Eigen::Index n = positions.cols();
  if (!positions.allFinite()) throw std::invalid_argument("EwaldSum::energy: positions must be finite");
  Eigen::Matrix3Xd wrapped(3, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (int d = 0; d < 3; ++d) wrapped(d, j) = minimum_image(positions(d, j), box_length_);
  const double volume = box_length_ * box_length_ * box_length_;
  const double count = static_cast<double>(n);
  return real_space_pairs(wrapped) + 0.5 * count * self_images_ + reciprocal_space(wrapped) -
         count * alpha_ / std::sqrt(kPi) - kPi * count * count / (2.0 * alpha_ * alpha_ * volume);
}

double EwaldSum::pair_potential(const Eigen::Vector3d& r) const {
  Eigen::Vector3d d;
  for (int k = 0; k < 3; ++k) d[k] = minimum_image(r[k], box_length_);
  const double unit = 2.0 * kPi / box_length_;
  double reciprocal = 0.0;
  for (const Column& column : columns_)
    for (int gz = column.gz_first; gz <= column.gz_last; ++gz) {
      const double phase = unit * (column.gx * d[0] + column.gy * d[1] + gz * d[2]);
      reciprocal += 2.0 * coefficient_[column.offset + static_cast<std::size_t>(gz - column.gz_first)] *
                    std::cos(phase);
    }
  const double volume = box_length_ * box_length_ * box_length_;
  return real_space_potential(d) + reciprocal - kPi / (alpha_ * alpha_ * volume);
}

}  // namespace slaterlab
