// The workloads that walk electrons through orbitals (walk_workloads.hpp):
// the electron gas's Slater matrices checked against identities of its
// plane waves that hold at any positions, its refusals, and the registry
// taking a kind from outside the library.

#include "verify/inputs/walk_workloads.hpp"
#include "verify/inputs/workload_registry.hpp"

#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

WorkloadSpec gas(Eigen::Index n, const std::string& orbitals = "analytic") {
  WorkloadSpec s;
  s.kind = "electron-gas";
  s.n = n;
  s.seed = 17;
  s.rs = 2.0;
  s.delta = 0.3;
  s.orbitals = orbitals;
  return s;
}

// Every column of a plane-wave Slater matrix holds 1, and sqrt(2) cos(k.r),
// sqrt(2) sin(k.r) for each +-k pair: its squared norm is 1 + 2 (N - 1) / 2
// = N at every position. Each entry carries a few eps of rounding (the
// phase's and the sine's), so the sum of N squares is within 8 N eps of N.
void expect_plane_wave_columns(const Eigen::MatrixXd& a) {
  const double n = double(a.rows());
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    EXPECT_EQ(a(0, j), 1.0) << "column " << j;
    EXPECT_NEAR(a.col(j).squaredNorm(), n, 8 * n * kEps) << "column " << j;
  }
}

TEST(ElectronGasWorkload, ColumnsArePlaneWavesAtEveryPosition) {
  for (const Eigen::Index n : {1, 7, 19, 57}) {
    auto w = make_workload(gas(n));
    Eigen::MatrixXd a = w->initial_matrix();
    ASSERT_EQ(a.rows(), n);
    expect_plane_wave_columns(a);
    for (int m = 0; m < 3 * int(n); ++m) {
      const Move move = w->next_move(a);
      a.col(move.k) = move.column;  // forced: every proposal taken
    }
    expect_plane_wave_columns(a);
  }
}

// Small steps give ratios near 1: rho - 1 = grad(ln D) . dr to first order,
// with |grad phi| <= sqrt(2) |k| <= sqrt(2) k_max per orbital; over the walk
// the median |rho - 1| must be well below 1 for a step a tenth of the
// interparticle distance (a loose check that the proposals move the
// electron the proposal says, not a fresh random column).
TEST(ElectronGasWorkload, SmallStepsGiveRatiosNearOne) {
  WorkloadSpec s = gas(33);
  s.delta = 0.05 * s.rs;
  auto w = make_workload(s);
  Eigen::MatrixXd a = w->initial_matrix();
  std::vector<double> deviations;
  for (int m = 0; m < 200; ++m) {
    const Move move = w->next_move(a);
    const Eigen::VectorXd u = move.column - a.col(move.k);
    deviations.push_back(std::abs(Eigen::PartialPivLU<Eigen::MatrixXd>(a).solve(u)(move.k)));
    a.col(move.k) = move.column;
  }
  std::nth_element(deviations.begin(), deviations.begin() + 100, deviations.end());
  EXPECT_LT(deviations[100], 0.5);
}

