// Update cycles and singular matrices through the runner and the command
// line: a 21 x 21 cycle whose intermediate matrix is exactly singular (the
// benzene shift), the two singular-move reproducers (forced acceptance at
// eta = 1e-60, a replayed move onto a matrix singular to 50 digits), replay
// files of schema versions 1 and 2, and the shipped cycle study.
#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/reference/mp.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/replay.hpp"
#include "verify/inputs/rng.hpp"
#include "verify/inputs/workload_registry.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using LongMatrix = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr long double kEpsLong = std::numeric_limits<long double>::epsilon();

double condition_1(const MatrixXd& a) {
  const auto norm_1 = [](const MatrixXd& m) { return m.cwiseAbs().colwise().sum().maxCoeff(); };
  return norm_1(a) * norm_1(a.inverse());
}

/// log|det A| and its sign from a long double LU, independent of the mp code.
struct LongLogDet {
  long double log_abs;
  int sign;
};
LongLogDet long_log_det(const MatrixXd& a) {
  const Eigen::PartialPivLU<LongMatrix> lu(a.cast<long double>());
  long double log_abs = 0;
  int sign = lu.permutationP().determinant();
  for (Index i = 0; i < a.rows(); ++i) {
    const long double u = lu.matrixLU()(i, i);
    log_abs += std::log(std::abs(u));
    if (u < 0) sign = -sign;
  }
  return {log_abs, sign};
}

/// The benzene cycle at N = 21: column 12 := column 11 (A exactly singular:
/// two equal columns), then column 11 := a fresh orbital; A_after is A_before
/// with its orbitals shifted by one and a new one inserted.
struct BenzeneCycle {
  static constexpr Index kN = 21;
  MatrixXd before;
  MatrixXd after;
  std::vector<Index> k;
  MatrixXd columns;  // N x 2

  BenzeneCycle() {
    Rng rng(20261124, 0);
    before = rng.normal_matrix(kN, kN);
    const VectorXd fresh = rng.normal_vector(kN);
    k = {12, 11};
    columns.resize(kN, 2);
    columns.col(0) = before.col(11);
    columns.col(1) = fresh;
    after = before;
    after.col(12) = before.col(11);
    after.col(11) = fresh;
  }

  /// The matrices splitting's applied matrix passes through: the first
  /// replacement split in half, the second whole, then the other half.
  std::vector<MatrixXd> splitting_path() const {
    MatrixXd half = before;
    half.col(12) = 0.5 * (before.col(12) + before.col(11));
    MatrixXd second = half;
    second.col(11) = after.col(11);
    return {before, half, second, after};
  }

  ReplayData replay() const {
    ReplayData d;
    d.initial = before;
    d.electron = k;
    d.columns = columns;
    d.cycle = std::vector<std::int64_t>{0, 0};
    return d;
  }
};

TEST(BenzeneCycle, IntermediateIsExactlySingularAndTheEndsAreWellConditioned) {
  const BenzeneCycle c;
  MatrixXd intermediate = c.before;
  intermediate.col(12) = c.columns.col(0);
  EXPECT_EQ(intermediate.col(12), intermediate.col(11));  // det = 0 exactly
  // Well conditioned: kappa_1 N eps below sqrt(eps) (fewer than half the
  // digits at stake), so the error bounds below are far from vacuous.
  EXPECT_LT(condition_1(c.before) * double(BenzeneCycle::kN) * kEps, std::sqrt(kEps));
  EXPECT_LT(condition_1(c.after) * double(BenzeneCycle::kN) * kEps, std::sqrt(kEps));
}

// The reference's cycle ratio against det(A_after) / det(A_before) from two
// long double LUs. Each LU is backward stable: its log|det| errs by at most
// 16 N^2 eps_ld kappa_1 (the growth model of the reference's tests); the mp
// ratio is rounded once to double (eps / 2). The tolerance is their sum.
TEST(BenzeneCycle, ReferenceCycleRatioIsTheExactOne) {
  const BenzeneCycle c;
  const LongLogDet lb = long_log_det(c.before), la = long_log_det(c.after);
  const long double exact = lb.sign * la.sign * std::exp(la.log_abs - lb.log_abs);
  const double n = double(BenzeneCycle::kN);
  const double kappa = std::max(condition_1(c.before), condition_1(c.after));
  const double tolerance = 2 * 16 * n * n * double(kEpsLong) * kappa + kEps / 2;
  reference::MpReference ref;
  ref.reset(c.before);
  const reference::CycleInfo cycle = ref.apply_cycle(c.k, c.columns);
  ASSERT_TRUE(cycle.ratio.defined);
  EXPECT_LE(std::abs((long double)cycle.ratio.value - exact) / std::abs(exact), tolerance);
  ASSERT_EQ(cycle.per_update.size(), 2u);
  EXPECT_EQ(cycle.per_update[0].value, 0.0);    // onto the singular matrix
  EXPECT_FALSE(cycle.per_update[1].defined);    // from it
  EXPECT_FALSE(ref.singular());
}

