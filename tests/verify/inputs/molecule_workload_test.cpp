// The molecule workload (walk_workloads.hpp, molecule_cycles.hpp) and the
// molecule keys of a study (molecule_experiment.hpp, vmc_config.cpp): the
// Slater matrices are the occupied MOs at the walk's positions, the cycles
// are the expansion's occupations replacing the reference's columns (with
// the exactly singular intermediates of shifted occupations), and bad
// values are refused in one line before any work.

#include "verify/inputs/molecule_cycles.hpp"
#include "verify/inputs/walk_workloads.hpp"

#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <limits>
#include <string>

#include "tests/verify/molecule_fixtures.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/config.hpp"
#include "verify/inputs/workload_registry.hpp"
#include "verify/run/runner.hpp"

namespace slaterlab {
namespace {

using testing::spd_atom;

DeterminantOccupation det(std::vector<int> up, std::vector<int> down) { return {up, down, 0.1}; }

WorkloadSpec molecule_spec(Eigen::Index n, const std::string& spin = "up") {
  WorkloadSpec s;
  s.kind = "molecule";
  s.n = n;
  s.seed = 5;
  s.spin = spin;
  s.orbitals = "double";
  s.delta = 0.5;
  s.file = "in-memory";
  return s;
}

TEST(MoleculeCycles, ExcitationsReplaceTheColumnsWhereTheOccupationsDiffer) {
  EXPECT_TRUE(excitation_of({0, 1, 2, 3}).empty());
  const auto single = excitation_of({0, 1, 2, 5});
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].column, 3);
  EXPECT_EQ(single[0].orbital, 5);
  // 1 -> 4 listed in increasing order shifts columns 1..3.
  const auto shift = excitation_of({0, 2, 3, 4});
  ASSERT_EQ(shift.size(), 3u);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(shift[std::size_t(t)].column, t + 1);
    EXPECT_EQ(shift[std::size_t(t)].orbital, t + 2);
  }
}

TEST(MoleculeCycles, DistinctOccupationsOfOneSpinInFileOrder) {
  const auto wf = spd_atom({det({0, 1, 2, 3}, {0, 1, 2}), det({0, 1, 2, 5}, {0, 1, 2}),
                            det({0, 1, 2, 5}, {0, 1, 4}), det({0, 2, 3, 4}, {0, 1, 2})});
  const auto up = spin_excitations(*wf, "up");
  ASSERT_EQ(up.size(), 2u);
  EXPECT_EQ(up[0], (std::vector<int>{0, 1, 2, 5}));
  EXPECT_EQ(up[1], (std::vector<int>{0, 2, 3, 4}));
  EXPECT_EQ(spin_excitations(*wf, "down"), (std::vector<std::vector<int>>{{0, 1, 4}}));
  EXPECT_THROW(spin_excitations(*spd_atom({det({0, 1, 2}, {0, 1, 2})}), "up"), std::invalid_argument);
  EXPECT_THROW(spin_excitations(*spd_atom({det({0, 1, 2, 9}, {0, 1, 2})}), "up"), std::invalid_argument);
}

