// Tests of the MPI scale-out (verify/mpi_run.hpp): how a study is cut into
// units, and that `mpirun -n 1` and `-n 2` write the same results as one
// process (bit for bit, elapsed times aside). The mpirun cases are skipped
// when this build has no MPI or mpirun is not installed.
#include "verify/run/mpi_run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <sys/wait.h>
#include <unistd.h>

namespace slaterlab {
namespace {

namespace fs = std::filesystem;

const std::string kStudy = R"(
[reference]
certify = true
[[experiment]]
name = "one"
workload = "gaussian"
n = 12
moves = 36
checkpoint_every = 12
[[experiment]]
name = "two"
workload = "randsvd"
kappa = 1e6
n = 10
moves = 30
checkpoint_every = 10
[[strategy]]
name = "sm"
precision = ["float", "double"]
[[strategy]]
name = "delayed"
k = 4
[[strategy]]
name = "qr-givens"
[[strategy]]
name = "recompute"
[[vmc]]
n = 4
alpha = 0.8
step = 0.8
walkers = 3
sweeps = 200
equilibration = 50
)";

TEST(StudyUnits, EveryStrategyOfEveryExperimentRunsExactlyOnce) {
  const StudyConfig study = parse_study(kStudy, "t");
  ASSERT_EQ(study.strategies.size(), 5u);
  for (const int p : {1, 2, 3, 4, 7, 16}) {
    const auto units = study_units(study, p);
    ASSERT_EQ(units.size(), 2u);
    for (const auto& groups : units) {
      std::multiset<std::size_t> seen;
      for (const auto& g : groups) {
        EXPECT_FALSE(g.empty());
        seen.insert(g.begin(), g.end());
      }
      EXPECT_EQ(seen, (std::multiset<std::size_t>{0, 1, 2, 3, 4})) << "P = " << p;
    }
  }
}

TEST(StudyUnits, ExperimentsAreSplitOnlyWhenFewerThanProcesses) {
  const StudyConfig study = parse_study(kStudy, "t");
  EXPECT_EQ(study_units(study, 2)[0].size(), 1u);  // 2 experiments for 2 processes
  EXPECT_EQ(study_units(study, 4)[0].size(), 2u);  // ceil(4 / 2)
  EXPECT_EQ(study_units(study, 64)[0].size(), 5u);  // at most one group per strategy
}

TEST(StudyUnits, AssignmentUsesEveryRankAndBalancesTheCost) {
  // Largest first to the least loaded: the loads then differ by at most the
  // largest unit's cost.
  const StudyConfig study = parse_study(kStudy, "t");
  for (const int p : {1, 2, 3, 4}) {
    const auto units = study_units(study, p);
    const auto ranks = assign_units(study, p);
    std::vector<double> load(std::size_t(p), 0.0);
    double largest = 0;
    for (std::size_t e = 0; e < units.size(); ++e) {
      const double n = double(study.experiments[e].workload.n);
      ASSERT_EQ(ranks[e].size(), units[e].size());
      for (std::size_t g = 0; g < units[e].size(); ++g) {
        ASSERT_GE(ranks[e][g], 0);
        ASSERT_LT(ranks[e][g], p);
        const double cost = double(study.experiments[e].moves) * n * n * double(4 + units[e][g].size());
        load[std::size_t(ranks[e][g])] += cost;
        largest = std::max(largest, cost);
      }
    }
    const auto [low, high] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*high - *low, largest) << "P = " << p;
    EXPECT_GT(*low, 0.0) << "P = " << p;  // at least P units here: every rank is busy
  }
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

/// Every metric of two results files is the same bit for bit (elapsed times
/// and run metadata aside).
void expect_same_results(const ResultsFile& x, const ResultsFile& y) {
  ASSERT_EQ(x.experiments.size(), y.experiments.size());
  for (std::size_t e = 0; e < x.experiments.size(); ++e) {
    const auto& a = x.experiments[e];
    const auto& b = y.experiments[e];
    EXPECT_EQ(a.info.name, b.info.name);
    ASSERT_EQ(a.reference.size(), b.reference.size());
    for (std::size_t i = 0; i < a.reference.size(); ++i) {
      EXPECT_EQ(a.reference[i].accepted, b.reference[i].accepted);
      EXPECT_TRUE(same(a.reference[i].log_det, b.reference[i].log_det));
      EXPECT_TRUE(same(a.reference[i].condition_1, b.reference[i].condition_1));
    }
    ASSERT_TRUE(a.certified_final && b.certified_final);
    EXPECT_TRUE(same(a.certified_final->log_abs_mid, b.certified_final->log_abs_mid));
    // Which reference judged the experiment, and how often it fell back to mp.
    ASSERT_TRUE(a.reference_engine && b.reference_engine) << a.info.name;
    EXPECT_EQ(a.reference_engine->engine, b.reference_engine->engine);
    EXPECT_EQ(a.reference_engine->fallbacks, b.reference_engine->fallbacks);
    ASSERT_EQ(a.strategies.size(), b.strategies.size());
    for (std::size_t s = 0; s < a.strategies.size(); ++s) {
      const auto& p = a.strategies[s];
      const auto& q = b.strategies[s];
      EXPECT_EQ(p.info.label, q.info.label);  // the same order too
      ASSERT_EQ(p.checkpoints.size(), q.checkpoints.size());
      for (std::size_t i = 0; i < p.checkpoints.size(); ++i) {
        const auto& c = p.checkpoints[i];
        const auto& d = q.checkpoints[i];
        EXPECT_TRUE(same(c.log_det_error, d.log_det_error)) << p.info.label;
        EXPECT_TRUE(same(c.ratio_error_max, d.ratio_error_max)) << p.info.label;
        EXPECT_TRUE(same(c.inverse_divergence, d.inverse_divergence)) << p.info.label;
        EXPECT_TRUE(same(c.qr_residual, d.qr_residual)) << p.info.label;
        EXPECT_EQ(c.flips, d.flips);
        EXPECT_EQ(c.events, d.events);
      }
      ASSERT_TRUE(p.summary && q.summary);
      EXPECT_TRUE(same(p.summary->worst_log_det_error, q.summary->worst_log_det_error));
    }
  }
  ASSERT_EQ(x.vmc.size(), y.vmc.size());
  for (std::size_t v = 0; v < x.vmc.size(); ++v) {
    const auto& a = x.vmc[v];
    const auto& b = y.vmc[v];
    EXPECT_EQ(a.info.name, b.info.name);
    EXPECT_TRUE(same(a.summary.energy, b.summary.energy));
    EXPECT_TRUE(same(a.summary.error, b.summary.error));
    EXPECT_TRUE(same(a.summary.acceptance, b.summary.acceptance));
    ASSERT_EQ(a.walkers.size(), b.walkers.size());
    for (std::size_t w = 0; w < a.walkers.size(); ++w) {
      EXPECT_EQ(a.walkers[w].stream, b.walkers[w].stream);
      EXPECT_TRUE(same(a.walkers[w].energy, b.walkers[w].energy));
    }
    ASSERT_EQ(a.energy, b.energy);  // every walker's series, sweep by sweep
  }
  EXPECT_EQ(x.orbitals.size(), y.orbitals.size());
}

class MpiRun : public ::testing::Test {
 protected:
  void SetUp() override {
#if !SLATERLAB_HAVE_MPI
    GTEST_SKIP() << "built without MPI";
#endif
    if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
    dir_ = fs::temp_directory_path() / ("slaterlab_mpi_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "study.toml") << kStudy;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  /// Runs the study with `launcher` in front; returns the exit code.
  int run(const std::string& launcher, const std::string& output) {
    const std::string command = launcher + " " + SLATERLAB_BINARY + " run " +
                                (dir_ / "study.toml").string() + " -q -o " +
                                (dir_ / output).string() + " > /dev/null 2> " +
                                (dir_ / (output + ".err")).string();
    return WEXITSTATUS(std::system(command.c_str()));
  }

  static std::string mpirun(int processes) {
    // As root (containers, CI) Open MPI wants --allow-run-as-root; on two
    // cores -n 2 may need --oversubscribe.
    return "mpirun --oversubscribe --allow-run-as-root -n " + std::to_string(processes);
  }

  fs::path dir_;
};

TEST_F(MpiRun, OneAndTwoRanksWriteWhatOneProcessWrites) {
  ASSERT_EQ(run("", "single.h5"), 0);
  ASSERT_EQ(run(mpirun(1), "ranks1.h5"), 0);
  ASSERT_EQ(run(mpirun(2), "ranks2.h5"), 0);
  const ResultsFile single = read_results(dir_ / "single.h5");
  ASSERT_EQ(single.experiments.size(), 2u);
  ASSERT_EQ(single.vmc.size(), 1u);
  expect_same_results(single, read_results(dir_ / "ranks1.h5"));
  expect_same_results(single, read_results(dir_ / "ranks2.h5"));
  for (const auto& entry : fs::directory_iterator(dir_)) {  // no rank files left
    EXPECT_EQ(entry.path().string().find(".rank"), std::string::npos) << entry.path();
  }
}

TEST_F(MpiRun, AFourWaySplitOfOneExperimentGivesTheSameResults) {
  // Fewer experiments than processes: the strategies of each experiment are
  // split over the ranks, each rank running the experiment's reference.
  ASSERT_EQ(run("", "single.h5"), 0);
  ASSERT_EQ(run(mpirun(4), "ranks4.h5"), 0);
  expect_same_results(read_results(dir_ / "single.h5"), read_results(dir_ / "ranks4.h5"));
}

TEST_F(MpiRun, BadInputOnEveryRankExitsTwoWithoutOutput) {
  std::ofstream(dir_ / "study.toml") << "[[experiment]]\nn = 0\n[[strategy]]\nname = \"sm\"\n";
  EXPECT_EQ(run(mpirun(2), "bad.h5"), 2);
  EXPECT_FALSE(fs::exists(dir_ / "bad.h5"));
  // The ranks agree on the refusal: rank 0 says why, once (the rest of
  // stderr is mpirun's own report of the exit code).
  const std::string err = slurp(dir_ / "bad.h5.err");
  std::size_t lines = 0;
  for (std::size_t at = err.find("slaterlab: "); at != std::string::npos;
       at = err.find("slaterlab: ", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << err;
  EXPECT_NE(err.find("slaterlab: error: " + (dir_ / "study.toml").string() +
                     ": experiment[0]: 'n' must be an integer in [1, "),
            std::string::npos)
      << err;
}

TEST_F(MpiRun, InterruptedRanksKeepTheirWorkAndExit130) {
  // Two experiments far too long to finish, one per rank.
  std::ofstream(dir_ / "study.toml") << R"(
[reference]
certify = false
[[experiment]]
name = "one"
n = 24
moves = 100000000
[[experiment]]
name = "two"
n = 24
moves = 100000000
[[strategy]]
name = "sm"
)";
  const fs::path out = dir_ / "out.h5";
  const std::string command = "exec " + mpirun(2) + " " + SLATERLAB_BINARY + " run " +
                              (dir_ / "study.toml").string() + " -q -o " + out.string() +
                              " > /dev/null 2> " + (dir_ / "err").string();
  const pid_t launcher = ::fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Both ranks are at work once their files exist (a bound, not a timing:
  // only a run that never starts takes that long).
  const auto rank_partial = [&](int r) {
    return out.string() + ".rank" + std::to_string(r) + ".partial";
  };
  for (int i = 0; i < 6000 && !(fs::exists(rank_partial(0)) && fs::exists(rank_partial(1))); ++i) {
    ::usleep(20000);
  }
  ASSERT_TRUE(fs::exists(rank_partial(0)) && fs::exists(rank_partial(1)));
  // SIGINT to every rank, as a batch system or a terminal's process group
  // sends it (mpirun forks the ranks).
  const std::string ranks =
      "pgrep -P " + std::to_string(launcher) + " > " + (dir_ / "ranks").string();
  ASSERT_EQ(std::system(ranks.c_str()), 0);
  std::ifstream list(dir_ / "ranks");
  int signalled = 0;
  for (pid_t rank; list >> rank; ++signalled) ::kill(rank, SIGINT);
  EXPECT_EQ(signalled, 2);
  int status = 0;
  ASSERT_EQ(::waitpid(launcher, &status, 0), launcher);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const std::string err = slurp(dir_ / "err");
  EXPECT_NE(err.find("slaterlab: interrupted; completed checkpoints of rank"), std::string::npos)
      << err;
  EXPECT_TRUE(fs::exists(rank_partial(0)));  // kept
  EXPECT_TRUE(fs::exists(rank_partial(1)));
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace slaterlab
