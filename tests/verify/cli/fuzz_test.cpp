// `slaterlab fuzz`: a correct strategy passes; a deliberately broken one
// (registered only here) is found, shrunk to a tiny case, reported with a
// command that reproduces it, and saved as a corpus entry that reads back and
// still fails; bad input is exit code 2. Small sizes and few cases keep
// every test well under a second or two.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "verify/cli/fuzz.hpp"
#include "verify/inputs/replay.hpp"
#include "tests/verify/forwarding_updater.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;

// Sherman-Morrison whose reported ratio is 1e-6 too large (relative): far
// outside the double error model (~1e-13 for these cases) at any N, so the
// shrunk counterexample is N = 1 with a single move.
class BrokenRatio final : public testing::ForwardingUpdater {
 public:
  static constexpr double kPerturbation = 1e-6;
  explicit BrokenRatio(const UpdaterOptions& options)
      : ForwardingUpdater(make_updater("sm", options)) {}
  std::string label() const override { return "sm-broken-" + std::string(to_string(precision())); }
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& column) override {
    Ratio r = inner().ratio(k, column);
    r.value *= 1.0 + kPerturbation;
    return r;
  }
};

// Splitting whose update cycles of two or more updates report their ratio
// with the wrong sign (the slip of a sign in its apply_cycle), registered as
// a strategy that completes cycles: only CycleRatioMatchesOracle sees it,
// and the shrunk counterexample is one cycle of two updates.
class CycleSignSlip final : public testing::ForwardingUpdater {
 public:
  explicit CycleSignSlip(const UpdaterOptions& options)
      : ForwardingUpdater(make_updater("splitting", options)) {}
  std::string label() const override { return "splitting-slip-double"; }
  CycleRatio apply_cycle(const std::vector<ColumnUpdate>& updates) override {
    CycleRatio r = inner().apply_cycle(updates);
    if (updates.size() >= 2) r.value = -r.value;
    return r;
  }
};

const bool kRegistered = [] {
  register_strategy("sm-broken", {Precision::double_},
                    [](const UpdaterOptions& o) { return std::make_unique<BrokenRatio>(o); });
  StrategyTraits completes;
  completes.cycles = StrategyTraits::Cycles::whole;
  register_strategy("splitting-slip", {Precision::double_},
                    [](const UpdaterOptions& o) { return std::make_unique<CycleSignSlip>(o); },
                    completes);
  return true;
}();

class Fuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kRegistered);
    dir_ = fs::temp_directory_path() /
           ("slaterlab_fuzz_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  FuzzArgs args(const std::string& strategy, int cases, int max_n) const {
    FuzzArgs a;
    a.strategies = {strategy};
    a.workloads = {"randsvd"};
    a.cases = cases;
    a.max_n = max_n;
    a.seed = 11;
    a.corpus = dir_.string();
    a.quiet = true;
    return a;
  }

  fs::path dir_;
};

bool same_case(const Case& a, const Case& b) {
  if (a.initial.rows() != b.initial.rows() || a.moves.size() != b.moves.size()) return false;
  if (a.initial != b.initial || a.probe_column != b.probe_column ||
      a.probe_source != b.probe_source || a.cycles != b.cycles)
    return false;
  for (std::size_t i = 0; i < a.moves.size(); ++i) {
    if (a.moves[i].electron != b.moves[i].electron || a.moves[i].accept != b.moves[i].accept ||
        a.moves[i].column != b.moves[i].column)
      return false;
  }
  return true;
}

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

  std::ostringstream out;
  EXPECT_EQ(fuzz_command(args("sm-double", 4, 6), out, nullptr), 0);
  EXPECT_NE(out.str().find("| sm-double | 4 |"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("0 failures"), std::string::npos) << out.str();
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
  EXPECT_LE(f.counterexample.kase.n(), 2) << f.counterexample;
  EXPECT_LE(f.counterexample.kase.moves.size(), 2u) << f.counterexample;
  EXPECT_GT(f.shrink_steps, 0);
  EXPECT_EQ(r.tallies[0].failures, 1);

  // Saved as a replay file that reads back bit for bit and still fails.
  ASSERT_TRUE(fs::exists(f.file)) << f.file;
  EXPECT_EQ(f.file.parent_path(), dir_);
  const ReplayData replay = read_replay(f.file);  // a valid replay file
  EXPECT_EQ(replay.n(), f.counterexample.kase.n());
  const CorpusEntry e = read_corpus_entry(f.file);
  EXPECT_TRUE(same_case(e.kase, f.counterexample.kase));
  EXPECT_EQ(e.strategy, "sm-broken");
  EXPECT_EQ(e.label, "sm-broken-double");
  EXPECT_EQ(e.property, "RatiosMatchOracle");
  EXPECT_EQ(e.status, "new");
  EXPECT_EQ(e.seed, f.seed);
  EXPECT_EQ(e.options.recompute_every, f.counterexample.recompute_every);
  EXPECT_EQ(e.message, f.failure.message);
  const auto again = check_case(parse_property(e.property), e.strategy, e.options, e.kase);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->message, f.failure.message);
  // ... and it is the perturbation that fails, not the case.
  UpdaterOptions plain = e.options;
  EXPECT_FALSE(check_case(Property::ratios_match_oracle, "sm", plain, e.kase).has_value());

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
  EXPECT_TRUE(same_case(r2.failures[0].counterexample.kase, f.counterexample.kase));
  EXPECT_EQ(r2.failures[0].file.filename(), f.file.filename());

  // The command's report names everything a user needs.
  std::ostringstream out;
  a.corpus = (dir_ / "re").string();
  EXPECT_EQ(fuzz_command(a, out, nullptr), 1);
  for (const char* needle : {"FAILED sm-broken-double RatiosMatchOracle", "counterexample",
                             "reproduce with", "slaterlab fuzz --strategy sm-broken-double",
                             "saved ", "1 failure;"}) {
    EXPECT_NE(out.str().find(needle), std::string::npos) << needle << "\n" << out.str();
  }
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
  EXPECT_EQ(f.counterexample.kase.n(), 2) << f.counterexample;
  EXPECT_EQ(f.counterexample.kase.cycles, std::vector<int>{2}) << f.counterexample;
  EXPECT_GT(r.tallies[0].stats.ratios_checked, 0);  // randsvd cases ran the other properties
  EXPECT_NE(f.reproduce.find("--property CycleRatioMatchesOracle --workload cycles"),
            std::string::npos)
      << f.reproduce;

  // Saved as a replay of schema 2 with moves/cycle, read back as cycles.
  const ReplayData replay = read_replay(f.file);
  ASSERT_TRUE(replay.cycle.has_value());
  EXPECT_FALSE(replay.accept.has_value());
  const CorpusEntry e = read_corpus_entry(f.file);
  EXPECT_TRUE(same_case(e.kase, f.counterexample.kase));
  const auto again = check_case(parse_property(e.property), e.strategy, e.options, e.kase);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->message, f.failure.message);
  // ... and it is the slip that fails, not the case.
  EXPECT_FALSE(
      check_case(Property::cycle_ratio_matches_oracle, "splitting", e.options, e.kase).has_value());
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

TEST_F(Fuzz, CorpusEntryRoundTrips) {
  CorpusEntry e;
  RandsvdRecipe recipe;
  recipe.n = 3;
  recipe.electrons = {0, 2, 1};
  recipe.accepts = {1, 0, 1};
  recipe.seed = 5;
  e.kase = build_randsvd_case(recipe);
  e.kase.probe_column = 2;
  e.kase.probe_source = 0;
  e.strategy = "delayed";
  e.options.precision = Precision::mixed;
  e.options.recompute_every = 7;
  e.options.breakdown = 0.1 + 0.2;  // not a short decimal: must round-trip exactly
  e.options.k = 3;
  e.options.variant = "naive";
  e.label = "delayed-3-mixed-naive";
  e.property = "NearSingularIsBreakdown";
  e.message = "a message, with \"quotes\"";
  e.status = "known-finding";
  e.seed = 18446744073709551615ull;
  const fs::path file = dir_ / corpus_file_name(e.label, e.property, e.kase);
  write_corpus_entry(file, e);
  EXPECT_EQ(corpus_files(dir_), std::vector<fs::path>{file});  // no temporary left

  const CorpusEntry back = read_corpus_entry(file);
  EXPECT_TRUE(same_case(back.kase, e.kase));
  EXPECT_EQ(back.strategy, e.strategy);
  EXPECT_EQ(back.options.precision, e.options.precision);
  EXPECT_EQ(back.options.recompute_every, 7);
  EXPECT_EQ(back.options.breakdown, e.options.breakdown);
  EXPECT_EQ(back.options.k, 3);
  EXPECT_EQ(back.options.variant, "naive");
  EXPECT_EQ(back.label, e.label);
  EXPECT_EQ(back.property, e.property);
  EXPECT_EQ(back.message, e.message);
  EXPECT_EQ(back.status, e.status);
  EXPECT_EQ(back.seed, e.seed);

  // A replay file without the fuzz attributes is not a corpus entry.
  ReplayData plain;
  plain.initial = e.kase.initial;
  plain.columns.resize(3, 0);
  plain.accept.emplace();
  write_replay(dir_ / "plain.h5", plain);
  try {
    read_corpus_entry(dir_ / "plain.h5");
    FAIL() << "accepted a file without 'strategy'";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("missing attribute 'strategy'"), std::string::npos)
        << error.what();
  }
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

// ---- the command line ----------------------------------------------------------------

struct Result {
  int exit_code;
  std::string out;
  std::string err;
};

class FuzzCli : public Fuzz {
 protected:
  Result run(const std::string& args) const {
    const std::string out = (dir_ / "stdout.txt").string(), err = (dir_ / "stderr.txt").string();
    const std::string command =
        std::string(SLATERLAB_BINARY) + " fuzz " + args + " >" + out + " 2>" + err + " </dev/null";
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  static std::string slurp(const std::string& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string corpus() const { return " --corpus " + dir_.string(); }
};

TEST_F(FuzzCli, CorrectStrategyExitsZeroWithASummary) {
  const Result r = run("--strategy sm-double --workload randsvd --cases 3 --max-n 6 --seed 5" +
                       corpus());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| sm-double | 3 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 failures; seed 5"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;  // stderr is not a terminal: no progress
}

TEST_F(FuzzCli, BadInputIsExitTwoWithOneLine) {
  const std::vector<std::string> bad = {"--strategy delayd", "--cases 3 --seconds 1",
                                        "--corpus " + (dir_ / "nope").string(),
                                        "--precision quad", "--max-n 0", "--cases 0"};
  for (const std::string& args : bad) {
    const Result r = run(args + (args.find("--corpus") == 0 ? "" : corpus()));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("slaterlab: error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
  EXPECT_NE(run("--strategy delayd" + corpus()).err.find("did you mean 'delayed'"),
            std::string::npos);
}

}  // namespace
}  // namespace slaterlab
