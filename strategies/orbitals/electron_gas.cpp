#include "slaterlab/strategies/orbitals/electron_gas.hpp"

// Plane waves in a periodic cube of side L: k = (2 pi / L) n, n in Z^3. The
// N lowest |k| fill shells of equal |n|^2; a determinant is unique (a closed
// shell) only when N = #{n : |n|^2 <= m} for some m that is a sum of three
// squares: 1, 7, 19, 27, 33, 57, 81, 93, 123, ... (m = 7, 15, 23, ... are not
// sums of three squares and add no shell).
//
// Real orbitals. The complex waves e^{+-ik.r} of a pair span the same space as
// sqrt(2) cos(k.r), sqrt(2) sin(k.r) (a unitary change of basis inside the
// occupied space, so the determinant changes by a constant phase only and
// |D|^2, the local energy and every physical quantity are the same). The
// factor sqrt(2) makes the mean square over the cell 1, like the constant.
//
// Evaluation. With t_d = x_d / L reduced to [-1/2, 1/2] (subtracting the
// nearest integer is exact), e^{ik.r} = prod_d e^{i 2 pi n_d t_d}. Per
// position and direction the powers e^{i 2 pi m t} for m = 0..n_max are each
// computed by one sin/cos of 2 pi m t (negative m: the conjugate), not by
// repeated multiplication, which would accumulate about m eps. The quotient
// x / L carries a rounding of |x / L| eps, which the phase multiplies by 2 pi m
// (the conditioning of k.x: rounding x itself does as much); forming 2 pi m t
// adds about 2 pi m eps / 2 and sin/cos 1 ulp; one orbital is then the product
// of three unit complex numbers (2 complex products, a few eps). So a value,
// scaled by 1/sqrt(2), is within about (2 pi |n|_1 (|x / L|_max + 1) + 8) eps
// of the exact plane wave at the given position; gradients carry the factor
// |k| and the Laplacian is -|k|^2 phi with |k|^2 = (2 pi / L)^2 |n|^2, |n|^2 an
// exact integer, so -1/2 lap phi_i / phi_i = |k_i|^2 / 2 holds to rounding of
// one product.

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace slaterlab {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;
// Beyond about a million orbitals per spin no table or determinant fits.
constexpr Eigen::Index kMaxOrbitals = Eigen::Index{1} << 20;

struct ClosedShell {
  Eigen::Index count;  // orbitals with |n|^2 <= norm2
  int norm2;
};

// The closed shells in ascending order through the first one above n (so a
// shell above n is always there). The cube [-r, r]^3 holds every n with
// |n|^2 <= r^2, so counts up to m = r^2 are complete.
std::vector<ClosedShell> shells_through(Eigen::Index n) {
  for (int r = 2;; r *= 2) {
    const int m_max = r * r;
    std::vector<Eigen::Index> count(static_cast<std::size_t>(m_max) + 1, 0);
    for (int a = -r; a <= r; ++a)
      for (int b = -r; b <= r; ++b)
        for (int c = -r; c <= r; ++c) {
          const int q = a * a + b * b + c * c;
          if (q <= m_max) ++count[static_cast<std::size_t>(q)];
        }
    std::vector<ClosedShell> shells;
    Eigen::Index total = 0;
    for (int m = 0; m <= m_max; ++m) {
      if (count[static_cast<std::size_t>(m)] == 0) continue;
      total += count[static_cast<std::size_t>(m)];
      shells.push_back({total, m});
      if (total > n) return shells;
    }
  }
}

void check_size(Eigen::Index n) {
  if (n > kMaxOrbitals)
    throw std::invalid_argument("electron gas: N = " + std::to_string(n) +
                                " per spin is beyond the largest supported, " + std::to_string(kMaxOrbitals));
}

// The shell of exactly n orbitals; throws (message of the header) otherwise.
ClosedShell closed_shell(Eigen::Index n) {
  if (n < 1)
    throw std::invalid_argument("electron gas: N = " + std::to_string(n) +
                                " per spin is not a closed shell; the smallest is 1");
  check_size(n);
  const auto shells = shells_through(n);
  const auto above = std::find_if(shells.begin(), shells.end(), [n](const ClosedShell& s) { return s.count >= n; });
  if (above->count == n) return *above;
  throw std::invalid_argument("electron gas: N = " + std::to_string(n) +
                              " per spin is not a closed shell; the nearest are " +
                              std::to_string(std::prev(above)->count) + " and " + std::to_string(above->count));
}

void check_box_length(double box_length) {
  if (!(box_length > 0.0) || !std::isfinite(box_length))
    throw std::invalid_argument("electron gas: the box length must be a finite positive number, got " +
                                std::to_string(box_length));
}

// e^{i 2 pi m x / L} for m = -n_max..n_max at index m + n_max, each by its own
// sin/cos (file comment).
void plane_wave_powers(double x, double box_length, int n_max, double* cos_m, double* sin_m) {
  const double cells = x / box_length;
  const double t = cells - std::nearbyint(cells);  // exact; |t| <= 1/2 keeps the angles small
  cos_m[n_max] = 1.0;
  sin_m[n_max] = 0.0;
  for (int m = 1; m <= n_max; ++m) {
    const double angle = kTwoPi * (static_cast<double>(m) * t);
    const double c = std::cos(angle), s = std::sin(angle);
    cos_m[n_max + m] = c;
    sin_m[n_max + m] = s;
    cos_m[n_max - m] = c;
    sin_m[n_max - m] = -s;
  }
}

// Per position: e^{i 2 pi m x_d / L} for the three directions, direction d's
// power m at index d (2 n_max + 1) + m + n_max.
class PlaneWaveTable {
 public:
  PlaneWaveTable(double box_length, int n_max)
      : box_length_(box_length), n_max_(n_max), cos_(3 * static_cast<std::size_t>(2 * n_max + 1)),
        sin_(cos_.size()) {}
  static int index(int d, int m, int n_max) { return d * (2 * n_max + 1) + m + n_max; }
  void at(const double* r) {
    for (int d = 0; d < 3; ++d) {
      const auto row = static_cast<std::size_t>(index(d, -n_max_, n_max_));
      plane_wave_powers(r[d], box_length_, n_max_, &cos_[row], &sin_[row]);
    }
  }
  // (cos k.r, sin k.r) from the powers at indices p.
  void wave(const std::array<int, 3>& p, double& c, double& s) const {
    const double* cs = cos_.data();
    const double* sn = sin_.data();
    const double cxy = cs[p[0]] * cs[p[1]] - sn[p[0]] * sn[p[1]];
    const double sxy = cs[p[0]] * sn[p[1]] + sn[p[0]] * cs[p[1]];
    c = cxy * cs[p[2]] - sxy * sn[p[2]];
    s = cxy * sn[p[2]] + sxy * cs[p[2]];
  }

 private:
  double box_length_;
  int n_max_;
  std::vector<double> cos_, sin_;
};

}  // namespace

