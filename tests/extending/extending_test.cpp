// The toys of toys.hpp, each registered from here (one file and one call),
// through every path a user takes: run, regress, fuzz, bench and table of a
// `slaterlab` of one's own (slaterlab_with_toys), and the registries in
// process. What the toys compute is checked against what follows from their
// definitions, not against their own output: the refresh count of a walk
// (accepted moves / k), the rounding bound of float-rounded orbitals.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "tests/extending/toys.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/orbital_registry.hpp"
#include "verify/inputs/workload_registry.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab {
namespace {

/// Registers the toys once for the tests that use the registries in process.
class Toys : public ::testing::Environment {
 public:
  void SetUp() override {
    toys::register_toy_strategy();
    toys::register_toy_workload();
    toys::register_toy_orbitals();
  }
};
[[maybe_unused]] const auto* const kToys = ::testing::AddGlobalTestEnvironment(new Toys);

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(Registries, KnowEachToyByItsNameOnce) {
  EXPECT_TRUE(contains(known_strategies(), "toy-refresh"));
  EXPECT_TRUE(contains(known_workloads(), "toy-shift"));
  EXPECT_TRUE(contains(known_orbital_sets(), "toy-rounded"));
  EXPECT_THROW(toys::register_toy_strategy(), std::invalid_argument);
  EXPECT_THROW(toys::register_toy_workload(), std::invalid_argument);
  EXPECT_THROW(toys::register_toy_orbitals(), std::invalid_argument);
  const StrategyTraits& traits = strategy_traits("toy-refresh");
  ASSERT_EQ(traits.events.size(), 1u);
  EXPECT_EQ(traits.events[0].name, "refreshes");
  EXPECT_EQ(traits.plan.matrices, 2);
  EXPECT_EQ(traits.rounding.factor_for({}), 1.0);  // the default it keeps
}

// k accepted moves between refreshes: a walk of m accepted moves refreshes
// floor(m / k) times, and after each refresh the inverse is the exact one
// of the matrix to double's rounding (its residual A X - I of a few eps).
TEST(ToyStrategy, RefreshesEveryKAcceptedMoves) {
  UpdaterOptions o;
  o.k = 4;
  const auto toy = make_updater("toy-refresh", o);
  EXPECT_EQ(toy->label(), "toy-refresh-4-double");
  WorkloadSpec spec;
  spec.kind = "toy-shift";
  spec.n = 6;
  spec.delta = 0.2;
  const auto workload = make_workload(spec);
  Eigen::MatrixXd a = workload->initial_matrix();
  toy->reset(a);
  for (int move = 1; move <= 11; ++move) {
    const Move m = workload->next_move(a);
    toy->ratio(m.k, m.column);
    toy->accept();
    a.col(m.k) = m.column;
    EXPECT_EQ(toy->counters().event("refreshes"), move / 4) << "move " << move;
  }
}

// ---- the command line of a program of one's own ----------------------------------

class ToysCli : public testing::ScratchTest {};

// One study with each toy: the strategy beside the baseline on the toy
// workload, the gas walk on toy orbitals, and VMC runs on them.
constexpr const char* kStudy = R"(
[study]
name = "toys"
seed = 3
[reference]
certify = false
[[experiment]]
workload = "toy-shift"
n = 10
delta = 0.25
sweeps = 4
checkpoint_every = 10
[[experiment]]
workload = "electron-gas"
n = 7
rs = 2.0
orbitals = "toy-rounded"
sweeps = 2
[[strategy]]
name = "toy-refresh"
k = 3
[[strategy]]
name = "sm"
precision = "double"
[[vmc]]
n = 4
alpha = 0.8
orbitals = "toy-rounded"
strategy = "toy-refresh"
k = 5
step = 0.8
walkers = 2
sweeps = 200
equilibration = 20
)";

