#include "slaterlab/reference/electron_gas.hpp"

// The Hartree-Fock energy of jellium in a periodic cube (the contract is in
// the header).
//
// Hamiltonian. H = sum_j -lap_j / 2 + E_Ewald(R), with
//   E_Ewald = 1/2 sum_{i != j} phi(r_i - r_j) + N xi / 2,
//   phi(r)  = (1/V) sum_{G != 0} (4 pi / G^2) e^{iG.r}
// the Ewald potential (Fourier series of the periodic Coulomb potential, the
// G = 0 term removed by the neutralising background) and xi = lim_{r->0}
// (phi(r) - 1/r), the interaction of an electron with its own images and
// their background.
//
// Expectation in a determinant of plane waves psi_k = e^{ik.r} / sqrt(V),
// k = (2 pi / L) n, one block per spin. The kinetic part is sum k^2 / 2. The
// pair density is rho(r) rho(r') - sum_sigma |gamma_sigma(r, r')|^2 with
// rho = N / V and gamma_sigma(r, r') = (1/V) sum_{k occ sigma} e^{ik.(r - r')}.
//   Hartree: (N/V)^2 int int phi(r - r') = (N^2 / V) int_cell phi = 0, since
//     phi has no G = 0 component.
//   Exchange: -sum_sigma sum_{k, k'} (1/V^2) int int e^{i(k - k').(r - r')} phi(r - r')
//     = -sum_sigma sum_{k, k'} (1/V) phi_hat(k - k'), with
//     phi_hat(q) = int_cell e^{-iq.s} phi(s) ds = 4 pi / q^2 for a reciprocal
//     vector q != 0 and 0 for q = 0 (k - k' is always a reciprocal vector).
// Half of it (the 1/2 of the pair sum) gives
//   E_x = -(2 pi / V) sum_sigma sum_{k != k' occ sigma} 1 / |k - k'|^2
//       = -(1 / (2 pi L)) sum_sigma sum_{n != n'} 1 / |n - n'|^2,
// and the self term N xi / 2 is a constant. So
//   E = sum_sigma sum_k k^2 / 2 + N xi / 2 + E_x.
// Real orbitals. sqrt(2) cos(k.r) and sqrt(2) sin(k.r) are a unitary
// combination of e^{+ik.r} and e^{-ik.r}, both occupied in a closed shell, so
// the real determinant is the complex one times a constant: same |D|^2, same
// energy. Check, N = 1: E = xi / 2 (no kinetic energy, no exchange pair).
//
// Closed shells, independently of any other enumeration: all n of a cube
// sorted by |n|^2; the first `count` are a closed shell when the next one has
// a larger |n|^2 (the cube's radius covers |n|^2 up to the shell's).
//
// Exchange sum: |n - n'|^2 is an integer q, so the double sum is a histogram
// of q over the pairs (each unordered pair counted twice), then sum count(q)
// / q: exact integer counting and one rounding per q (at most 4 m_max
// values), O(N^2) integer work per spin.
//
// Madelung constant by the self-dual split alpha = sqrt(pi) / L (the real and
// reciprocal Gaussians then coincide: exp(-G^2 / (4 alpha^2)) = exp(-pi |g|^2)
// with G = 2 pi g / L):
//   xi L = sum_{n != 0} [ erfc(sqrt(pi) |n|) / |n| + exp(-pi |n|^2) / (pi |n|^2) ] - 3,
// where -3 = -1 (background, pi / (alpha^2 V) L) - 2 (self, 2 alpha L / sqrt(pi)).
// Both terms are below exp(-pi |n|^2); the cube |n_d| <= 6 leaves out terms
// below exp(-49 pi) ~ 1e-67. Summed in long double from the smallest shells
// outward.

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace slaterlab::reference {
namespace {

using Wave = std::array<int, 3>;

int norm2(const Wave& n) { return n[0] * n[0] + n[1] * n[1] + n[2] * n[2]; }

// The lowest `count` waves (sorted by |n|^2) and whether they close a shell.
struct Shells {
  std::vector<Wave> waves;
  bool closed = false;
};

Shells lowest_waves(Eigen::Index count) {
  if (count < 1) return {};
  // A ball of radius R holds about (4 pi / 3) R^3 points; the cube of side
  // 2R + 1 with R from twice that volume holds the count and the next shell.
  int radius = static_cast<int>(std::ceil(std::cbrt(3.0 * 2.0 * static_cast<double>(count) / (4.0 * std::numbers::pi)))) + 2;
  std::vector<Wave> all;
  for (int a = -radius; a <= radius; ++a)
    for (int b = -radius; b <= radius; ++b)
      for (int c = -radius; c <= radius; ++c) all.push_back({a, b, c});
  std::stable_sort(all.begin(), all.end(), [](const Wave& p, const Wave& q) { return norm2(p) < norm2(q); });
  const auto n = static_cast<std::size_t>(count);
  Shells s;
  // Complete only for |n|^2 <= radius^2: both sides of the boundary must be inside.
  if (norm2(all[n]) > radius * radius) throw std::logic_error("plane_wave_shells: enumeration cube too small");
  s.closed = norm2(all[n]) > norm2(all[n - 1]);
  s.waves.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
  return s;
}

std::vector<Wave> closed_waves(Eigen::Index count) {
  if (count < 1) throw std::invalid_argument("electron gas: N = " + std::to_string(count) + " per spin must be >= 1");
  Shells s = lowest_waves(count);
  if (!s.closed)
    throw std::invalid_argument("electron gas: N = " + std::to_string(count) + " per spin is not a closed shell");
  return std::move(s.waves);
}

void check_positive(const char* name, double value) {
  if (!(value > 0.0) || !std::isfinite(value))
    throw std::invalid_argument(std::string("electron gas: ") + name + " must be finite and > 0, got " +
                                std::to_string(value));
}

}  // namespace

double gas_box_length(Eigen::Index n_total, double rs) {
  if (n_total < 1) throw std::invalid_argument("electron gas: the number of electrons must be >= 1");
  check_positive("rs", rs);
  return std::cbrt(4.0 * std::numbers::pi * static_cast<double>(n_total) / 3.0) * rs;
}

double madelung_constant(double box_length) {
  check_positive("the box length", box_length);
  constexpr int kRange = 6;
  const long double pi = std::numbers::pi_v<long double>;
  const long double root_pi = std::sqrt(pi);
  // Positive terms, gathered per |n|^2 and added smallest first.
  std::vector<long double> by_norm2(3 * kRange * kRange + 1, 0.0L);
  for (int a = -kRange; a <= kRange; ++a)
    for (int b = -kRange; b <= kRange; ++b)
      for (int c = -kRange; c <= kRange; ++c) {
        const int q = a * a + b * b + c * c;
        if (q == 0) continue;
        const long double r = std::sqrt(static_cast<long double>(q));
        by_norm2[static_cast<std::size_t>(q)] +=
            std::erfc(root_pi * r) / r + std::exp(-pi * static_cast<long double>(q)) / (pi * static_cast<long double>(q));
      }
  long double sum = 0.0L;
  for (std::size_t q = by_norm2.size(); q-- > 1;) sum += by_norm2[q];  // small terms first
  return static_cast<double>((sum - 3.0L) / static_cast<long double>(box_length));
}

bool plane_wave_closed_shell(Eigen::Index n) { return n >= 1 && lowest_waves(n).closed; }

std::vector<std::array<int, 3>> plane_wave_shells(Eigen::Index count) { return closed_waves(count); }

long long plane_wave_norm2_sum(Eigen::Index count) {
  long long sum = 0;
  for (const Wave& n : closed_waves(count)) sum += norm2(n);
  return sum;
}

double plane_wave_exchange_sum(Eigen::Index count) {
  const std::vector<Wave> waves = closed_waves(count);
  int q_max = 0;
  for (const Wave& n : waves) q_max = std::max(q_max, norm2(n));
  std::vector<long long> pairs(4 * static_cast<std::size_t>(q_max) + 1, 0);  // |n - n'|^2 <= (2 |n|_max)^2
  for (std::size_t i = 1; i < waves.size(); ++i) {
    const Wave& a = waves[i];
    for (std::size_t j = 0; j < i; ++j) {
      const int dx = a[0] - waves[j][0], dy = a[1] - waves[j][1], dz = a[2] - waves[j][2];
      ++pairs[static_cast<std::size_t>(dx * dx + dy * dy + dz * dz)];
    }
  }
  long double sum = 0.0L;
  for (std::size_t q = pairs.size(); q-- > 1;)  // small terms first
    sum += 2.0L * static_cast<long double>(pairs[q]) / static_cast<long double>(q);
  return static_cast<double>(sum);
}

GasEnergy hartree_fock_energy(Eigen::Index n_up, Eigen::Index n_down, double rs) {
  if (n_down < 0) throw std::invalid_argument("electron gas: N down must be >= 0");
  closed_waves(n_up);  // throws for an open shell
  if (n_down > 0) closed_waves(n_down);
  const Eigen::Index n_total = n_up + n_down;
  const double box_length = gas_box_length(n_total, rs);
  const double unit = 2.0 * std::numbers::pi / box_length;
  GasEnergy e;
  double exchange_sum = 0.0;
  long long norm2_sum = 0;
  for (const Eigen::Index n : {n_up, n_down}) {
    if (n == 0) continue;
    norm2_sum += plane_wave_norm2_sum(n);
    exchange_sum += plane_wave_exchange_sum(n);
  }
  e.kinetic = 0.5 * unit * unit * static_cast<double>(norm2_sum);
  e.exchange = -exchange_sum / (2.0 * std::numbers::pi * box_length);
  e.madelung = 0.5 * static_cast<double>(n_total) * madelung_constant(box_length);
  e.total = e.kinetic + e.exchange + e.madelung;
  return e;
}

}  // namespace slaterlab::reference