std::vector<Eigen::Index> gas_closed_shells(Eigen::Index up_to) {
  std::vector<Eigen::Index> counts;
  if (up_to < 1) return counts;
  check_size(up_to);
  for (const ClosedShell& s : shells_through(up_to))
    if (s.count <= up_to) counts.push_back(s.count);
  return counts;
}

bool gas_is_closed_shell(Eigen::Index n) {
  if (n < 1 || n > kMaxOrbitals) return false;
  const auto shells = shells_through(n);
  return std::any_of(shells.begin(), shells.end(), [n](const ClosedShell& s) { return s.count == n; });
}

void gas_require_closed_shell(Eigen::Index n) { closed_shell(n); }

std::vector<std::array<int, 3>> gas_wave_numbers(Eigen::Index n_per_spin) {
  const ClosedShell shell = closed_shell(n_per_spin);
  const int r = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(shell.norm2))));
  std::vector<std::array<int, 3>> representatives;
  for (int a = -r; a <= r; ++a)
    for (int b = -r; b <= r; ++b)
      for (int c = -r; c <= r; ++c) {
        const bool representative = a > 0 || (a == 0 && (b > 0 || (b == 0 && c > 0)));
        if (representative && a * a + b * b + c * c <= shell.norm2) representatives.push_back({a, b, c});
      }
  const auto norm2 = [](const std::array<int, 3>& n) { return n[0] * n[0] + n[1] * n[1] + n[2] * n[2]; };
  std::sort(representatives.begin(), representatives.end(),
            [&](const std::array<int, 3>& p, const std::array<int, 3>& q) {
              if (norm2(p) != norm2(q)) return norm2(p) < norm2(q);
              return p > q;  // descending (nx, ny, nz) inside a shell
            });
  std::vector<std::array<int, 3>> orbitals{{0, 0, 0}};
  orbitals.reserve(static_cast<std::size_t>(n_per_spin));
  for (const auto& n : representatives) {
    orbitals.push_back(n);  // sqrt(2) cos
    orbitals.push_back(n);  // sqrt(2) sin
  }
  return orbitals;
}

