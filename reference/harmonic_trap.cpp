#include "slaterlab/reference/harmonic_trap.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

// The derivation of the exact results (the contract is in the header).
//
// Shells. The oscillator states (nx, ny, nz) of shell n = nx + ny + nz have
// energy alpha (n + 3/2); shell n holds (n+1)(n+2)/2 states. The lowest N
// states fill the shells in order, so the shell of state i (0-based) follows
// by counting. Closed shells: N = (K+1)(K+2)(K+3)/6 = 1, 4, 10, 20, 35, ...
//
// Local energy in closed form. Every orbital obeys
//   -1/2 lap phi_i = (alpha (n_i + 3/2) - alpha^2 r^2 / 2) phi_i,
// and the determinant is linear in each column, so
//   sum_j lap_j Psi / Psi = sum_j sum_i Ainv(j, i) lap phi_i(r_j)
//                         = sum_i 2 alpha (n_i + 3/2) - alpha^2 R2,
// with R2 = sum_j |r_j|^2 (the alpha^2 r_j^2 terms sum with (Ainv A)(j,j) = 1,
// the eigenvalue terms with (A Ainv)(i,i) = 1). Hence, with S = sum_i (n_i + 3/2),
//   E_L(R) = alpha S + (w^2 - alpha^2) R2 / 2             (exact_local_energy)
// is a function of R2 alone; for alpha = w it is the constant w S.
//
// Moments of R2 under |Psi|^2 (a one-body operator in a Slater determinant
// of orthonormal orbitals). With x = (a + a^+) / sqrt(2 alpha) per axis,
//   r^2 = sum_d (2 n_d + 1) / (2 alpha) + (a_d^2 + a_d^+2) / (2 alpha):
//   <R2>     = sum_i <i|r^2|i> = S / alpha,
//   Var(R2)  = sum_{i occupied} sum_{p empty} |<p|r^2|i>|^2
// (the occupied-occupied part cancels against the exchange term), where r^2
// links i only to the states two quanta up or down along one axis:
//   |<n_d + 2|r^2|n_d>|^2 = (n_d + 1)(n_d + 2) / (4 alpha^2),
//   |<n_d - 2|r^2|n_d>|^2 = n_d (n_d - 1) / (4 alpha^2).
// For a closed shell only the upward links of the top two shells leave the
// occupied set. Then
//   E(alpha)     = <E_L> = (alpha/2 + w^2/(2 alpha)) S,
//   Var(E_L)     = ((w^2 - alpha^2) / 2)^2 Var(R2),
// minimal (E = w S) and zero-variance at alpha = w. Check, N = 1: <r^2> =
// 3 / (2 alpha), Var(r^2) = 3 / (2 alpha^2), the moments of a Gaussian of
// variance 1/(2 alpha) per axis.
//
// Open shells. The energy, <R2> and E_L depend only on the shells, so they
// hold for any N. The variance depends on which degenerate states of the
// last shell are occupied; the closed-shell overload rejects open N and the
// explicit-occupation overload takes the states.

namespace slaterlab::reference {
namespace {

void check_n(Eigen::Index n) {
  if (n < 1) throw std::invalid_argument("number of particles must be >= 1, got " + std::to_string(n));
}

void check_frequency(const char* name, double value) {
  if (!(std::isfinite(value) && value > 0.0))
    throw std::invalid_argument(std::string(name) + " must be finite and > 0, got " +
                                std::to_string(value));
}

/// Shell of the highest of the lowest n states (n >= 1): shells below it are
/// full, it may be partial.
int last_shell(Eigen::Index n) { return trap_shell_of(n - 1); }

}  // namespace

Eigen::Index trap_closed_shell_size(int k) {
  if (k < 0) throw std::invalid_argument("shell index must be >= 0, got " + std::to_string(k));
  const Eigen::Index m = k;
  return (m + 1) * (m + 2) * (m + 3) / 6;
}

bool is_closed_shell(Eigen::Index n) {
  if (n < 1) return false;
  return trap_closed_shell_size(last_shell(n)) == n;
}

int trap_shell_of(Eigen::Index i) {
  if (i < 0) throw std::invalid_argument("state index must be >= 0, got " + std::to_string(i));
  // Shell k holds states [size(k-1), size(k)); count shells until i falls in one.
  int k = 0;
  while (trap_closed_shell_size(k) <= i) ++k;
  return k;
}

double trap_energy_sum(Eigen::Index n) {
  check_n(n);
  // Whole shells below the last one, then the states of the last one.
  const int top = last_shell(n);
  double sum = 0.0;
  Eigen::Index counted = 0;
  for (int k = 0; k < top; ++k) {
    const Eigen::Index in_shell = static_cast<Eigen::Index>(k + 1) * (k + 2) / 2;
    sum += static_cast<double>(in_shell) * (k + 1.5);
    counted += in_shell;
  }
  sum += static_cast<double>(n - counted) * (top + 1.5);
  return sum;
}

double exact_energy(Eigen::Index n, double alpha, double omega) {
  check_frequency("alpha", alpha);
  check_frequency("omega", omega);
  return (0.5 * alpha + 0.5 * omega * omega / alpha) * trap_energy_sum(n);
}

double exact_local_energy(Eigen::Index n, double alpha, double omega, double sum_r2) {
  check_frequency("alpha", alpha);
  check_frequency("omega", omega);
  return alpha * trap_energy_sum(n) + 0.5 * (omega * omega - alpha * alpha) * sum_r2;
}

double exact_r2_mean(Eigen::Index n, double alpha) {
  check_frequency("alpha", alpha);
  return trap_energy_sum(n) / alpha;
}

double exact_r2_variance(const std::vector<OscillatorState>& occupied, double alpha) {
  check_frequency("alpha", alpha);
  if (occupied.empty()) throw std::invalid_argument("occupied state list is empty");
  const std::set<OscillatorState> occ(occupied.begin(), occupied.end());
  if (occ.size() != occupied.size()) throw std::invalid_argument("occupied states repeat");
  for (const auto& s : occupied)
    if (s[0] < 0 || s[1] < 0 || s[2] < 0)
      throw std::invalid_argument("quantum numbers must be >= 0");

  // Sum over occupied i and empty p of |<p|r^2|i>|^2, in units of 1/(4 alpha^2).
  double sum = 0.0;
  for (const auto& s : occupied) {
    for (int d = 0; d < 3; ++d) {
      const double nd = s[d];
      OscillatorState up = s;
      up[d] += 2;
      if (!occ.count(up)) sum += (nd + 1.0) * (nd + 2.0);
      if (s[d] >= 2) {
        OscillatorState down = s;
        down[d] -= 2;
        if (!occ.count(down)) sum += nd * (nd - 1.0);
      }
    }
  }
  return sum / (4.0 * alpha * alpha);
}

double exact_r2_variance(Eigen::Index n, double alpha) {
  check_n(n);
  if (!is_closed_shell(n))
    throw std::invalid_argument("Var(R2) of an open shell (N = " + std::to_string(n) +
                                ") depends on the occupied degenerate states; pass them");
  std::vector<OscillatorState> states;
  const int top = last_shell(n);
  for (int k = 0; k <= top; ++k)
    for (int nx = 0; nx <= k; ++nx)
      for (int ny = 0; nx + ny <= k; ++ny) states.push_back({nx, ny, k - nx - ny});
  return exact_r2_variance(states, alpha);
}

double exact_local_energy_variance(Eigen::Index n, double alpha, double omega) {
  check_frequency("omega", omega);
  const double c = 0.5 * (omega * omega - alpha * alpha);
  return c * c * exact_r2_variance(n, alpha);
}

}  // namespace slaterlab::reference