// The cycles at one configuration: each excitation writes its orbitals'
// columns, its restore gives back the initial matrix bit for bit, and a
// shifted occupation's first write leaves two equal columns (exactly
// singular). Then a cycle of N columns moves to a new configuration.
TEST(MoleculeCycles, ExciteRestoreThenMove) {
  const auto wf = spd_atom({det({0, 1, 2, 3}, {0, 1, 2}), det({0, 1, 2, 5}, {0, 1, 2}),
                            det({0, 2, 3, 4}, {0, 1, 2})});
  WorkloadSpec spec = molecule_spec(4);
  spec.excitations = true;
  auto cycles = make_molecule_workload(spec, wf);
  ASSERT_TRUE(cycles->cycles());
  const Eigen::MatrixXd m0 = cycles->initial_matrix();
  ASSERT_EQ(m0.rows(), 4);
  ASSERT_EQ(m0.cols(), 4);
  // The same seed's pbp walk starts at the same positions: its Slater matrix
  // A(i, j) = phi_i(r_j) is the transpose (identity MOs: the values are the
  // AOs', bit for bit in both).
  spec.excitations = false;
  EXPECT_EQ(make_molecule_workload(spec, wf)->initial_matrix(), m0.transpose());

  Eigen::MatrixXd m = m0;
  const auto apply = [&](const std::vector<Move>& cycle, bool* singular_between = nullptr) {
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      m.col(cycle[i].k) = cycle[i].column;
      if (singular_between && i + 1 < cycle.size())
        for (Eigen::Index a = 0; a < m.cols(); ++a)
          for (Eigen::Index b = a + 1; b < m.cols(); ++b)
            *singular_between = *singular_between || m.col(a) == m.col(b);
    }
  };
  for (int configuration = 0; configuration < 2; ++configuration) {
    const Eigen::MatrixXd start = m;
    auto c = cycles->next_cycle(m);  // 3 -> 5
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].k, 3);
    apply(c);
    apply(cycles->next_cycle(m));
    EXPECT_EQ(m, start);
    c = cycles->next_cycle(m);  // the shift: columns 1, 2, 3 get orbitals 2, 3, 4
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(c[0].column, start.col(2));  // orbital 2's column, a copy of column 2
    bool singular = false;
    apply(c, &singular);
    EXPECT_TRUE(singular);
    EXPECT_NE(Eigen::PartialPivLU<Eigen::MatrixXd>(m).determinant(), 0.0);
    apply(cycles->next_cycle(m));
    EXPECT_EQ(m, start);
    c = cycles->next_cycle(m);  // the walk moves on
    ASSERT_EQ(c.size(), 4u);
    apply(c);
    EXPECT_NE(m, start);
  }
  EXPECT_THROW(cycles->next_move(m), std::logic_error);
}

TEST(MoleculeCycles, RefusedWithoutAnExpansionOrAnExcitationOfTheSpin) {
  WorkloadSpec spec = molecule_spec(4);
  spec.excitations = true;
  EXPECT_THROW(make_molecule_workload(spec, spd_atom()), std::invalid_argument);
  const auto only_down = spd_atom({det({0, 1, 2, 3}, {0, 1, 2}), det({0, 1, 2, 3}, {0, 1, 5})});
  EXPECT_THROW(make_molecule_workload(spec, only_down), std::invalid_argument);
  EXPECT_NO_THROW(make_molecule_workload(molecule_spec(3, "down"), only_down));
  WorkloadSpec wrong = molecule_spec(3);  // four spin-up electrons
  EXPECT_THROW(make_molecule_workload(wrong, spd_atom()), std::invalid_argument);
  wrong = molecule_spec(4);
  wrong.orbitals = "analytic";
  EXPECT_THROW(make_molecule_workload(wrong, spd_atom()), std::invalid_argument);
}

// The walk: proposals are the occupied MOs at r_k + delta g, and a qs walk
// hands its sweeps on as cycles, as the other walks do.
TEST(MoleculeWorkload, IsAKindThatReadsItsFile) {
  EXPECT_EQ(known_file_workloads(), std::vector<std::string>{"molecule"});
  WorkloadSpec no_file = molecule_spec(4);
  no_file.file = "";
  EXPECT_THROW(make_workload(no_file), ConfigError);
}

TEST(MoleculeWorkload, ProposalsAreTheOccupiedOrbitalsOfOneSpin) {
  const auto wf = spd_atom();
  for (const std::string spin : {"up", "down"}) {
    const Eigen::Index n = spin == "up" ? 4 : 3;
    auto walk = make_molecule_workload(molecule_spec(n, spin), wf);
    Eigen::MatrixXd a = walk->initial_matrix();
    ASSERT_EQ(a.rows(), n);
    for (int k = 0; k < 3 * n; ++k) {
      const Move m = walk->next_move(a);
      ASSERT_EQ(m.column.size(), n);
      a.col(m.k) = m.column;  // accept every move
    }
    EXPECT_NE(Eigen::PartialPivLU<Eigen::MatrixXd>(a).determinant(), 0.0);
  }
  WorkloadSpec qs = molecule_spec(4);
  qs.scheme = "qs";
  auto walk = make_molecule_workload(qs, wf);
  EXPECT_TRUE(walk->cycles());
  EXPECT_FALSE(walk->next_cycle(walk->initial_matrix()).empty());
}

