#include "verify/inputs/workload.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "verify/inputs/workload_text.hpp"

// What every workload shares: the spec's field checks, the default
// next_cycle(), and the random orthogonal matrices and singular values the
// randsvd kinds (and the property generators) build on. The kinds live in
// generated_workloads.cpp, walk_workloads.cpp and replay_workload.cpp; the
// registry that names them in workload_registry.cpp.

namespace slaterlab {
namespace {

using namespace workload_detail;

const std::vector<std::string> kModes = {"geometric", "arithmetic", "clustered-small",
                                         "clustered-large"};
const std::vector<std::string> kOrders = {"sweep", "random", "burst"};

void check_kappa(double kappa) {
  if (!(std::isfinite(kappa) && kappa >= 1.0)) {
    bad("kappa must be finite and >= 1, got " + to_text(kappa));
  }
}

void check_mode(const std::string& mode) {
  if (!contains(kModes, mode)) {
    bad("unknown randsvd mode '" + mode + "' (valid: " + join(kModes) + ")");
  }
}

}  // namespace

void validate_workload_fields(const WorkloadSpec& s) {
  if (s.n < 1) bad("n must be >= 1, got " + std::to_string(s.n));
  if (!contains(kOrders, s.electron_order)) {
    bad("unknown electron_order '" + s.electron_order + "' (valid: " + join(kOrders) + ")");
  }
  check_kappa(s.kappa);
  check_mode(s.mode);
  check_positive_finite("delta", s.delta);
  check_positive_finite("eta", s.eta);
  check_positive_finite("alpha", s.alpha);
  check_positive_finite("rs", s.rs);
  if (s.chain < 1) bad("chain must be >= 1, got " + std::to_string(s.chain));
  if (s.hold < 0) bad("hold must be >= 0, got " + std::to_string(s.hold));
  if (s.rank < 1) bad("rank must be >= 1, got " + std::to_string(s.rank));
  if (!(s.shift >= 0.0 && s.shift <= 1.0)) bad("shift must lie in [0, 1], got " + to_text(s.shift));
  if (s.grid < 0) bad("grid must be >= 0, got " + std::to_string(s.grid));
  if (s.scheme != "pbp" && s.scheme != "qs")
    bad("unknown scheme '" + s.scheme + "' (valid: pbp, qs)");
  if (s.spin != "up" && s.spin != "down") bad("unknown spin '" + s.spin + "' (valid: up, down)");
  if (s.excitations && s.scheme == "qs")
    bad("scheme = \"qs\" and cycles = true both make update cycles: choose one");
}

std::vector<std::string> known_randsvd_modes() { return kModes; }

std::vector<Move> Workload::next_cycle(const Eigen::MatrixXd&) {
  throw std::logic_error("workload: " + name() + " makes single moves, not cycles");
}

Eigen::VectorXd randsvd_singular_values(Eigen::Index n, double kappa, const std::string& mode) {
  if (n < 1) bad("n must be >= 1, got " + std::to_string(n));
  check_kappa(kappa);
  check_mode(mode);
  Eigen::VectorXd sigma = Eigen::VectorXd::Ones(n);
  if (n == 1) return sigma;
  const double last = 1.0 / kappa;
  const double span = static_cast<double>(n - 1);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double x = static_cast<double>(i) / span;  // (i-1)/(n-1) in 1-based terms
    if (mode == "geometric") {
      sigma(i) = std::pow(kappa, -x);
    } else if (mode == "arithmetic") {
      sigma(i) = 1.0 - x * (1.0 - last);
    } else if (mode == "clustered-small") {
      sigma(i) = i == 0 ? 1.0 : last;
    } else {  // clustered-large
      sigma(i) = i == n - 1 ? last : 1.0;
    }
  }
  sigma(n - 1) = last;  // exactly 1/kappa, so cond = kappa to rounding of the division
  return sigma;
}

}  // namespace slaterlab
