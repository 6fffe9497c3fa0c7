// The workloads and the generation limits (contract in case_limits.hpp).

#include "verify/properties/case_limits.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "verify/inputs/suggest.hpp"

namespace slaterlab {
namespace {

/// log(eps_s) / log(eps_d): the fraction of double's digits a storage
/// precision has (0.46 for float).
double digit_fraction(Precision p) {
  return std::log(storage_epsilon(p)) / std::log(std::numeric_limits<double>::epsilon());
}

}  // namespace

std::string_view to_string(CaseMode m) {
  switch (m) {
    case CaseMode::randsvd: return "randsvd";
    case CaseMode::adversarial: return "adversarial";
    case CaseMode::cycles: return "cycles";
  }
  return "?";
}

std::vector<std::string> case_mode_names() { return {"randsvd", "adversarial", "cycles"}; }

CaseMode parse_case_mode(std::string_view name) {
  if (name == "randsvd") return CaseMode::randsvd;
  if (name == "adversarial") return CaseMode::adversarial;
  if (name == "cycles") return CaseMode::cycles;
  throw std::invalid_argument("unknown workload '" + std::string(name) + "'" +
                              suggestion_suffix(name, case_mode_names()));
}

bool applies(Property p, CaseMode mode) {
  return (p == Property::cycle_ratio_matches_oracle) == (mode == CaseMode::cycles);
}

CaseLimits cycle_limits(Precision p) {
  CaseLimits lim;
  lim.mode = CaseMode::cycles;
  lim.n_max = 12;
  lim.length_per_n = 1;
  // 6 of double's digits: well inside the model at N <= 12 with the
  // carried updates, the same fraction of the digits for float storage.
  lim.max_log10_kappa = 6.0 * digit_fraction(p);
  return lim;
}

CaseLimits property_limits(Precision p) {
  CaseLimits lim;
  // The same fraction of the precision's digits: 8 log(eps_s) / log(eps_d).
  lim.max_log10_kappa = 8.0 * digit_fraction(p);
  return lim;
}

CaseLimits breakdown_limits() {
  CaseLimits lim;
  lim.n_max = 8;
  lim.length_per_n = 1;
  lim.max_log10_kappa = 1;
  return lim;
}

CaseLimits fuzz_limits(Precision p, CaseMode mode, int max_n) {
  CaseLimits lim;
  lim.mode = mode;
  lim.n_max = max_n;
  lim.length_per_n = 4;
  // kappa up to 1e12 and eta down to 1e-10 in double: 4 and 6 digits short
  // of singular to working precision (eps_d = 2.2e-16); the same fractions of
  // the digits for float storage (kappa <= 3e5, eta >= 2.5e-5).
  lim.max_log10_kappa = 12.0 * digit_fraction(p);
  lim.max_log10_inv_eta = 10.0 * digit_fraction(p);
  // Cycles: 1 to N of them (each up to 4 updates, an oracle LU per
  // matrix), kappa up to 1e8 in double: every cycle's updates are carried
  // (m up to 4N), and the model's (g + m) N eps kappa must stay below 1/2
  // for a comparison to be made.
  if (mode == CaseMode::cycles) {
    lim.length_per_n = 1;
    lim.max_log10_kappa = 8.0 * digit_fraction(p);
  }
  return lim;
}

}  // namespace slaterlab