class Cycles : public slaterlab::testing::ScratchTest {
 protected:
  /// Runs the study text through the binary; the results file read back.
  ResultsFile run_study_text(const std::string& toml, int* exit_code) {
    const std::string study = write("study.toml", toml);
    const slaterlab::testing::CommandResult r = run("run " + study + " -q -o " + path("out.h5"));
    *exit_code = r.exit_code;
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    return read_results(path("out.h5"));
  }

  static const StrategyResult& strategy(const ExperimentResult& e, const std::string& label) {
    for (const auto& s : e.strategies)
      if (s.info.label == label) return s;
    throw std::runtime_error("no strategy " + label);
  }
};

const std::string kStrategies = R"(
[[strategy]]
name = "sm"
precision = "double"
[[strategy]]
name = "splitting"
precision = "double"
[[strategy]]
name = "recompute"
precision = "double"
[[strategy]]
name = "delayed"
k = 4
precision = "double"
)";

TEST_F(Cycles, BenzeneCycleThroughTheRunner) {
  const BenzeneCycle c;
  write_replay(path("benzene.h5"), c.replay());
  int exit_code = -1;
  const ResultsFile f = run_study_text(
      "[reference]\ncertify = false\n[[experiment]]\nworkload = \"replay\"\nfile = \"benzene.h5\"\n"
      "checkpoint_every = 1\n" + kStrategies,
      &exit_code);
  ASSERT_EQ(f.experiments.size(), 1u);
  const ExperimentResult& e = f.experiments[0];
  // Checkpoints at move 0 and after the cycle (move 2): one cycle, never cut.
  ASSERT_EQ(e.reference.size(), 2u);
  EXPECT_EQ(e.reference[1].move, 2);
  EXPECT_EQ(e.reference[1].cycles, 1);
  // The reference's log|det| before and after against the long double LUs
  // (16 N^2 eps_ld kappa_1 each, as above, plus rounding to double).
  const double n = double(BenzeneCycle::kN);
  for (int i : {0, 1}) {
    const MatrixXd& a = i == 0 ? c.before : c.after;
    const LongLogDet exact = long_log_det(a);
    const double tolerance = 16 * n * n * double(kEpsLong) * condition_1(a) +
                             kEps * std::abs(double(exact.log_abs));
    EXPECT_NEAR(e.reference[std::size_t(i)].log_det, double(exact.log_abs), tolerance);
    EXPECT_EQ(e.reference[std::size_t(i)].sign, exact.sign);
  }
  // Splitting completes the cycle: no breakdown, and each of its three
  // divisors is a row of its inverse (relative error <= N eps kappa_1 of the
  // applied matrix, a backward-stable LU plus one update) times a column
  // (N eps more): the ratio errs by at most 3 * 2 N eps kappa over the
  // matrices it applies.
  double kappa = 0;
  for (const MatrixXd& a : c.splitting_path()) kappa = std::max(kappa, condition_1(a));
  const StrategySummary& splitting = *strategy(e, "splitting-double").summary;
  EXPECT_FALSE(splitting.failed);
  EXPECT_EQ(splitting.cycle_breakdowns, 0);
  EXPECT_LE(splitting.max_cycle_ratio_error, 6 * n * kEps * kappa);
  EXPECT_GT(event_count(strategy(e, "splitting-double").checkpoints[1].events, "splits"), 0);
  // Delayed completes it as one Woodbury update: its ratio is det B,
  // B = W^T A' (rows k_i of A_before^{-1} times the new columns), whose
  // entries err by N eps kappa_1(A_before) relative to |w_j| |a'_i| (a row
  // of a backward-stable inverse times a column); a relative perturbation
  // delta of B's entries moves det B by at most m kappa_1(B) delta, and the
  // LU of B adds its own m eps kappa_1(B): the tolerance doubles the first.
  MatrixXd b(2, 2);
  const MatrixXd inverse = c.before.inverse();
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) b(j, i) = inverse.row(c.k[std::size_t(j)]).dot(c.columns.col(i));
  const StrategySummary& delayed = *strategy(e, "delayed-4-double").summary;
  EXPECT_EQ(delayed.cycle_breakdowns, 0);
  EXPECT_LE(delayed.max_cycle_ratio_error,
            2 * 2 * condition_1(b) * n * kEps * condition_1(c.before));
  // sm meets the exactly singular matrix: a breakdown, never a crash.
  const StrategySummary& sm = *strategy(e, "sm-double").summary;
  EXPECT_FALSE(sm.failed);
  EXPECT_GE(sm.cycle_breakdowns, 1);
  EXPECT_EQ(sm.cycles, 1);
}

