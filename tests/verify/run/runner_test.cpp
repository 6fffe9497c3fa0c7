// Tests of the lockstep runner: shared decisions, determinism, observation
// without side effects, the reference's own accuracy, and bad input.
#include "verify/run/runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

namespace slaterlab {
namespace {

namespace fs = std::filesystem;

class Runner : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("slaterlab_runner_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs `study` into a fresh file and reads it back with its checkpoints.
  ResultsFile run(const StudyConfig& study, RunReport* report = nullptr) {
    const fs::path out = dir_ / ("r" + std::to_string(counter_++) + ".h5");
    ResultWriter writer = ResultWriter::create(out, RunMetadata{"t", "t", "t", "t", "t", "t"});
    const RunReport r = run_study(study, writer, {});
    writer.commit();
    if (report) *report = r;
    return read_results(out);
  }

  fs::path dir_;
  int counter_ = 0;
};

const std::string kStudy = R"(
[reference]
certify = true
[[experiment]]
workload = ["gaussian", "randsvd"]
kappa = 1e4
n = 8
moves = 40
checkpoint_every = 8
[[strategy]]
name = "recompute"
[[strategy]]
name = "sm"
precision = ["float", "double", "mixed"]
)";

TEST_F(Runner, EveryStrategyHasEveryCheckpoint) {
  const ResultsFile f = run(parse_study(kStudy, "t"));
  ASSERT_EQ(f.experiments.size(), 2u);
  for (const auto& e : f.experiments) {
    ASSERT_EQ(e.reference.size(), 6u);  // move 0 and every 8th move up to 40
    ASSERT_EQ(e.strategies.size(), 4u);
    for (const auto& s : e.strategies) {
      ASSERT_TRUE(s.complete()) << s.info.label;
      ASSERT_EQ(s.checkpoints.size(), e.reference.size()) << s.info.label;
      for (std::size_t i = 0; i < s.checkpoints.size(); ++i) {
        EXPECT_EQ(s.checkpoints[i].move, e.reference[i].move);
        EXPECT_EQ(s.checkpoints[i].accepted, e.reference[i].accepted);  // shared decisions
      }
    }
  }
}

// Each event a shipped strategy counts (StrategyTraits::events) becomes a
// column of the results file: docs/results.md's table of named events lists
// it (its other tests hold the file and the document to each other).
TEST(RunnerEvents, EveryShippedEventIsDocumented) {
  std::ifstream in(std::filesystem::path(SLATERLAB_SOURCE_DIR) / "docs" / "results.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int events = 0;
  for (const std::string& name : registered_strategies())
    for (const CounterEvent& event : strategy_traits(name).events) {
      ++events;
      EXPECT_NE(doc.find("| `" + event.name + "` | int64 | count |"), std::string::npos)
          << name << " counts '" << event.name << "'";
    }
  EXPECT_GT(events, 0);
}

TEST_F(Runner, RecomputeDoubleIsAccurateToItsDerivedBound) {
  // LU of the exact matrix is backward stable: |d log|det|| <= c N eps kappa
  // with c = 10 (growth factor and the log-sum's own rounding, both O(1) for
  // these generators), kappa = 1e4 for randsvd and < 1e3 for an 8x8 Gaussian
  // with overwhelming probability; kappa_1 recorded by the reference is used.
  const ResultsFile f = run(parse_study(kStudy, "t"));
  for (const auto& e : f.experiments) {
    const auto& recompute = e.strategies[0];
    ASSERT_EQ(recompute.info.label, "recompute-double");
    for (std::size_t i = 0; i < recompute.checkpoints.size(); ++i) {
      const double bound = 10 * 8 * std::numeric_limits<double>::epsilon() * e.reference[i].condition_1;
      EXPECT_LE(recompute.checkpoints[i].log_det_error, bound) << e.info.name << " checkpoint " << i;
      EXPECT_EQ(recompute.checkpoints[i].sign_agrees, 1);
    }
  }
}

TEST_F(Runner, CertifiedBallContainsTheMpReference) {
  const ResultsFile f = run(parse_study(kStudy, "t"));
  for (const auto& e : f.experiments) {
    ASSERT_TRUE(e.certified_initial && e.certified_final);
    EXPECT_TRUE(e.certified_initial->certified) << e.certified_initial->message;
    EXPECT_TRUE(e.certified_initial->mp_inside);
    EXPECT_TRUE(e.certified_final->mp_inside);
    // Both are the reference's final log|det|, rounded to double the same way.
    EXPECT_DOUBLE_EQ(e.certified_final->mp_log_abs, e.reference.back().log_det);
  }
}

TEST_F(Runner, SameSeedGivesBitIdenticalMetrics) {
  const StudyConfig study = parse_study(kStudy, "t");
  const ResultsFile a = run(study), b = run(study);
  for (std::size_t e = 0; e < a.experiments.size(); ++e) {
    for (std::size_t s = 0; s < a.experiments[e].strategies.size(); ++s) {
      const auto& x = a.experiments[e].strategies[s].checkpoints;
      const auto& y = b.experiments[e].strategies[s].checkpoints;
      ASSERT_EQ(x.size(), y.size());
      // Bit for bit, a NaN (not measured: the initial checkpoint's ratio
      // errors) matching a NaN.
      const auto same = [](double u, double v) { return u == v || (std::isnan(u) && std::isnan(v)); };
      for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_PRED2(same, x[i].log_det_error, y[i].log_det_error);
        EXPECT_PRED2(same, x[i].ratio_error_max, y[i].ratio_error_max);
        EXPECT_PRED2(same, x[i].inverse_divergence, y[i].inverse_divergence);
      }
    }
  }
}

TEST_F(Runner, ObservingEveryMoveDoesNotChangeTheNumerics) {
  // Checkpoints read the maintained state; they must never alter it.
  const ResultsFile every = run(parse_study(kStudy, "t", {"experiment.checkpoint_every=1"}));
  const ResultsFile rarely = run(parse_study(kStudy, "t", {"experiment.checkpoint_every=40"}));
  for (std::size_t e = 0; e < every.experiments.size(); ++e) {
    for (std::size_t s = 0; s < every.experiments[e].strategies.size(); ++s) {
      const auto& x = every.experiments[e].strategies[s].checkpoints.back();
      const auto& y = rarely.experiments[e].strategies[s].checkpoints.back();
      EXPECT_EQ(x.move, y.move);
      EXPECT_EQ(x.log_det_error, y.log_det_error) << every.experiments[e].strategies[s].info.label;
      EXPECT_EQ(x.inverse_divergence, y.inverse_divergence);
    }
  }
}

TEST_F(Runner, ForcedAcceptanceAcceptsEveryMove) {
  const ResultsFile f = run(parse_study(kStudy, "t", {"experiment.acceptance=\"forced\""}));
  for (const auto& e : f.experiments) {
    EXPECT_EQ(e.reference.back().accepted, 40);
    for (const auto& s : e.strategies) EXPECT_EQ(s.summary->flips, 0);  // no decision depends on rho
  }
}

TEST_F(Runner, FloatErrorsAreLargerThanDoubleErrors) {
  const ResultsFile f = run(parse_study(kStudy, "t"));
  for (const auto& e : f.experiments) {
    const auto& single = e.strategies[1].summary;
    const auto& double_ = e.strategies[2].summary;
    ASSERT_EQ(e.strategies[1].info.label, "sm-float");
    EXPECT_GT(single->max_ratio_error, 100 * double_->max_ratio_error) << e.info.name;
  }
}

TEST_F(Runner, SingularInitialMatrixIsAnInputError) {
  const StudyConfig study = parse_study(kStudy, "t", {"experiment.singular=true"});
  const fs::path out = dir_ / "singular.h5";
  ResultWriter writer = ResultWriter::create(out, RunMetadata{});
  EXPECT_THROW(run_study(study, writer, {}), InputError);
}

TEST_F(Runner, ChecksNameTheStrategyAndTheMetric) {
  RunReport report;
  run(parse_study(kStudy, "t",
                  {"checks.max_ratio_error_normalised=1e-30", "checks.precisions=[\"mixed\"]"}),
      &report);
  ASSERT_EQ(report.failures.size(), 2u);  // sm-mixed in both experiments, nothing else
  for (const auto& failure : report.failures) {
    EXPECT_EQ(failure.strategy, "sm-mixed");
    EXPECT_NE(failure.what.find("ratio error"), std::string::npos);
  }
}

/// Delayed's rounding factor at delay k, from its traits (the runner asks them).
double delayed_factor(int k) {
  UpdaterOptions o;
  o.k = k;
  return strategy_traits("delayed", o).rounding.factor_for(o);
}

TEST(CompareDelayedWithSm, HoldsWithinTheGuardFactorAndNamesEachViolation) {
  // F = 16 sqrt(16 + 1) = 65.97 for K = 16.
  // The traits compute kGrowthFactor sqrt(K + 1) as this does: equal to rounding.
  EXPECT_DOUBLE_EQ(delayed_factor(16), 16 * std::sqrt(17.0));
  StrategySummary sm;
  sm.max_ratio_error_normalised = 1e-2;
  sm.worst_log_det_error = 1e-12;
  StrategySummary delayed = sm;
  delayed.max_ratio_error_normalised = 65 * sm.max_ratio_error_normalised;
  delayed.worst_log_det_error = 65 * sm.worst_log_det_error;
  EXPECT_TRUE(compare_delayed_with_sm(delayed, sm, "sm-double", delayed_factor(16), 1e-14).empty());

  delayed.max_ratio_error_normalised = 67 * sm.max_ratio_error_normalised;
  auto failures = compare_delayed_with_sm(delayed, sm, "sm-double", delayed_factor(16), 1e-14);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("ratio error"), std::string::npos);
  EXPECT_NE(failures[0].find("sm-double"), std::string::npos);

