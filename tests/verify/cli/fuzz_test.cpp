// `slaterlab fuzz` (verify/cli/fuzz.cpp over the fuzz engine): the report
// of a passing run and of a failing one names what a user needs, in process
// and through the binary; bad input is exit code 2 with one line. The engine
// itself is tests/verify/properties/fuzz_engine_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tests/verify/properties/fuzz_test_support.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/cli/fuzz.hpp"

namespace slaterlab {
namespace {

using Fuzz = testing::FuzzTest;

TEST_F(Fuzz, CorrectStrategyPrintsItsRowAndNoFailure) {
  std::ostringstream out;
  EXPECT_EQ(fuzz_command(args("sm-double", 4, 6), out, nullptr), 0);
  EXPECT_NE(out.str().find("| sm-double | 4 |"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("0 failures"), std::string::npos) << out.str();
}

TEST_F(Fuzz, BrokenStrategyReportNamesEverythingAUserNeeds) {
  FuzzArgs a = args("sm-broken", 10, 12);
  std::ostringstream out;
  EXPECT_EQ(fuzz_command(a, out, nullptr), 1);
  for (const char* needle : {"FAILED sm-broken-double RatiosMatchOracle", "counterexample",
                             "reproduce with", "slaterlab fuzz --strategy sm-broken-double",
                             "saved ", "1 failure;"}) {
    EXPECT_NE(out.str().find(needle), std::string::npos) << needle << "\n" << out.str();
  }
}

// ---- the command line ----------------------------------------------------------------

class FuzzCli : public Fuzz {
 protected:
  testing::CommandResult fuzz(const std::string& args) const { return run("fuzz " + args); }
  std::string corpus() const { return " --corpus " + dir_.string(); }
};

TEST_F(FuzzCli, CorrectStrategyExitsZeroWithASummary) {
  const testing::CommandResult r =
      fuzz("--strategy sm-double --workload randsvd --cases 3 --max-n 6 --seed 5" + corpus());
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
    const testing::CommandResult r = fuzz(args + (args.find("--corpus") == 0 ? "" : corpus()));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("slaterlab: error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
  EXPECT_NE(fuzz("--strategy delayd" + corpus()).err.find("did you mean 'delayed'"),
            std::string::npos);
}

}  // namespace
}  // namespace slaterlab
