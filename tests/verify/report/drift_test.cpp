// Drift over repeats: grouping by configuration, mean and standard error
// over repeats, least-squares drift and the recompute interval's cases, on
// synthetic checkpoint series whose answers are known in closed form.

#include "verify/report/drift.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "verify/report/table.hpp"

namespace slaterlab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Checkpoints every 100 moves, half of them accepted, log|det| error
/// e0 + slope * accepted and median ratio error ratio0 + ratio_slope * accepted
/// (NaN at move 0, as a run writes no window there).
StrategyResult linear_run(const std::string& label, const std::string& precision, double e0,
                          double slope, double ratio0, double ratio_slope, int checkpoints = 5) {
  StrategyResult s;
  s.info.label = label;
  s.info.precision = precision;
  double worst = 0, worst_ratio = 0;
  for (int c = 0; c < checkpoints; ++c) {
    StrategyCheckpoint point;
    point.move = 100 * c;
    point.accepted = 50 * c;
    point.log_det_error = e0 + slope * double(point.accepted);
    point.ratio_error_median = c == 0 ? kNaN : ratio0 + ratio_slope * double(point.accepted);
    point.ratio_error_max = c == 0 ? 0.0 : 10 * point.ratio_error_median;
    worst = std::fmax(worst, point.log_det_error);
    worst_ratio = std::fmax(worst_ratio, point.ratio_error_max);
    s.checkpoints.push_back(point);
  }
  StrategySummary summary;
  summary.worst_log_det_error = worst;
  summary.max_ratio_error = worst_ratio;
  s.summary = summary;
  return s;
}

ExperimentResult experiment(const std::string& name, std::uint64_t seed,
                            std::vector<StrategyResult> strategies, std::int64_t n = 64) {
  ExperimentResult e;
  e.info.name = name;
  e.info.workload = "gaussian";
  e.info.n = n;
  e.info.moves = 400;
  e.info.checkpoint_every = 100;
  e.info.seed = seed;
  e.info.parameters = {{"n", std::to_string(n)}, {"seed", std::to_string(seed)}};
  e.strategies = std::move(strategies);
  return e;
}

TEST(Drift, RepeatsDifferingOnlyInSeedFormOneConfiguration) {
  ResultsFile results;
  results.experiments = {
      experiment("gaussian-n64-r1", 1, {linear_run("sm-double", "double", 1e-14, 1e-15, 0, 0)}),
      experiment("gaussian-n64-r2", 2, {linear_run("sm-double", "double", 3e-14, 3e-15, 0, 0)}),
      experiment("gaussian-n128", 3, {linear_run("sm-double", "double", 1e-14, 1e-15, 0, 0)}, 128)};
  const auto rows = drift_rows(results, default_drift_targets());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].configuration, "gaussian-n64");
  EXPECT_EQ(rows[0].repeats, 2);
  EXPECT_EQ(rows[1].configuration, "gaussian-n128");
  EXPECT_EQ(rows[1].repeats, 1);
  // Slopes 1e-15 and 3e-15: mean 2e-15, standard error |a - b| / 2 = 1e-15.
  // Exact lines, so the fit is exact up to a few roundings (1e-12 relative
  // covers 5 points' sums at u = 1.1e-16 with room).
  EXPECT_NEAR(rows[0].log_det_drift.mean, 2e-15, 1e-12 * 2e-15);
  EXPECT_NEAR(rows[0].log_det_drift.error, 1e-15, 1e-12 * 1e-15);
  EXPECT_TRUE(std::isnan(rows[1].log_det_drift.error));  // one repeat: no error bar
  // Worst log|det| errors 1e-14 + 200e-15 = 2.1e-13 and 6.3e-13.
  EXPECT_NEAR(rows[0].worst_log_det_error.mean, 4.2e-13, 1e-12 * 4.2e-13);
}

TEST(Drift, IntervalMeasuredWhereTheEnvelopeCrossesTheTarget) {
  // Envelope at accepted 0, 50, 100, 150, 200: the larger repeat's
  // 2e-11 + 1e-12 m, 7e-11 at m = 50 and 1.2e-10 at 100; the line between
  // them meets 1e-10 at m = 80.
  ResultsFile results;
  results.experiments = {
      experiment("e-r1", 1, {linear_run("sm-double", "double", 1e-11, 1e-13, 0, 0)}),
      experiment("e-r2", 2, {linear_run("sm-double", "double", 2e-11, 1e-12, 0, 0)})};
  const auto row = drift_rows(results, default_drift_targets()).front();
  EXPECT_EQ(row.target, 1e-10);
  EXPECT_EQ(row.log_det_interval.kind, RecomputeInterval::Kind::measured);
  EXPECT_NEAR(row.log_det_interval.accepted, 80.0, 1e-9);
}