class MoleculeConfig : public testing::ScratchTest {
 protected:
  void SetUp() override {
    ScratchTest::SetUp();
    write("atom.molden", testing::spd_atom_molden());
  }
  StudyConfig parse(const std::string& text) {
    return load_study(write("study.toml", text));
  }
  /// The study is refused with a one-line message containing `what`.
  void refused(const std::string& text, const std::string& what) {
    SCOPED_TRACE(text);
    try {
      parse(text);
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(what), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
};

const std::string kStrategy = "[[strategy]]\nname = \"sm\"\n";

TEST_F(MoleculeConfig, ExperimentTakesItsNFromTheFileRelativeToTheStudy) {
  const StudyConfig s = parse("[[experiment]]\nworkload = \"molecule\"\nfile = \"atom.molden\"\n"
                              "spin = [\"up\", \"down\"]\norbitals = [\"double\", \"float\"]\n" +
                              kStrategy);
  ASSERT_EQ(s.experiments.size(), 4u);
  EXPECT_EQ(s.experiments[0].workload.n, 4);
  EXPECT_EQ(s.experiments[0].workload.file, path("atom.molden"));
  EXPECT_EQ(s.experiments[0].workload.delta, kMoleculeStep);
  EXPECT_EQ(s.experiments[0].name, "molecule-atom-up");
  EXPECT_EQ(s.experiments[3].workload.n, 3);
  EXPECT_EQ(s.experiments[3].name, "molecule-atom-down-float");
}

TEST_F(MoleculeConfig, BadExperimentValuesAreRefusedInOneLine) {
  const std::string head = "[[experiment]]\nworkload = \"molecule\"\n";
  refused(head + kStrategy, "needs 'file'");
  refused(head + "file = \"missing.molden\"\n" + kStrategy, "missing.molden");
  refused(head + "file = \"atom.molden\"\nspin = \"sideways\"\n" + kStrategy, "'spin'");
  refused(head + "file = \"atom.molden\"\nn = 5\n" + kStrategy, "spin-up electrons");
  refused(head + "file = \"atom.molden\"\ncycles = true\n" + kStrategy, "no expansion");
  refused(head + "file = \"atom.molden\"\norbitals = \"analytic\"\n" + kStrategy, "orbitals");
  refused(head + "file = \"atom.molden\"\ncycles = true\nscheme = \"qs\"\n" + kStrategy, "choose one");
  refused("[[experiment]]\nn = 4\nspin = \"up\"\n" + kStrategy, "\"molecule\" only");
  refused("[[experiment]]\nn = 4\ncycles = true\n" + kStrategy, "\"molecule\" only");
}

TEST_F(MoleculeConfig, VmcRunTakesItsSpinsFromTheFile) {
  const StudyConfig s = parse("[[vmc]]\nsystem = \"molecule\"\nfile = \"atom.molden\"\n"
                              "exact_energy = -1.5\norbitals = [\"double\", \"float\"]\n");
  ASSERT_EQ(s.vmc.size(), 2u);
  EXPECT_EQ(s.vmc[0].n, 4);
  EXPECT_EQ(s.vmc[0].n_down, 3);
  EXPECT_EQ(s.vmc[0].spins(), 2);
  EXPECT_EQ(s.vmc[0].exact_energy, -1.5);
  EXPECT_EQ(s.vmc[1].orbitals, "float");
  EXPECT_EQ(s.vmc[0].name, "pbp-double-sm-double-atom-step1");
  const VmcConfig c = sampler_config(s.vmc[0]);
  ASSERT_TRUE(c.hamiltonian);
  EXPECT_EQ(c.hamiltonian->nuclei().size(), 1u);
  EXPECT_EQ(c.spins, 2);
}

TEST_F(MoleculeConfig, BadVmcValuesAreRefusedInOneLine) {
  const std::string head = "[[vmc]]\nsystem = \"molecule\"\n";
  refused(head, "needs 'file'");
  refused(head + "file = \"atom.molden\"\n", "holds no energy: give 'exact_energy'");
  refused(head + "file = \"atom.molden\"\nexact_energy = -1.0\nn = 4\n", "'n'");
  refused(head + "file = \"atom.molden\"\nexact_energy = -1.0\nalpha = 1.0\n", "'alpha'");
  refused(head + "file = \"atom.molden\"\nexact_energy = -1.0\norbitals = \"analytic\"\n",
          "unknown orbitals");
  refused(head + "file = \"atom.molden\"\nexact_energy = \"low\"\n", "'exact_energy'");
  refused("[[vmc]]\nn = 4\nfile = \"atom.molden\"\n", "'file' does not apply");
}

// An expansion through the runner: its cycles judged by the reference and
// every strategy, with the exactly singular intermediates of a shifted
// occupation, and written by --replay-out, whose replay reproduces every
// metric bit for bit. The expansion lives in memory (a kind registered here
// builds the workload on it).
TEST_F(MoleculeConfig, AnExpansionRunsAsCyclesAndReplays) {
  register_workload({"molecule-expansion-in-memory", [](const WorkloadSpec& spec) {
                       WorkloadSpec s = spec;
                       s.excitations = true;
                       s.orbitals = "double";
                       return make_molecule_workload(
                           s, spd_atom({det({0, 1, 2, 5}, {0, 1, 2}), det({0, 2, 3, 4}, {0, 1, 2}),
                                        det({1, 2, 3, 8}, {0, 1, 2})}));
                     }, true});
  const std::string strategies =
      "[[strategy]]\nname = \"sm\"\n[[strategy]]\nname = \"splitting\"\n"
      "[[strategy]]\nname = \"delayed\"\nk = 4\n";
  const auto study = [&](const std::string& workload) {
    return "[reference]\ncertify = false\n[[experiment]]\nname = \"expansion\"\n" + workload +
           "checkpoint_every = 20\n" + strategies;
  };
  const StudyConfig walk = parse(study(
      "workload = \"molecule-expansion-in-memory\"\nn = 4\ndelta = 0.5\nmoves = 120\n"));
  ResultWriter writer = ResultWriter::create(path("walk.h5"), RunMetadata{"t", "t", "t", "t", "t", "t"});
  RunOptions options;
  options.replay_dir = dir_;
  run_study(walk, writer, options);
  writer.commit();
  const ResultsFile a = read_results(path("walk.h5"));
  ASSERT_EQ(a.experiments.size(), 1u);
  // docs/cycles.md's model of an update-by-update cycle: 3 m eps_m kappa,
  // eps_m = 10 (g + F m) N eps; with m <= 4 and g, F of order 1, 600 N eps
  // kappa, kappa the largest condition number the reference met.
  double kappa = 1.0;
  for (const auto& c : a.experiments[0].reference)
    if (std::isfinite(c.condition_1)) kappa = std::max(kappa, c.condition_1);
  const double bound = 600 * 4 * std::numeric_limits<double>::epsilon() * kappa;
  for (const auto& s : a.experiments[0].strategies) {
    SCOPED_TRACE(s.info.label);
    ASSERT_TRUE(s.summary);
    EXPECT_GE(s.summary->cycles, 10);  // 3 excitations, their restores and a move per configuration
    EXPECT_FALSE(s.summary->failed);
    EXPECT_LT(s.summary->max_cycle_ratio_error, bound);
  }
  // sm meets the exactly singular intermediate as a breakdown; splitting
  // and delayed never form it.
  EXPECT_GT(a.experiments[0].strategies[0].summary->cycle_breakdowns, 0);
  EXPECT_EQ(a.experiments[0].strategies[1].summary->cycle_breakdowns, 0);

  ResultWriter again = ResultWriter::create(path("again.h5"), RunMetadata{"t", "t", "t", "t", "t", "t"});
  run_study(parse(study("workload = \"replay\"\nfile = \"expansion.replay.h5\"\n")), again, {});
  again.commit();
  const ResultsFile b = read_results(path("again.h5"));
  ASSERT_EQ(b.experiments[0].strategies.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const StrategySummary& p = *a.experiments[0].strategies[i].summary;
    const StrategySummary& q = *b.experiments[0].strategies[i].summary;
    EXPECT_EQ(p.max_cycle_ratio_error, q.max_cycle_ratio_error) << i;
    EXPECT_EQ(p.worst_log_det_error, q.worst_log_det_error) << i;
    EXPECT_EQ(p.cycle_breakdowns, q.cycle_breakdowns) << i;
  }
}

}  // namespace
}  // namespace slaterlab
