// The resource plan: a study too large for the machine is refused before any
// work (exit 2, one line, no output), --dry-run prints the plan, an
// allocation that fails anyway is one line too, and the estimate tracks the
// peak memory a run actually reaches.

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/config.hpp"
#include "verify/run/plan.hpp"
#include "verify/inputs/replay.hpp"

namespace slaterlab {
namespace {

using testing::CommandResult;
using testing::ScratchTest;
namespace fs = std::filesystem;

const char* kOneGaussian =
    "[study]\nname = \"t\"\n[[experiment]]\nworkload = \"gaussian\"\nn = 64\nmoves = 8\n"
    "[[strategy]]\nname = \"sm\"\n";

void expect_one_error_line(const CommandResult& c, const std::string& needle) {
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_EQ(c.err.rfind("slaterlab: error: ", 0), 0u) << c.err;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
  EXPECT_NE(c.err.find(needle), std::string::npos) << c.err;
}

TEST(Plan, GrowsAsNSquaredAndWithTheStrategies) {
  // Every per-entry term is N^2 (delayed's window adds O(N K)): doubling N
  // multiplies an experiment's estimate by 4 up to that window; a second
  // strategy adds its own state.
  const StudyConfig one = parse_study(kOneGaussian, "t");
  const StudyConfig twice = parse_study(kOneGaussian, "t", {"experiment.n=128"});
  const double small = plan_study(one).items.at(0).bytes;
  const double large = plan_study(twice).items.at(0).bytes;
  EXPECT_NEAR(large / small, 4.0, 1e-9);
  const StudyConfig more = parse_study(std::string(kOneGaussian) +
                                           "[[strategy]]\nname = \"qr-givens\"\n", "t");
  EXPECT_GT(plan_study(more).items.at(0).bytes, small);
}

TEST(Plan, CheckpointOnlyReferencesTradeMpUpdatesForFactorisations) {
  // Per-move: one mp factorisation plus an mp update per move. Checkpoint-
  // only: a factorisation per checkpoint and none between. With 16 checkpoints
  // over 100000 moves the second is cheaper; with a checkpoint every move it
  // is dearer.
  const std::vector<std::string> forced{"experiment.acceptance=\"forced\"", "experiment.moves=100000",
                                        "experiment.checkpoint_every=6250"};
  std::vector<std::string> sparse = forced;
  sparse.push_back("reference.per_move=false");
  const double per_move = plan_study(parse_study(kOneGaussian, "t", forced)).items.at(0).seconds;
  const double checkpoint_only = plan_study(parse_study(kOneGaussian, "t", sparse)).items.at(0).seconds;
  EXPECT_LT(checkpoint_only, per_move);
  sparse.push_back("experiment.checkpoint_every=1");
  EXPECT_GT(plan_study(parse_study(kOneGaussian, "t", sparse)).items.at(0).seconds, per_move);
}

TEST(Plan, CyclesThroughSingularMatricesPriceTheReferencesRefactorisations) {
  // Update cycles are mp's at any N (the fast reference hands over at the
  // first cycle), and each shifting cycle (rank m >= 2, probability shift)
  // forces an mp LU after it: with rank 4 and shift 1, 3/4 of the 640 / 2.5
  // cycles, 192 LUs, each mp_reset_seconds(50, N).
  const char* cycles =
      "[study]\nname = \"t\"\n[reference]\ncertify = false\n[[experiment]]\n"
      "workload = \"excitation-cycles\"\nn = 256\nrank = 4\nmoves = 640\n"
      "[[strategy]]\nname = \"sm\"\n";
  const double none = plan_study(parse_study(cycles, "t", {"experiment.shift=0"})).items.at(0).seconds;
  const double all = plan_study(parse_study(cycles, "t", {"experiment.shift=1"})).items.at(0).seconds;
  EXPECT_NEAR(all - none, 192 * mp_reset_seconds(50, 256), 1e-9 * all);
  // At N = 256 the engine "auto" would take the fast reference for single
  // moves; for cycles the plan is mp's: at least the first mp LU.
  EXPECT_GE(none, mp_reset_seconds(50, 256));
  // A quasi-simultaneous walk hands its sweeps over as cycles: mp's too.
  const char* walk =
      "[study]\nname = \"t\"\n[reference]\ncertify = false\n[[experiment]]\n"
      "workload = \"electron-gas\"\nn = 257\nmoves = 10\n[[strategy]]\nname = \"sm\"\n";
  const double pbp = plan_study(parse_study(walk, "t")).items.at(0).seconds;
  const double qs = plan_study(parse_study(walk, "t", {"experiment.scheme=\"qs\""})).items.at(0).seconds;
  EXPECT_LT(pbp, mp_reset_seconds(50, 257));
  EXPECT_GE(qs, mp_reset_seconds(50, 257));
}

TEST(Plan, CountsEachStrategysOwnMovesByItsTraits) {
  // A strategy's moves cost a rank-1 pass over what it keeps, in proportion
  // to its storage bytes: sm in float takes less time than sm in double, a
  // windowed delayed update less again, and recompute (an LU per move) more;
  // the rest of the plan (reference, checkpoints) is the same for all four.
  const auto seconds = [](const std::string& strategy, const std::string& moves) {
    const std::string study = "[study]\nname = \"t\"\n[[experiment]]\nworkload = \"gaussian\"\n"
                              "n = 512\nmoves = " + moves + "\n[[strategy]]\n" + strategy;
    return plan_study(parse_study(study, "t")).items.at(0).seconds;
  };
  const std::string sm_double = "name = \"sm\"\nprecision = \"double\"\n";
  const double sm = seconds(sm_double, "512");
  EXPECT_LT(seconds("name = \"sm\"\nprecision = \"float\"\n", "512"), sm);
  EXPECT_LT(seconds("name = \"delayed\"\nk = 32\nprecision = \"double\"\n", "512"), sm);
  EXPECT_GT(seconds("name = \"recompute\"\nprecision = \"double\"\n", "512"), sm);
  EXPECT_GT(seconds(sm_double, "1024"), sm);
}

TEST(Plan, RefusalNamesTheExperimentTheEstimateAndTheAvailableMemory) {
  const StudyConfig study = parse_study(kOneGaussian, "t", {"experiment.n=100000"});
  const StudyPlan plan = plan_study(study);
  try {
    check_fits(plan, 8.0 * 1024 * 1024 * 1024);
    FAIL() << "a 100000 x 100000 study fitted in 8 GiB";
  } catch (const ResourceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("experiment 'gaussian-n100000'"), std::string::npos) << what;
    EXPECT_NE(what.find("TiB"), std::string::npos) << what;  // 1e10 entries x >= 80 bytes
    EXPECT_NE(what.find("only 8.0 GiB is available"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(check_fits(plan_study(parse_study(kOneGaussian, "t")), 1e9));
}

TEST(Plan, AvailableMemoryHonoursTheOverrideAndRejectsNonsense) {
  setenv("SLATERLAB_MEMORY_LIMIT", "123456", 1);
  EXPECT_EQ(available_memory_bytes(), 123456.0);
  setenv("SLATERLAB_MEMORY_LIMIT", "lots", 1);
  EXPECT_THROW(available_memory_bytes(), ResourceError);
  unsetenv("SLATERLAB_MEMORY_LIMIT");
  EXPECT_GT(available_memory_bytes(), 0.0);
}

class PlanCli : public ScratchTest {};

TEST_F(PlanCli, HugeNIsOneLineExitTwoAndNoOutput) {
  const CommandResult c = run("run --set experiment.n=100000 -o " + path("r.h5"));
  expect_one_error_line(c, "experiment 'gaussian-n100000' (N = 100000) needs about");
  EXPECT_FALSE(fs::exists(path("r.h5")));
  EXPECT_FALSE(fs::exists(path("r.h5.partial")));
}

TEST_F(PlanCli, AddressSpaceLimitIsHonoured) {
  // ulimit -v 3 GiB: N = 20000 needs far more; the refusal names what the
  // limit leaves, not the machine's memory.
  const CommandResult c = run_command("ulimit -v 3145728; " + std::string(SLATERLAB_BINARY) +
                                      " run --set experiment.n=20000 -o " + path("r.h5"));
  expect_one_error_line(c, "GiB is available");
  EXPECT_NE(c.err.find("only 2."), std::string::npos) << c.err;  // 3 GiB less the process
  EXPECT_FALSE(fs::exists(path("r.h5")));
}

TEST_F(PlanCli, OutOfMemoryAnywhereElseIsOneLine) {
  // The override lets the plan through; the address-space limit makes a
  // real allocation fail while the first experiment starts.
  const CommandResult c = run_command(
      "ulimit -v 2000000; SLATERLAB_MEMORY_LIMIT=1e12 " + std::string(SLATERLAB_BINARY) +
      " run --set experiment.n=6000 --set reference.certify=false -q -o " + path("r.h5"));
  expect_one_error_line(c, "out of memory");
  EXPECT_FALSE(fs::exists(path("r.h5")));
  EXPECT_FALSE(fs::exists(path("r.h5.partial")));
}

TEST_F(PlanCli, ReplayTooLargeIsRefusedFromItsShapeBeforeItsDataIsRead) {
  // The file's data is invalid (a NaN): the memory refusal comes first, so
  // the data was never read.
  ReplayData d;
  d.initial = Eigen::MatrixXd::Ones(300, 300);
  d.initial(0, 0) = std::numeric_limits<double>::quiet_NaN();
  d.electron = {0, 1};
  d.columns = Eigen::MatrixXd::Ones(300, 2);
  write_replay(path("big.h5"), d);
  write("s.toml", "[[experiment]]\nworkload = \"replay\"\nfile = \"big.h5\"\n"
                  "[[strategy]]\nname = \"sm\"\n");
  const CommandResult c = run_command("SLATERLAB_MEMORY_LIMIT=1000000 " +
                                      std::string(SLATERLAB_BINARY) + " run " + path("s.toml") +
                                      " -o " + path("r.h5"));
  expect_one_error_line(c, "experiment 'replay-n300' (N = 300) needs about");
  EXPECT_FALSE(fs::exists(path("r.h5")));
  // With room, the same file's data is read and its NaN reported, still
  // before any output.
  const CommandResult bad = run("run " + path("s.toml") + " -o " + path("r.h5"));
  expect_one_error_line(bad, "non-finite value (NaN)");
  EXPECT_FALSE(fs::exists(path("r.h5")));
}

TEST_F(PlanCli, DryRunPrintsThePlanAndWritesNothing) {
  const CommandResult c = run("run --dry-run -o " + path("r.h5"));
  EXPECT_EQ(c.exit_code, 0) << c.err;
  for (const char* e : {"gaussian-n32", "gaussian-n256", "randsvd-n256-kappa1e+08"}) {
    EXPECT_NE(c.out.find(std::string("| experiment | ") + e + " |"), std::string::npos) << c.out;
  }
  EXPECT_NE(c.out.find("peak memory about"), std::string::npos) << c.out;
  EXPECT_FALSE(fs::exists(path("r.h5")));
  EXPECT_EQ(run("run --dry-run --set experiment.n=100000").exit_code, 2);
}

/// The dry run's peak estimate in bytes.
double estimated_peak(const CommandResult& c) {
  const std::regex re("peak memory about ([0-9.]+) (KiB|MiB|GiB)");
  std::smatch m;
  if (!std::regex_search(c.out, m, re)) return -1;
  const double scale = m[2] == "KiB" ? 1024.0 : m[2] == "MiB" ? 1048576.0 : 1073741824.0;
  return std::stod(m[1]) * scale;
}

/// Runs `slaterlab run STUDY -q -o OUT` as a direct child and returns its
/// peak resident size in bytes (wait4's rusage: this child alone), or -1
/// when it did not exit with 0.
double measured_peak(const std::string& study, const std::string& out) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    execl(SLATERLAB_BINARY, SLATERLAB_BINARY, "run", study.c_str(), "-q", "-o", out.c_str(),
          static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return double(usage.ru_maxrss) * 1024;
}

TEST_F(PlanCli, EstimateIsWithinTwiceTheMeasuredPeak) {
  // Peak resident size of one run against the estimate, for a study whose
  // N-dependent part dominates (N = 256, every strategy kind, certified).
  write("s.toml",
        "[[experiment]]\nworkload = \"gaussian\"\nn = 256\nmoves = 8\n"
        "[[strategy]]\nname = \"recompute\"\n[[strategy]]\nname = \"sm\"\n"
        "precision = [\"float\", \"double\"]\n[[strategy]]\nname = \"delayed\"\n"
        "[[strategy]]\nname = \"qr-givens\"\n[[strategy]]\nname = \"splitting\"\n");
  const double estimate = estimated_peak(run("run " + path("s.toml") + " --dry-run"));
  ASSERT_GT(estimate, 0);
  const double measured = measured_peak(path("s.toml"), path("r.h5"));
  ASSERT_GT(measured, 0);
  EXPECT_LE(estimate, 2 * measured) << estimate << " vs " << measured;
  EXPECT_GE(estimate, measured / 2) << estimate << " vs " << measured;
}

}  // namespace
}  // namespace slaterlab