TEST(ElectronGasWorkload, OpenShellIsRefusedNamingTheNearestClosedShells) {
  try {
    make_workload(gas(20));
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("19"), std::string::npos) << what;
    EXPECT_NE(what.find("27"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_THROW(make_workload(gas(7, "bspline-half")), std::invalid_argument);
  WorkloadSpec bad_rs = gas(7);
  bad_rs.rs = -1;
  EXPECT_THROW(make_workload(bad_rs), std::invalid_argument);
}

// The cell holds N_total = n (polarised) or 2n electrons at density rs:
// (4/3) pi rs^3 N_total = L^3.
TEST(ElectronGasWorkload, CellLengthHoldsTheDensity) {
  for (const bool polarised : {false, true}) {
    const double l = electron_gas_cell_length(27, 1.5, polarised);
    const double electrons = polarised ? 27 : 54;
    EXPECT_NEAR(4.0 / 3.0 * std::numbers::pi * std::pow(1.5, 3) * electrons, l * l * l,
                8 * kEps * l * l * l);
  }
}

// B-spline columns differ from the analytic ones by the interpolation error
// alone, so the same walk (same streams, same positions while the columns
// agree on the decisions) with bspline-double stays within the tricubic
// spline's value bound: sqrt(2) ((1 + e0)^3 - 1), e0 = 5/384 (k_max h)^4
// (Hall and Meyer's 1D bound along each axis, multiplied out as in
// tests/orbitals/electron_gas_orbitals_test.cpp, every k_d at its largest
// 2 pi n_max / L), plus double rounding far below it.
TEST(ElectronGasWorkload, BsplineColumnsFollowTheAnalyticWalk) {
  const WorkloadSpec s = gas(19);
  const double l = electron_gas_cell_length(s.n, s.rs, s.polarised);
  const BsplineBox box = gas_bspline_box(s.n, l);
  const double kh = 2 * std::numbers::pi * ElectronGasOrbitals(s.n, l).max_wave_number() / l *
                    box.spacing();
  const double e0 = 5.0 / 384.0 * std::pow(kh, 4);
  const double bound = std::numbers::sqrt2 * (std::pow(1 + e0, 3) - 1);
  auto exact = make_workload(s);
  auto spline = make_workload(gas(19, "bspline-double"));
  Eigen::MatrixXd a = exact->initial_matrix();
  Eigen::MatrixXd b = spline->initial_matrix();
  EXPECT_LT((a - b).cwiseAbs().maxCoeff(), bound);
  EXPECT_GT((a - b).cwiseAbs().maxCoeff(), 0.0);  // it is the spline
  for (int m = 0; m < 40; ++m) {
    const Move ma = exact->next_move(a);
    const Move mb = spline->next_move(b);
    ASSERT_EQ(ma.k, mb.k);
    EXPECT_LT((ma.column - mb.column).cwiseAbs().maxCoeff(), bound);
    a.col(ma.k) = ma.column;
    b.col(mb.k) = mb.column;
  }
}

// scheme = "qs": each sweep's accepted moves come as one update cycle of
// distinct electrons in increasing order, plane-wave columns all; with steps
// a hundredth of rs every |rho_j| is within a few percent of 1, so nearly
// every move is accepted (u < rho^2 fails only for u above ~0.95).
TEST(ElectronGasWorkload, QuasiSimultaneousSweepsComeAsCycles) {
  WorkloadSpec s = gas(19);
  s.scheme = "qs";
  s.delta = 0.01 * s.rs;
  auto w = make_workload(s);
  ASSERT_TRUE(w->cycles());
  Eigen::MatrixXd a = w->initial_matrix();
  std::size_t accepted = 0;
  for (int sweep = 0; sweep < 10; ++sweep) {
    const std::vector<Move> cycle = w->next_cycle(a);
    ASSERT_FALSE(cycle.empty());
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      if (i > 0) EXPECT_LT(cycle[i - 1].k, cycle[i].k);
      a.col(cycle[i].k) = cycle[i].column;
    }
    accepted += cycle.size();
    expect_plane_wave_columns(a);
  }
  EXPECT_GT(double(accepted), 0.8 * 10 * 19);
  WorkloadSpec bad = gas(19);
  bad.scheme = "simultaneous";
  EXPECT_THROW(make_workload(bad), std::invalid_argument);
}

// A kind from outside the library: registered once, built by make_workload
// like a built-in one, listed after them; names are not reused.
class ConstantWorkload final : public Workload {
 public:
  explicit ConstantWorkload(Eigen::Index n) : n_(n) {}
  std::string name() const override { return "test-constant"; }
  Eigen::MatrixXd initial_matrix() override { return Eigen::MatrixXd::Identity(n_, n_); }
  Move next_move(const Eigen::MatrixXd&) override { return {0, Eigen::VectorXd::Unit(n_, 0) * 2.0}; }
  std::vector<std::pair<std::string, std::string>> parameters() const override { return {}; }

 private:
  Eigen::Index n_;
};

TEST(WorkloadRegistry, AKindRegisteredOutsideTheLibraryIsBuiltAndListed) {
  register_workload({"test-constant",
                     [](const WorkloadSpec& s) { return std::make_unique<ConstantWorkload>(s.n); }});
  const auto kinds = known_workloads();
  EXPECT_EQ(kinds.back(), "test-constant");
  WorkloadSpec s;
  s.kind = "test-constant";
  s.n = 3;
  auto w = make_workload(s);
  EXPECT_EQ(w->name(), "test-constant");
  EXPECT_EQ(w->next_move(w->initial_matrix()).column(0), 2.0);
  s.rs = 0;  // the common fields are checked for every kind
  EXPECT_THROW(make_workload(s), std::invalid_argument);
  EXPECT_THROW(register_workload({"test-constant", [](const WorkloadSpec&) { return nullptr; }}),
               std::invalid_argument);
  EXPECT_THROW(register_workload({"gaussian", [](const WorkloadSpec&) { return nullptr; }}),
               std::invalid_argument);
  EXPECT_THROW(register_workload({"replay", [](const WorkloadSpec&) { return nullptr; }}),
               std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab
