#include "slaterlab/reference/harmonic_trap.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

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