ElectronGasOrbitals::ElectronGasOrbitals(Eigen::Index n_per_spin, double box_length)
    : box_length_(box_length), n_max_(0) {
  check_box_length(box_length);
  wave_numbers_ = gas_wave_numbers(n_per_spin);
  for (const auto& n : wave_numbers_)
    for (int d = 0; d < 3; ++d) n_max_ = std::max(n_max_, std::abs(n[d]));
  const double unit = kTwoPi / box_length_;
  for (std::size_t i = 1; i < wave_numbers_.size(); i += 2) {
    const auto& n = wave_numbers_[i];
    pair_powers_.push_back({PlaneWaveTable::index(0, n[0], n_max_), PlaneWaveTable::index(1, n[1], n_max_),
                            PlaneWaveTable::index(2, n[2], n_max_)});
    const double n2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];  // exact integer
    pair_k_.push_back({unit * n[0], unit * n[1], unit * n[2], unit * unit * n2});
  }
}

Eigen::Vector3d ElectronGasOrbitals::k_vector(Eigen::Index i) const {
  const auto& n = wave_numbers_[static_cast<std::size_t>(i)];
  return (kTwoPi / box_length_) * Eigen::Vector3d(n[0], n[1], n[2]);
}

double ElectronGasOrbitals::kinetic_sum() const {
  long long sum_n2 = 0;  // exact: sum over orbitals of |n|^2
  for (const auto& n : wave_numbers_) sum_n2 += n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
  const double unit = kTwoPi / box_length_;
  return 0.5 * unit * unit * static_cast<double>(sum_n2);
}

void ElectronGasOrbitals::evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const {
  values.resize(size(), positions.cols());
  PlaneWaveTable table(box_length_, n_max_);
  const std::size_t pairs = pair_powers_.size();
  for (Eigen::Index m = 0; m < positions.cols(); ++m) {
    table.at(positions.col(m).data());
    double* v = values.col(m).data();
    v[0] = 1.0;
    for (std::size_t p = 0; p < pairs; ++p) {
      double c, s;
      table.wave(pair_powers_[p], c, s);
      v[2 * p + 1] = std::numbers::sqrt2 * c;
      v[2 * p + 2] = std::numbers::sqrt2 * s;
    }
  }
}

void ElectronGasOrbitals::evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const {
  const Eigen::Index n = size();
  out.value.resize(n, positions.cols());
  out.gradient.resize(3 * n, positions.cols());
  out.laplacian.resize(n, positions.cols());
  PlaneWaveTable table(box_length_, n_max_);
  const std::size_t pairs = pair_powers_.size();
  for (Eigen::Index m = 0; m < positions.cols(); ++m) {
    table.at(positions.col(m).data());
    double* v = out.value.col(m).data();
    double* g = out.gradient.col(m).data();
    double* lap = out.laplacian.col(m).data();
    v[0] = 1.0;
    g[0] = g[1] = g[2] = 0.0;
    lap[0] = 0.0;
    for (std::size_t p = 0; p < pairs; ++p) {
      double c, s;
      table.wave(pair_powers_[p], c, s);
      const double vc = std::numbers::sqrt2 * c, vs = std::numbers::sqrt2 * s;
      const auto& k = pair_k_[p];
      const std::size_t i = 2 * p + 1;
      v[i] = vc;
      v[i + 1] = vs;
      for (std::size_t d = 0; d < 3; ++d) {
        g[3 * i + d] = -k[d] * vs;       // grad sqrt2 cos(k.r) = -k sqrt2 sin(k.r)
        g[3 * (i + 1) + d] = k[d] * vc;  // grad sqrt2 sin(k.r) =  k sqrt2 cos(k.r)
      }
      lap[i] = -k[3] * vc;
      lap[i + 1] = -k[3] * vs;
    }
  }
}

BsplineBox gas_bspline_box(Eigen::Index n_per_spin, double box_length, double points_per_wavelength,
                           Eigen::Index grid) {
  check_box_length(box_length);
  if (!(points_per_wavelength > 0.0) || !std::isfinite(points_per_wavelength))
    throw std::invalid_argument("gas_bspline_box: points_per_wavelength must be a finite positive number");
  if (grid < 0) throw std::invalid_argument("gas_bspline_box: grid must be >= 0 (0 = from points_per_wavelength)");
  int n_max = 0;
  for (const auto& n : gas_wave_numbers(n_per_spin))
    for (int d = 0; d < 3; ++d) n_max = std::max(n_max, std::abs(n[d]));
  // n_max wavelengths of L / n_max fit in the period L.
  const auto from_rule = static_cast<Eigen::Index>(std::ceil(points_per_wavelength * n_max));
  return BsplineBox{0.5 * box_length, grid > 0 ? grid : std::max<Eigen::Index>(4, from_rule)};
}

}  // namespace slaterlab