TEST_F(Cycles, AdversarialMovesSingularToFiftyDigitsDoNotAbort) {
  int exit_code = -1;
  const ResultsFile f = run_study_text(R"(
[reference]
certify = false
[[experiment]]
workload = "adversarial"
n = 8
eta = 1e-60
moves = 48
checkpoint_every = 1
acceptance = "forced"
)" + kStrategies,
                                       &exit_code);
  ASSERT_EQ(f.experiments.size(), 1u);
  const ExperimentResult& e = f.experiments[0];
  ASSERT_EQ(e.reference.size(), 49u);
  std::int64_t singular = 0;
  for (const ReferenceCheckpoint& r : e.reference) {
    if (r.sign != 0) continue;
    ++singular;
    EXPECT_EQ(r.log_det, -std::numeric_limits<double>::infinity());
    EXPECT_TRUE(std::isinf(r.condition_1));
  }
  EXPECT_GT(singular, 0);            // collapses onto matrices singular to 50 digits
  EXPECT_LT(singular, 48);           // and releases out of them
  EXPECT_NE(e.reference.back().sign, 0) << "the run ends on a released matrix";
  for (const auto& s : e.strategies) {
    ASSERT_TRUE(s.complete()) << s.info.label;
    EXPECT_FALSE(s.summary->failed) << s.info.label << ": " << s.summary->failure;
    EXPECT_EQ(s.summary->singular_checkpoints, singular);
  }
}

TEST_F(Cycles, ReplayedMoveOntoAMatrixSingularToFiftyDigitsDoesNotAbort) {
  // A = I_2, column 1 := (1, 1e-50) (det 1e-50: singular to 50 digits),
  // then back to e_1.
  ReplayData d;
  d.schema_version = 1;
  d.initial = MatrixXd::Identity(2, 2);
  d.electron = {1, 1};
  d.columns.resize(2, 2);
  d.columns << 1, 0, 1e-50, 1;
  d.accept = std::vector<bool>{true, true};
  write_replay(path("tiny.h5"), d);
  int exit_code = -1;
  const ResultsFile f = run_study_text(
      "[reference]\ncertify = false\n[[experiment]]\nworkload = \"replay\"\nfile = \"tiny.h5\"\n"
      "checkpoint_every = 1\n" + kStrategies,
      &exit_code);
  const ExperimentResult& e = f.experiments.at(0);
  ASSERT_EQ(e.reference.size(), 3u);
  EXPECT_EQ(e.reference[1].sign, 0);
  EXPECT_EQ(e.reference[1].log_det, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.reference[2].sign, 1);
  EXPECT_EQ(e.reference[2].log_det, 0.0);  // I_2 again, refactorised exactly
  for (const auto& s : e.strategies) {
    EXPECT_FALSE(s.summary->failed) << s.info.label;
    EXPECT_TRUE(std::isnan(s.checkpoints[1].log_det_error)) << "not judged against det 0";
    EXPECT_EQ(s.checkpoints[2].log_det_error, 0.0) << s.info.label;
  }
}

