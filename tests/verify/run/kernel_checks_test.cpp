// The default checks of an external kernel (verify/run/kernel_checks.hpp):
// each metric passes at half its first-order model and fails at twice it,
// the models computed here from their definition (c = 10, B = c (1 + m) N u);
// a metric that came back NaN or infinite fails whatever its value.
#include "verify/run/kernel_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace slaterlab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

KernelModelInputs inputs() {
  KernelModelInputs in;
  in.n = 12;
  in.epsilon = std::numeric_limits<double>::epsilon() / 2;
  in.kappa = 100;
  in.carried = 20;
  in.accepted = 20;
  return in;
}

double b_kappa(const KernelModelInputs& in) {
  return 10 * double(1 + in.carried) * in.n * in.epsilon * in.kappa;
}

/// A summary of a kernel at `scale` times each model (ratio errors measured,
/// no cycles).
StrategySummary at(double scale, const KernelModelInputs& in) {
  StrategySummary s;
  s.max_ratio_error_normalised = scale * 10 * double(1 + in.carried);
  s.max_ratio_error = 1e-14;
  s.max_inverse_divergence = scale * b_kappa(in);
  s.max_inverse_residual = scale * b_kappa(in) * in.kappa;
  s.worst_log_det_error = scale * (b_kappa(in) + double(in.accepted) * s.max_ratio_error);
  return s;
}

bool names(const std::vector<std::string>& failures, const std::string& what) {
  for (const auto& f : failures)
    if (f.rfind(what, 0) == 0) return true;
  return false;
}

TEST(KernelChecks, EachMetricPassesInsideItsModelAndFailsBeyondIt) {
  const KernelModelInputs in = inputs();
  EXPECT_TRUE(kernel_model_failures(at(0.5, in), in).empty());
  const auto failures = kernel_model_failures(at(2, in), in);
  EXPECT_EQ(failures.size(), 4u);
  for (const char* what : {"ratio error", "inverse residual", "inverse divergence", "log-det error"})
    EXPECT_TRUE(names(failures, what)) << what;
}

TEST(KernelChecks, ACycleRatioIsJudgedAgainstItsLengthTimesTheModel) {
  KernelModelInputs in = inputs();
  in.longest_cycle = 4;
  StrategySummary s = at(0.5, in);
  s.cycles = 5;
  s.max_cycle_ratio_error = 0.5 * 4 * b_kappa(in);
  EXPECT_TRUE(kernel_model_failures(s, in).empty());
  s.max_cycle_ratio_error = 2 * 4 * b_kappa(in);
  EXPECT_TRUE(names(kernel_model_failures(s, in), "cycle ratio error"));
}

TEST(KernelChecks, ANonFiniteMetricFailsWhateverTheSummaryShows) {
  KernelModelInputs in = inputs();
  StrategySummary s = at(0.5, in);
  s.max_inverse_divergence = kNaN;  // what a summary's fmax makes of NaN checkpoints
  in.nonfinite_inverse = 3;
  in.nonfinite_log_det = 1;
  const auto failures = kernel_model_failures(s, in);
  EXPECT_TRUE(names(failures, "inverse residual or divergence not finite at 3"));
  EXPECT_TRUE(names(failures, "log|det| not finite at 1"));
}

TEST(KernelChecks, WithoutARegularCheckpointOnlyTheRatiosAreJudged) {
  KernelModelInputs in = inputs();
  in.kappa = 0;
  const auto failures = kernel_model_failures(at(2, in), in);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_TRUE(names(failures, "ratio error"));
}

}  // namespace
}  // namespace slaterlab