  delayed.worst_log_det_error = 67 * sm.worst_log_det_error;
  EXPECT_EQ(compare_delayed_with_sm(delayed, sm, "sm-double", delayed_factor(16), 1e-14).size(), 2u);
  // A smaller K has a smaller factor: F = 16 sqrt(2) = 22.6 for K = 1.
  delayed = sm;
  delayed.max_ratio_error_normalised = 30 * sm.max_ratio_error_normalised;
  EXPECT_EQ(compare_delayed_with_sm(delayed, sm, "sm-double", delayed_factor(1), 1e-14).size(), 1u);
}

TEST(CompareDelayedWithSm, LogDetIsJudgedAgainstNEpsWhenSmIsBelowIt) {
  StrategySummary sm;  // sm's log-det error exactly 0: luck, not a scale
  StrategySummary delayed;
  delayed.worst_log_det_error = 60 * 1e-14;
  EXPECT_TRUE(compare_delayed_with_sm(delayed, sm, "sm-double", delayed_factor(16), 1e-14).empty());
  delayed.worst_log_det_error = 70 * 1e-14;
  EXPECT_EQ(compare_delayed_with_sm(delayed, sm, "sm-double", delayed_factor(16), 1e-14).size(), 1u);
}

TEST_F(Runner, DelayedAgainstSmHoldsOnARunAndNeedsAnSmStrategy) {
  RunReport report;
  run(parse_study(R"(
[checks]
delayed_within_guard_of_sm = true
[[experiment]]
workload = "randsvd"
kappa = 1e8
n = 24
sweeps = 3
[[strategy]]
name = "sm"
[[strategy]]
name = "delayed"
k = 4
)", "t"),
      &report);
  EXPECT_TRUE(report.failures.empty()) << report.failures.front().what;

  RunReport without_sm;
  run(parse_study(R"(
[checks]
delayed_within_guard_of_sm = true
[[experiment]]
n = 8
moves = 16
[[strategy]]
name = "delayed"
k = 4
)", "t"),
      &without_sm);
  ASSERT_EQ(without_sm.failures.size(), 1u);
  EXPECT_NE(without_sm.failures[0].what.find("no sm strategy"), std::string::npos);
}