TEST_F(Cycles, ReplayVersionOneStillReadsAndVersionTwoGroupsCycles) {
  const BenzeneCycle c;
  ReplayData v1 = c.replay();
  v1.schema_version = 1;
  v1.cycle.reset();
  write_replay(path("v1.h5"), v1);
  const ReplayData read1 = read_replay(path("v1.h5"));
  EXPECT_EQ(read1.schema_version, 1);
  EXPECT_FALSE(read1.cycle);
  EXPECT_EQ(read1.columns, c.columns);

  write_replay(path("v2.h5"), c.replay());
  const ReplayData read2 = read_replay(path("v2.h5"));
  EXPECT_EQ(read2.schema_version, 2);
  ASSERT_TRUE(read2.cycle);
  EXPECT_EQ(*read2.cycle, (std::vector<std::int64_t>{0, 0}));
  WorkloadSpec spec;
  spec.kind = "replay";
  spec.n = BenzeneCycle::kN;
  spec.file = path("v2.h5");
  auto workload = make_workload(spec);
  ASSERT_TRUE(workload->cycles());
  const std::vector<Move> cycle = workload->next_cycle(workload->initial_matrix());
  ASSERT_EQ(cycle.size(), 2u);
  EXPECT_EQ(cycle[0].k, 12);
  EXPECT_EQ(cycle[1].k, 11);
}

TEST_F(Cycles, BadCycleDatasetsAreOneLineNamingTheProblem) {
  const BenzeneCycle c;
  struct Case {
    const char* what;
    std::function<void(ReplayData&)> edit;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"cycle in version 1", [](ReplayData& d) { d.schema_version = 1; },
       "'moves/cycle' needs replay_schema_version 2"},
      {"not starting at 0", [](ReplayData& d) { d.cycle = std::vector<std::int64_t>{1, 1}; },
       "'moves/cycle'[0] = 1 must be 0"},
      {"a gap", [](ReplayData& d) { d.cycle = std::vector<std::int64_t>{0, 2}; },
       "'moves/cycle'[1] = 2 must be 0 or 1"},
      {"wrong length", [](ReplayData& d) { d.cycle = std::vector<std::int64_t>{0}; },
       "'moves/cycle' must have one entry per move (M = 2)"},
      {"with decisions", [](ReplayData& d) { d.accept = std::vector<bool>{true, true}; },
       "must not have 'moves/accept'"},
  };
  for (const Case& bad : cases) {
    SCOPED_TRACE(bad.what);
    ReplayData d = c.replay();
    bad.edit(d);
    write_replay(path("bad.h5"), d);
    try {
      (void)read_replay(path("bad.h5"));
      ADD_FAILURE() << "accepted";
    } catch (const ReplayError& error) {
      const std::string what = error.what();
      EXPECT_NE(what.find(bad.message), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
  }
}

TEST_F(Cycles, ExcitationCyclesMakeExactlySingularIntermediates) {
  WorkloadSpec spec;
  spec.kind = "excitation-cycles";
  spec.n = 12;
  spec.rank = 4;
  spec.shift = 1.0;  // every cycle of rank >= 2 shifts
  spec.seed = 3;
  auto workload = make_workload(spec);
  MatrixXd a = workload->initial_matrix();
  int shifted = 0;
  for (int i = 0; i < 40; ++i) {
    const std::vector<Move> cycle = workload->next_cycle(a);
    ASSERT_GE(cycle.size(), 1u);
    ASSERT_LE(cycle.size(), 4u);
    if (cycle.size() >= 2) {
      // The first replacement copies its left neighbour: exactly singular.
      ++shifted;
      EXPECT_EQ(cycle[0].column, a.col(cycle[0].k - 1));
    }
    for (const Move& m : cycle) a.col(m.k) = m.column;
  }
  EXPECT_GT(shifted, 0);
  EXPECT_LT(condition_1(a), 1e6);  // A_after stays a Gaussian matrix up to permutation
}

TEST_F(Cycles, ShippedCycleStudyRunsToCompletion) {
  const std::string study = std::string(SLATERLAB_SOURCE_DIR) + "/experiments/cycles.toml";
  const slaterlab::testing::CommandResult r = run("run " + study + " -q -o " + path("c.h5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ResultsFile f = read_results(path("c.h5"));
  ASSERT_FALSE(f.experiments.empty());
  for (const auto& e : f.experiments) {
    EXPECT_GT(e.strategies.at(0).summary->cycles, 0);
    const StrategySummary& splitting = *strategy(e, "splitting-double").summary;
    EXPECT_EQ(splitting.cycle_breakdowns, 0) << e.info.name;
    EXPECT_TRUE(std::isfinite(splitting.max_cycle_ratio_error)) << e.info.name;
    EXPECT_GT(strategy(e, "sm-double").summary->cycle_breakdowns, 0) << e.info.name;
  }
  EXPECT_NE(r.out.find("max cycle ratio error"), std::string::npos);
}

}  // namespace
}  // namespace slaterlab