TEST(Drift, IntervalExtrapolatedLinearlyBeyondTheRun) {
  // 1e-12 + 1e-13 m stays below 1e-10 over the run (m <= 200) and reaches it
  // at m = (1e-10 - 1e-12) / 1e-13 = 990.
  ResultsFile results;
  results.experiments = {
      experiment("e", 1, {linear_run("sm-double", "double", 1e-12, 1e-13, 0, 0)})};
  const auto row = drift_rows(results, default_drift_targets()).front();
  EXPECT_EQ(row.log_det_interval.kind, RecomputeInterval::Kind::extrapolated);
  EXPECT_NEAR(row.log_det_interval.accepted, 990.0, 1e-9);
}

TEST(Drift, NoIntervalWhenTheFirstWindowIsAboveTheTarget) {
  // Median ratio error 2e-4 + 1e-7 m in float: the first window (m = 50) is
  // already above 1e-4 (the move-0 checkpoint has no window: NaN).
  ResultsFile results;
  results.experiments = {
      experiment("e", 1, {linear_run("sm-float", "float", 1e-6, 0, 2e-4, 1e-7)})};
  const auto row = drift_rows(results, default_drift_targets()).front();
  EXPECT_EQ(row.target, 1e-4);
  EXPECT_EQ(row.ratio_interval.kind, RecomputeInterval::Kind::none);
  EXPECT_NEAR(row.ratio_drift.mean, 1e-7, 1e-12 * 1e-7);
  // A constant log|det| error within the target: no drift, interval > run.
  EXPECT_EQ(row.log_det_interval.kind, RecomputeInterval::Kind::no_drift);
  EXPECT_EQ(row.log_det_interval.accepted, 200.0);
}

TEST(Drift, TargetsComeFromThePrecisionAndCanBeChanged) {
  ResultsFile results;
  results.experiments = {
      experiment("e", 1, {linear_run("k", "double", 1e-12, 1e-13, 0, 0),
                          linear_run("q", "quad", 1e-12, 1e-13, 0, 0)})};
  auto targets = default_drift_targets();
  // 1e-12 + 1e-13 m reaches 5e-11 at m = 490 (990 for the default 1e-10).
  targets["double"] = 5e-11;
  const auto rows = drift_rows(results, targets);
  EXPECT_EQ(rows[0].log_det_interval.kind, RecomputeInterval::Kind::extrapolated);
  EXPECT_NEAR(rows[0].log_det_interval.accepted, 490.0, 1e-9);
  EXPECT_TRUE(std::isnan(rows[1].target));  // a precision without a target
  EXPECT_EQ(rows[1].log_det_interval.kind, RecomputeInterval::Kind::no_target);
}

TEST(Drift, FailedAndIncompleteStrategiesAreLeftOut) {
  auto failed = linear_run("sm-double", "double", 1e-12, 1e-13, 0, 0);
  failed.summary->failed = true;
  auto incomplete = linear_run("sm-double", "double", 1e-12, 1e-13, 0, 0);
  incomplete.summary.reset();
  ResultsFile results;
  results.experiments = {
      experiment("e-r1", 1, {linear_run("sm-double", "double", 1e-12, 1e-13, 0, 0)}),
      experiment("e-r2", 2, {failed}), experiment("e-r3", 3, {incomplete})};
  const auto rows = drift_rows(results, default_drift_targets());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].repeats, 1);
}

TEST(Drift, TableShowsMeanAndErrorAtTheMeansDecade) {
  ResultsFile results;
  results.experiments = {
      experiment("g-r1", 1, {linear_run("sm-double", "double", 1e-14, 1e-15, 0, 0)}),
      experiment("g-r2", 2, {linear_run("sm-double", "double", 3e-14, 3e-15, 0, 0)})};
  const std::string table = format_table(results, TableFormat::csv, TableKind::drift);
  // Drift 2e-15 with standard error 1e-15: "2.0(1.0)e-15".
  EXPECT_NE(table.find("2.0(1.0)e-15"), std::string::npos) << table;
  EXPECT_NE(table.find("g,sm-double,64,2,"), std::string::npos) << table;
}

}  // namespace
}  // namespace slaterlab