TEST_F(Runner, MetricsThatDoNotApplyAreNaNNotZero) {
  const ResultsFile f = run(parse_study(R"(
[[experiment]]
n = 6
moves = 12
[[strategy]]
name = "qr-givens"
[[strategy]]
name = "sm"
)", "t"));
  const auto& qr = f.experiments[0].strategies[0];
  const auto& sm = f.experiments[0].strategies[1];
  ASSERT_EQ(qr.info.name, "qr-givens");
  EXPECT_TRUE(std::isnan(qr.summary->max_inverse_residual));
  EXPECT_TRUE(std::isnan(qr.summary->final_inverse_divergence));
  EXPECT_GT(qr.summary->max_qr_residual, 0.0);
  EXPECT_TRUE(std::isnan(sm.summary->max_qr_residual));  // and the other way round
  EXPECT_GT(sm.summary->max_inverse_residual, 0.0);
}

TEST_F(Runner, CheckpointOnlyReferencesGiveTheSameCheckpointMetrics) {
  // [reference] per_move = false skips the mp work between checkpoints and
  // takes a fresh mp LU at each. The moves and decisions (forced) are the
  // same, so every strategy runs bit for bit as with per-move references;
  // the two mp references agree far below double (16 N^2 u_mp kappa_1 ~
  // 1e-43 here) and reach the file through the same long double log|det|,
  // so the log-det errors may differ only by the rounding of that long
  // double (eps_ld |log|det||, doubled for the two runs) and of the error to
  // double (eps |error|). Ratio metrics are not measured: NaN, not 0.
  const std::vector<std::string> forced{"experiment.acceptance=\"forced\"",
                                        "experiment.acceptance_rate=0.7"};
  std::vector<std::string> checkpoint_only = forced;
  checkpoint_only.push_back("reference.per_move=false");
  const ResultsFile every = run(parse_study(kStudy, "t", forced));
  const ResultsFile sparse = run(parse_study(kStudy, "t", checkpoint_only));
  const double eps_ld = std::numeric_limits<long double>::epsilon();
  const double eps = std::numeric_limits<double>::epsilon();
  ASSERT_EQ(every.experiments.size(), sparse.experiments.size());
  for (std::size_t e = 0; e < every.experiments.size(); ++e) {
    const auto& x = every.experiments[e];
    const auto& y = sparse.experiments[e];
    ASSERT_EQ(x.reference.size(), y.reference.size());
    for (std::size_t i = 0; i < x.reference.size(); ++i) {
      EXPECT_EQ(x.reference[i].accepted, y.reference[i].accepted);
      EXPECT_TRUE(std::isnan(y.reference[i].ratio_condition_max));
    }
    EXPECT_GT(x.reference.back().accepted, 0);
    EXPECT_LT(x.reference.back().accepted, x.reference.back().move);  // some rejected too
    for (std::size_t s = 0; s < x.strategies.size(); ++s) {
      for (std::size_t i = 0; i < x.strategies[s].checkpoints.size(); ++i) {
        const auto& cx = x.strategies[s].checkpoints[i];
        const auto& cy = y.strategies[s].checkpoints[i];
        const double tol = 2 * eps_ld * (1 + std::abs(x.reference[i].log_det)) +
                           2 * eps * cx.log_det_error;
        EXPECT_NEAR(cx.log_det_error, cy.log_det_error, tol) << x.strategies[s].info.label;
        // Each reference inverse is rounded to double entry by entry: they may
        // differ by one rounding (eps relative), which moves the divergence by
        // up to eps absolute.
        EXPECT_NEAR(cx.inverse_divergence, cy.inverse_divergence, 2 * eps + 4 * eps * cx.inverse_divergence);
        if (i > 0) {
          EXPECT_FALSE(std::isnan(cx.ratio_error_max));
        }
        EXPECT_TRUE(std::isnan(cy.ratio_error_max));
      }
      EXPECT_TRUE(std::isnan(y.strategies[s].summary->max_ratio_error));
    }
  }
}

TEST_F(Runner, TheFastReferenceMeasuresWhatMpMeasures) {
  // Forced decisions: both runs make the same moves, so every strategy runs
  // bit for bit the same and only the reference differs. A trusted fast
  // result errs by at most 1e-3 u of what double could (kappa_rho |rho| for
  // a ratio, max(1, |log|det||, kappa_1) for log|det|; fast_reference.hpp),
  // and no result here is untrusted (kappa = 1e4, N = 8: no fallback). The
  // errors in the file then differ by that plus their roundings (the
  // long double log|det|, eps_ld per run; the error itself, eps relative).
  const std::vector<std::string> forced{"experiment.acceptance=\"forced\"",
                                        "experiment.acceptance_rate=0.7"};
  std::vector<std::string> mp_setting = forced, fast_setting = forced;
  mp_setting.push_back("reference.engine=\"mp\"");
  fast_setting.push_back("reference.engine=\"fast\"");
  const ResultsFile mp = run(parse_study(kStudy, "t", mp_setting));
  const ResultsFile fast = run(parse_study(kStudy, "t", fast_setting));
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const double eps = 2 * u;
  const double eps_ld = std::numeric_limits<long double>::epsilon();
  ASSERT_EQ(mp.experiments.size(), fast.experiments.size());
  for (std::size_t e = 0; e < mp.experiments.size(); ++e) {
    const auto& x = mp.experiments[e];
    const auto& y = fast.experiments[e];
    ASSERT_TRUE(x.reference_engine && y.reference_engine);
    EXPECT_EQ(x.reference_engine->engine, "mp");
    EXPECT_EQ(y.reference_engine->engine, "fast");
    EXPECT_EQ(y.reference_engine->fallbacks, 0);
    ASSERT_EQ(x.reference.size(), y.reference.size());
    for (std::size_t s = 0; s < x.strategies.size(); ++s) {
      for (std::size_t i = 0; i < x.strategies[s].checkpoints.size(); ++i) {
        const auto& cx = x.strategies[s].checkpoints[i];
        const auto& cy = y.strategies[s].checkpoints[i];
        const auto& ref = x.reference[i];
        const double log_det_tol =
            1e-3 * u * std::max({1.0, std::abs(ref.log_det), ref.condition_1}) +
            2 * eps_ld * (1 + std::abs(ref.log_det)) + 2 * eps * cx.log_det_error;
        EXPECT_NEAR(cx.log_det_error, cy.log_det_error, log_det_tol) << x.strategies[s].info.label;
        if (i > 0) {
          const double ratio_tol =
              1e-3 * u * ref.ratio_condition_max + 2 * eps * (1 + cx.ratio_error_max);
          EXPECT_NEAR(cx.ratio_error_max, cy.ratio_error_max, ratio_tol) << x.strategies[s].info.label;
        }
      }
    }
  }
}

TEST_F(Runner, AFallbackToMpBeyondThePlanIsOneLineOnStderr) {
  // kappa = 1e18: the fast reference trusts almost nothing, so mp is reset
  // (at least once); at N = 8 an mp reset is about 1.1e-7 N^3 = 6e-5 s, more
  // than the plan's estimate for this whole experiment (a few microseconds). One
  // line for the experiment, however many resets; mp's engine never warns.
  const std::string study = R"(
[reference]
engine = "ENGINE"
[[experiment]]
name = "stiff"
workload = "randsvd"
kappa = 1e18
n = 8
moves = 16
checkpoint_every = 8
[[strategy]]
name = "sm"
)";
  const auto with_engine = [&study](const std::string& engine) {
    std::string s = study;
    s.replace(s.find("ENGINE"), 6, engine);
    return s;
  };
  ::testing::internal::CaptureStderr();
  const ResultsFile fast = run(parse_study(with_engine("fast"), "t"));
  const std::string warned = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(fast.experiments.at(0).reference_engine);
  EXPECT_GT(fast.experiments[0].reference_engine->fallbacks, 0);
  EXPECT_EQ(std::count(warned.begin(), warned.end(), '\n'), 1) << warned;
  EXPECT_NE(warned.find("slaterlab: warning: experiment 'stiff'"), std::string::npos) << warned;
  EXPECT_NE(warned.find("is not trusted (bound "), std::string::npos) << warned;

  ::testing::internal::CaptureStderr();
  (void)run(parse_study(with_engine("mp"), "t"));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(Runner, CheckpointOnlyReferencesNeedForcedAcceptance) {
  try {
    (void)parse_study(kStudy, "t", {"reference.per_move=false"});
    FAIL() << "expected a configuration error";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("forced"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace slaterlab