TEST_F(ToysCli, RunWritesEveryToyAndTableShowsThem) {
  const std::string study = write("toys.toml", kStudy);
  const testing::CommandResult r = run("run " + study + " -q -o " + path("r.h5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* shown : {"toy-shift-n10", "toy-refresh-3-double", "toy-rounded"})
    EXPECT_NE(r.out.find(shown), std::string::npos) << shown << "\n" << r.out;

  const ResultsFile results = read_results(path("r.h5"));
  const auto experiment = [&](const std::string& name) {
    for (const ExperimentResult& e : results.experiments)
      if (e.info.name == name) return e;
    ADD_FAILURE() << "no experiment " << name;
    return ExperimentResult{};
  };
  const ExperimentResult shift = experiment("toy-shift-n10");
  EXPECT_EQ(shift.info.workload, "toy-shift");
  EXPECT_NE(std::find(shift.info.parameters.begin(), shift.info.parameters.end(),
                      std::pair<std::string, std::string>{"delta", "0.25"}),
            shift.info.parameters.end());
  for (const StrategyResult& s : shift.strategies) {
    if (s.info.name != "toy-refresh") continue;
    ASSERT_EQ(s.info.events.size(), 1u);
    EXPECT_EQ(s.info.events[0].name, "refreshes");
    ASSERT_TRUE(s.summary);
    // No breakdown on this well-conditioned walk, so no other refactorisation
    // resets the count: floor(accepted / k).
    EXPECT_EQ(s.summary->breakdowns, 0);
    const std::int64_t accepted = s.checkpoints.back().accepted;
    EXPECT_EQ(event_count(s.summary->events, "refreshes"), accepted / 3);
    EXPECT_GT(accepted / 3, 0);
  }
  // The gas walk and the VMC run on toy orbitals, and its accuracy measured
  // against the analytic set: rounding to nearest float errs by at most
  // u = eps_float / 2 relative to each entry, so every "eps" column is <= 1/2.
  EXPECT_FALSE(experiment("electron-gas-n7-rs2-toy-rounded").strategies.empty());
  ASSERT_EQ(results.vmc.size(), 1u);
  EXPECT_EQ(results.vmc[0].info.orbitals, "toy-rounded");
  EXPECT_EQ(results.vmc[0].info.grid, 0);
  ASSERT_EQ(results.orbitals.size(), 1u);
  const OrbitalAccuracyRecord& accuracy = results.orbitals[0];
  EXPECT_EQ(accuracy.epsilon, std::numeric_limits<float>::epsilon());
  for (const double eps_column :
       {accuracy.value_max_eps, accuracy.gradient_max_eps, accuracy.laplacian_max_eps}) {
    EXPECT_GT(eps_column, 0.0);
    EXPECT_LE(eps_column, 0.5);
  }

  const testing::CommandResult table = run("table " + path("r.h5") + " --kind orbitals");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("toy-rounded"), std::string::npos) << table.out;
}

TEST_F(ToysCli, RegressComparesEachToyWithItsBaseline) {
  const std::string study = write("toys.toml", kStudy);
  const std::string baseline = path("baseline.h5");
  testing::CommandResult r = run("regress " + study + " --baseline " + baseline +
                                 " --update-baseline -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run("regress " + study + " --baseline " + baseline + " -q --summary " + path("s.md"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string summary = slurp(path("s.md"));
  for (const char* compared : {"toy-refresh-3-double", "toy-shift-n10", "toy-rounded"})
    EXPECT_NE(summary.find(compared), std::string::npos) << compared << "\n" << summary;
}

TEST_F(ToysCli, FuzzHoldsTheToyStrategyToEveryProperty) {
  const testing::CommandResult r =
      run("fuzz --strategy toy-refresh --cases 4 --max-n 8 --seed 11 -q --corpus " + dir_.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| toy-refresh-16-double |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 failures"), std::string::npos) << r.out;
}

TEST_F(ToysCli, BenchWalksTheToyStrategyAtTheKItDeclares) {
  const testing::CommandResult r =
      run("bench --n=16 --seconds=0.001 --benchmark_filter=updates/toy-refresh "
          "--benchmark_format=csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("updates/toy-refresh-16-double/N:16"), std::string::npos) << r.out;
}

TEST_F(ToysCli, BenchMeasuresTheToyOrbitalSet) {
  const testing::CommandResult r =
      run("bench --benchmark_filter=orbitals/toy-rounded/vgl/N:56 --benchmark_min_time=0.01 "
          "--benchmark_format=csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("orbitals/toy-rounded/vgl/N:56"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace slaterlab
