// The fuzz engine (verify/properties/fuzz_engine.hpp): a correct strategy
// passes and is compared, not vacuous; a deliberately broken one (registered
// only in the tests) is found, shrunk to a tiny case, saved as a corpus entry
// that reads back and still fails, and found again by the command it
// prints; bad input throws before any work. Small sizes and few cases keep
// every test well under a second or two.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/verify/properties/fuzz_test_support.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/replay.hpp"
#include "verify/properties/check_case.hpp"
#include "verify/properties/corpus.hpp"
#include "verify/properties/fuzz_engine.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;
using testing::same_case;

using Fuzz = testing::FuzzTest;

TEST_F(Fuzz, CorrectStrategyPassesAndComparesSomething) {
  const FuzzReport r = run_fuzz(args("sm-double", 8, 8));
  EXPECT_TRUE(r.failures.empty()) << r.failures.front().failure.message;
  ASSERT_EQ(r.tallies.size(), 1u);
  EXPECT_EQ(r.tallies[0].config.label, "sm-double");
  EXPECT_EQ(r.tallies[0].cases, 8);
  EXPECT_GT(r.tallies[0].stats.ratios_checked, 0);  // not vacuous
  EXPECT_GT(r.tallies[0].stats.log_dets_checked, 0);
  EXPECT_EQ(r.seed, 11u);
  EXPECT_TRUE(corpus_files(dir_).empty());  // nothing saved

}

TEST_F(Fuzz, BrokenStrategyIsFoundShrunkSavedAndReproduced) {
  FuzzArgs a = args("sm-broken", 10, 12);
  const FuzzReport r = run_fuzz(a);
  ASSERT_EQ(r.failures.size(), 1u);  // only the ratios are wrong
  const FuzzFailure& f = r.failures[0];
  EXPECT_EQ(f.config.label, "sm-broken-double");
  EXPECT_EQ(f.failure.property, "RatiosMatchOracle");
  EXPECT_NE(f.failure.message.find("rel.err="), std::string::npos) << f.failure.message;
  // Shrunk: any N and any checked ratio show the perturbation.
  EXPECT_LE(f.counterexample.property_case.n(), 2) << f.counterexample;
  EXPECT_LE(f.counterexample.property_case.moves.size(), 2u) << f.counterexample;
  EXPECT_GT(f.shrink_steps, 0);
  EXPECT_EQ(r.tallies[0].failures, 1);

  // Saved as a replay file that reads back bit for bit and still fails.
  ASSERT_TRUE(fs::exists(f.file)) << f.file;
  EXPECT_EQ(f.file.parent_path(), dir_);
  const ReplayData replay = read_replay(f.file);  // a valid replay file
  EXPECT_EQ(replay.n(), f.counterexample.property_case.n());
  const CorpusEntry e = read_corpus_entry(f.file);
  EXPECT_TRUE(same_case(e.property_case, f.counterexample.property_case));
  EXPECT_EQ(e.strategy, "sm-broken");
  EXPECT_EQ(e.label, "sm-broken-double");
  EXPECT_EQ(e.property, "RatiosMatchOracle");
  EXPECT_EQ(e.status, "new");
  EXPECT_EQ(e.seed, f.seed);
  EXPECT_EQ(e.options.recompute_every, f.counterexample.recompute_every);
  EXPECT_EQ(e.message, f.failure.message);
  const auto again = check_case(parse_property(e.property), e.strategy, e.options, e.property_case);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->message, f.failure.message);
  // ... and it is the perturbation that fails, not the case.
  UpdaterOptions plain = e.options;
  EXPECT_FALSE(check_case(Property::ratios_match_oracle, "sm", plain, e.property_case).has_value());

  // The printed command finds and shrinks the same case.
  EXPECT_NE(f.reproduce.find("--strategy sm-broken-double --property RatiosMatchOracle "
                             "--workload randsvd --seed 11 --cases 10 --max-n 12"),
            std::string::npos)
      << f.reproduce;
  FuzzArgs re = a;
  re.strategies = {"sm-broken-double"};
  re.properties = {"RatiosMatchOracle"};
  re.corpus = (dir_ / "re").string();
  fs::create_directories(re.corpus);
  const FuzzReport r2 = run_fuzz(re);
  ASSERT_EQ(r2.failures.size(), 1u);
  EXPECT_TRUE(
      same_case(r2.failures[0].counterexample.property_case, f.counterexample.property_case));
  EXPECT_EQ(r2.failures[0].file.filename(), f.file.filename());

}

TEST_F(Fuzz, BrokenCycleIsFoundByTheCyclePropertyShrunkAndSavedAsCycles) {
  FuzzArgs a = args("splitting-slip", 10, 12);
  a.workloads = {"randsvd", "cycles"};
  const FuzzReport r = run_fuzz(a);
  ASSERT_EQ(r.failures.size(), 1u) << r.failures.front().failure.message;  // only the cycles
  const FuzzFailure& f = r.failures[0];
  EXPECT_EQ(f.failure.property, "CycleRatioMatchesOracle");
  EXPECT_NE(f.failure.message.find("rel.err=2.000e+00"), std::string::npos)
      << f.failure.message;
  // Shrunk: one cycle of two updates on a 2 x 2 matrix.
  EXPECT_EQ(f.counterexample.property_case.n(), 2) << f.counterexample;
  EXPECT_EQ(f.counterexample.property_case.cycles, std::vector<int>{2}) << f.counterexample;
  EXPECT_GT(r.tallies[0].stats.ratios_checked, 0);  // randsvd cases ran the other properties
  EXPECT_NE(f.reproduce.find("--property CycleRatioMatchesOracle --workload cycles"),
            std::string::npos)
      << f.reproduce;

  // Saved as a replay of schema 2 with moves/cycle, read back as cycles.
  const ReplayData replay = read_replay(f.file);
  ASSERT_TRUE(replay.cycle.has_value());
  EXPECT_FALSE(replay.accept.has_value());
  const CorpusEntry e = read_corpus_entry(f.file);
  EXPECT_TRUE(same_case(e.property_case, f.counterexample.property_case));
  const auto again = check_case(parse_property(e.property), e.strategy, e.options, e.property_case);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->message, f.failure.message);
  // ... and it is the slip that fails, not the case.
  EXPECT_FALSE(
      check_case(Property::cycle_ratio_matches_oracle, "splitting", e.options, e.property_case)
          .has_value());
}

TEST_F(Fuzz, CyclePropertyRunsOnTheCyclesWorkloadOnly) {
  FuzzArgs a = args("splitting-double", 4, 8);
  a.properties = {"CycleRatioMatchesOracle"};
  EXPECT_THROW(run_fuzz(a), std::invalid_argument);  // randsvd alone: nothing to check
  a.workloads = {"cycles"};
  const FuzzReport r = run_fuzz(a);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(r.tallies[0].cases, 4);
  EXPECT_GT(r.tallies[0].stats.cycles_checked, 0);
  EXPECT_EQ(r.tallies[0].stats.ratios, 0);
}

TEST_F(Fuzz, SecondsRunsBatchesUntilTheTimeIsUp) {
  FuzzArgs a = args("sm-double", 1, 4);
  a.cases.reset();
  a.seconds = 0.3;
  const FuzzReport r = run_fuzz(a);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_GE(r.batches, 2);
  EXPECT_GE(r.seconds, 0.3);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_GE(r.tallies[0].cases, kFuzzBatchCases);
}

TEST_F(Fuzz, BadInputThrowsBeforeAnyWork) {
  auto message = [](const FuzzArgs& a) -> std::string {
    try {
      run_fuzz(a);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no error)";
  };
  FuzzArgs a = args("delayd", 1, 4);
  EXPECT_NE(message(a).find("unknown strategy 'delayd' (did you mean 'delayed'?)"),
            std::string::npos)
      << message(a);
  a = args("sm", 1, 4);
  a.seconds = 1;
  EXPECT_NE(message(a).find("--cases and --seconds"), std::string::npos) << message(a);
  a = args("sm", 1, 4);
  a.corpus = (dir_ / "missing").string();
  EXPECT_NE(message(a).find("does not exist"), std::string::npos) << message(a);
  a = args("qr-givens", 1, 4);
  a.precisions = {"mixed"};
  EXPECT_NE(message(a).find("'qr-givens' supports float, double"), std::string::npos)
      << message(a);
  a = args("sm", 1, 0);
  EXPECT_NE(message(a).find("--max-n"), std::string::npos) << message(a);
  a = args("sm", 1, 4);
  a.properties = {"RatiosMatch"};
  EXPECT_NE(message(a).find("unknown property"), std::string::npos) << message(a);
  EXPECT_TRUE(corpus_files(dir_).empty());
}
}  // namespace
}  // namespace slaterlab
