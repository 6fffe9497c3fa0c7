#include "verify/run/kernel_checks.hpp"

#include <fmt/format.h>

#include <cmath>

namespace slaterlab {

// The models are the first-order bounds of a backward-stable update (the
// constant c = 10 of the strategy properties' model, strategy_properties.cpp,
// and of the kernel tests). A kernel carrying m updates since its last
// refactorisation holds an inverse with relative error at most
//   B kappa,  B = c (1 + m) N u,
// u the unit roundoff and kappa the condition number of the exact matrix
// (its 1-norm one, measured by the reference at each checkpoint). From it:
// - a ratio rho = e_k^T A^{-1} a'_k has relative error at most
//   c (1 + m) N u kappa_rho, kappa_rho its own conditioning: the normalised
//   ratio error (units of N u kappa_rho) is at most c (1 + m);
// - the divergence ||X - A^{-1}||_F / ||A^{-1}||_F is at most B kappa
//   (up to the norms' factor sqrt(N), inside c);
// - the residual A X - I = A (X - A^{-1}) is then at most ||A|| ||A^{-1}||
//   B kappa = B kappa^2: an inverse kept by updates is accurate forward,
//   not backward (Sherman-Morrison's residual grows with kappa^2, as sm's
//   own shows on ill-conditioned walks), so its residual is judged against
//   that, and a wrong inverse mostly by its divergence;
// - log|det| is a refactorisation's (error B kappa at most) plus one
//   log|rho| per accepted update, each off by its relative ratio error:
//   at most B kappa + (accepted updates) x (largest measured ratio error),
//   or, per cycle, x (largest cycle ratio error); with no ratio measured,
//   B kappa per update;
// - a cycle of L updates multiplies L ratios (or takes the determinant of
//   an L x L matrix): relative error at most L B kappa.
// The rounding of the log|det| sum itself (u |log det| per term) is below
// B kappa for |log det| < c N, any matrix whose entries are O(1).
namespace {
constexpr double kC = 10;

bool beyond(double value, double limit) { return std::isfinite(limit) && value > limit; }
}  // namespace

std::vector<std::string> kernel_model_failures(const StrategySummary& s,
                                               const KernelModelInputs& in) {
  std::vector<std::string> out;
  if (in.nonfinite_log_det > 0) {
    out.push_back(fmt::format("log|det| not finite at {} checkpoint(s)", in.nonfinite_log_det));
  }
  if (in.nonfinite_inverse > 0) {
    out.push_back(fmt::format("inverse residual or divergence not finite at {} checkpoint(s) (a "
                              "NaN or infinite entry in the kernel's inverse)",
                              in.nonfinite_inverse));
  }
  const double ratio_limit = kC * double(1 + in.carried);
  if (beyond(s.max_ratio_error_normalised, ratio_limit)) {
    out.push_back(fmt::format("ratio error {:.3g} N eps kappa_rho exceeds the kernel error model "
                              "c (1 + m) = {:.3g} (m = {} updates carried)",
                              s.max_ratio_error_normalised, ratio_limit, in.carried));
  }
  if (!(in.kappa > 0)) return out;  // no regular checkpoint: nothing else was measured
  const double inverse_limit = kC * double(1 + in.carried) * in.n * in.epsilon * in.kappa;
  const auto model = [&](const char* what, double value, double limit, const char* form) {
    if (beyond(value, limit)) {
      out.push_back(fmt::format("{} {:.3g} exceeds the kernel error model {} = {:.3g} (c = {}, "
                                "m = {} updates carried, kappa = {:.3g})",
                                what, value, form, limit, kC, in.carried, in.kappa));
    }
  };
  model("inverse residual", s.max_inverse_residual, inverse_limit * in.kappa,
        "c (1 + m) N eps kappa^2");
  model("inverse divergence", s.max_inverse_divergence, inverse_limit, "c (1 + m) N eps kappa");
  const double per_update = std::isfinite(s.max_ratio_error) ? s.max_ratio_error : inverse_limit;
  const double drift = std::isfinite(s.max_ratio_error) || !std::isfinite(s.max_cycle_ratio_error)
                           ? double(in.accepted) * per_update
                           : double(s.cycles) * s.max_cycle_ratio_error;
  model("log-det error", s.worst_log_det_error, inverse_limit + drift,
        "c (1 + m) N eps kappa + the accepted ratios' errors");
  if (in.longest_cycle > 0) {
    model("cycle ratio error", s.max_cycle_ratio_error, double(in.longest_cycle) * inverse_limit,
          "L c (1 + m) N eps kappa (L the longest cycle)");
  }
  return out;
}

}  // namespace slaterlab
