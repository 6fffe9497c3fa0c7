// apply_cycle: the default (ratio() + accept() per update) and the
// strategies that complete a cycle through an exactly singular intermediate
// matrix (splitting by deferred halves, delayed as one Woodbury update).
#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/delayed_window.hpp"
#include "slaterlab/strategies/determinant/determinant_updater.hpp"
#include "slaterlab/strategies/determinant/splitting.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab {
namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kEps = std::numeric_limits<double>::epsilon();

MatrixXd gaussian(Index rows, Index cols, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  MatrixXd m(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i) m(i, j) = normal(engine);
  return m;
}

double condition_1(const MatrixXd& a) {
  const auto norm_1 = [](const MatrixXd& m) { return m.cwiseAbs().colwise().sum().maxCoeff(); };
  return norm_1(a) * norm_1(a.inverse());
}

/// det(after) / det(before) from two long double LUs.
long double exact_ratio(const MatrixXd& before, const MatrixXd& after) {
  using LongMatrix = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
  const long double b = Eigen::PartialPivLU<LongMatrix>(before.cast<long double>()).determinant();
  const long double a = Eigen::PartialPivLU<LongMatrix>(after.cast<long double>()).determinant();
  return a / b;
}

std::unique_ptr<DeterminantUpdater> make(const std::string& name) {
  UpdaterOptions o;
  o.k = 4;
  return make_updater(name, o);
}

TEST(DefaultCycle, IsRatioAndAcceptPerUpdateBitForBit) {
  const Index n = 10;
  const MatrixXd a = gaussian(n, n, 1);
  const MatrixXd fresh = gaussian(n, 3, 2);
  std::vector<ColumnUpdate> cycle;
  for (Index i = 0; i < 3; ++i) cycle.push_back({2 + 3 * i, fresh.col(i)});
  auto whole = make("sm"), stepwise = make("sm");
  whole->reset(a);
  stepwise->reset(a);
  const CycleRatio r = whole->apply_cycle(cycle);
  double product = 1.0;
  ASSERT_EQ(r.per_update.size(), cycle.size());
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const Ratio step = stepwise->ratio(cycle[i].k, cycle[i].column);
    stepwise->accept();
    EXPECT_EQ(r.per_update[i].value, step.value);
    product *= step.value;
  }
  EXPECT_EQ(r.value, product);
  EXPECT_FALSE(r.breakdown);
  EXPECT_EQ(*whole->maintained().inverse, *stepwise->maintained().inverse);
}

/// Orbitals p..p+m-1 shifted by one with a fresh one inserted at p, in the
/// order an expansion writes them: every intermediate matrix has two equal
/// columns.
struct ShiftCycle {
  MatrixXd before, after;
  std::vector<ColumnUpdate> updates;
  ShiftCycle(Index n, Index p, Index m, unsigned seed) : before(gaussian(n, n, seed)) {
    const VectorXd fresh = gaussian(n, 1, seed + 1000).col(0);
    for (Index t = 1; t < m; ++t) updates.push_back({p + t, before.col(p + t - 1)});
    updates.push_back({p, fresh});
    after = before;
    for (const ColumnUpdate& u : updates) after.col(u.k) = u.column;
  }
};

// Splitting and delayed complete the cycle without a breakdown. Tolerance:
// each strategy forms the ratio from rows of a backward-stable inverse
// (relative error N eps kappa_1 per row-column product) combined over at
// most 2 m products (splitting: m pieces and at most m deferred halves;
// delayed: det of the m x m B = W^T A', m kappa_1(B) times its entries'
// error), with kappa the largest kappa_1 of A_before and A_after: 2 m N eps
// kappa kappa_1(B). B = W^T A' is formed here in double to take its
// condition number (its own error is of the same first order).
TEST(CycleThroughSingular, SplittingAndDelayedCompleteTheCycle) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const Index n = 12, m = 2 + Index(seed % 3), p = Index(seed % 7);
    const ShiftCycle c(n, p, m, seed);
    const long double exact = exact_ratio(c.before, c.after);
    MatrixXd b(m, m);
    const MatrixXd inverse = c.before.inverse();
    for (Index j = 0; j < m; ++j)
      for (Index i = 0; i < m; ++i) b(j, i) = inverse.row(c.updates[std::size_t(j)].k).dot(c.updates[std::size_t(i)].column);
    const double kappa = std::max(condition_1(c.before), condition_1(c.after));
    const double tolerance = 2 * double(m) * double(n) * kEps * kappa * condition_1(b);
    for (const char* name : {"splitting", "delayed"}) {
      SCOPED_TRACE(std::string(name) + " seed " + std::to_string(seed));
      auto s = make(name);
      s->reset(c.before);
      const CycleRatio r = s->apply_cycle(c.updates);
      EXPECT_FALSE(r.breakdown);
      EXPECT_LE(std::abs((long double)r.value - exact) / std::abs(exact), tolerance);
      // The state continues from A_after: its log|det| is A_after's.
      const MatrixXd x = *s->maintained().inverse;
      EXPECT_LE((c.after * x - MatrixXd::Identity(n, n)).cwiseAbs().maxCoeff(),
                2 * double(m) * double(n) * kEps * kappa * condition_1(b));
    }
  }
}

// A cycle that starts with a piece queued by an earlier move (a split
// near-singular move, column 3 nearly a copy of column 2): the cycle's ratio
// divides by det S of that queue (det A = det A_app det S). Same tolerance
// model as above with m = 3 (the queued piece is applied in the cycle) and
// kappa over A_before (the near-singular matrix) and A_after.
TEST(CycleThroughSingular, SplittingCycleStartingWithAQueuedPiece) {
  const Index n = 8;
  const MatrixXd a0 = gaussian(n, n, 7);
  const VectorXd nearly_copy = a0.col(2) + 1e-6 * gaussian(n, 1, 8).col(0);
  auto s = make("splitting");
  s->reset(a0);
  s->ratio(3, nearly_copy);
  s->accept();
  ASSERT_EQ(s->counters().event(kSplitEvent), 1);
  MatrixXd before = a0;
  before.col(3) = nearly_copy;
  const MatrixXd fresh = gaussian(n, 2, 9);
  const std::vector<ColumnUpdate> cycle = {{3, fresh.col(0)}, {6, fresh.col(1)}};
  MatrixXd after = before;
  after.col(3) = fresh.col(0);
  after.col(6) = fresh.col(1);
  const CycleRatio r = s->apply_cycle(cycle);
  EXPECT_FALSE(r.breakdown);
  const long double exact = exact_ratio(before, after);
  const double kappa = std::max(condition_1(before), condition_1(after));
  EXPECT_LE(std::abs((long double)r.value - exact) / std::abs(exact), 2 * 3 * double(n) * kEps * kappa);
}

// sm meets the singular intermediate: a breakdown in the cycle or the
// documented SingularMatrixError from its refactorisation; never a NaN.
TEST(CycleThroughSingular, ShermanMorrisonReportsABreakdownNeverNaN) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const ShiftCycle c(12, Index(seed % 7), 2 + Index(seed % 3), seed);
    auto s = make("sm");
    s->reset(c.before);
    try {
      const CycleRatio r = s->apply_cycle(c.updates);
      EXPECT_TRUE(r.breakdown) << "seed " << seed;
      EXPECT_TRUE(std::isfinite(r.value)) << "seed " << seed;
    } catch (const SingularMatrixError&) {
    }
  }
}

// Plain excitation cycles (fresh columns, every intermediate regular) on an
// iid Gaussian walk, long enough to pass near-singular states (kappa_1 up to
// 1e5 at N = 21) and release them. Delayed applies each cycle as one
// Woodbury update; the bound is its growth guard's, the nightly's
// delayed_within_guard_of_sm: F = kGrowthFactor sqrt(K + 1) times sm's error
// at the same state (the guard keeps each row the update forms within
// kGrowthFactor of one rounding of it, and sm's row carries up to one
// rounding per update since its last release, K + 1 of random sign), with
// sm's error floored at N eps (one backward-stable rounding of a row of N
// terms). Measured, for the inverse (relative Frobenius distance to the long
// double inverse) and for log|det|: at most 0.24 F. Without the guard's
// decisions on cycles, Woodbury updates that released a near-singular state
// kept its rounding: up to 23 F (inverse) and 16 F (log|det|).
// log|det| is a running sum of log|rho| over every update, each carrying up
// to N eps of rounding of random sign: its error is a random walk of scale
// N eps sqrt(u) after u updates, and sm's walk can pass near 0 at a state
// where delayed's does not, so sm's log|det| error is floored at that scale
// (N eps alone failed at 1.1 F where sm's walk crossed 0 on an AMD EPYC
// with OpenBLAS's Haswell kernels).
TEST(PlainCycles, DelayedStaysWithinTheGuardOfSm) {
  using LongMatrix = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
  const Index n = 21, rank = 16;
  UpdaterOptions o;
  o.k = 16;
  const double factor = DelayedWindowUpdater::kGrowthFactor * std::sqrt(double(o.k) + 1);
  const double floor = double(n) * kEps;
  for (unsigned seed = 1; seed <= 3; ++seed) {
    std::mt19937_64 engine(seed);
    std::normal_distribution<double> normal;
    MatrixXd a(n, n);
    for (Index j = 0; j < n; ++j)
      for (Index i = 0; i < n; ++i) a(i, j) = normal(engine);
    auto sm = make_updater("sm", o), delayed = make_updater("delayed", o);
    sm->reset(a);
    delayed->reset(a);
    double updates = 0;
    for (int c = 0; c < 300; ++c) {
      const Index m = 1 + Index(engine() % std::uint64_t(rank));
      updates += double(m);
      const Index p = Index(engine() % std::uint64_t(n - m + 1));
      std::vector<ColumnUpdate> cycle;
      for (Index t = 0; t < m; ++t) {
        VectorXd column(n);
        for (Index i = 0; i < n; ++i) column(i) = normal(engine);
        cycle.push_back({p + t, column});
        a.col(p + t) = column;
      }
      (void)sm->apply_cycle(cycle);
      (void)delayed->apply_cycle(cycle);
      const Eigen::PartialPivLU<LongMatrix> lu(a.cast<long double>());
      const LongMatrix exact = lu.inverse();
      const long double exact_log = std::log(std::abs(lu.determinant()));
      const auto divergence = [&](const DeterminantUpdater& s) {
        return double((s.maintained().inverse->cast<long double>() - exact).norm() / exact.norm());
      };
      const auto log_det_error = [&](const DeterminantUpdater& s) {
        return double(std::abs((long double)s.log_det().log_abs - exact_log));
      };
      SCOPED_TRACE("seed " + std::to_string(seed) + " cycle " + std::to_string(c));
      ASSERT_LE(divergence(*delayed), factor * std::max(divergence(*sm), floor));
      ASSERT_LE(log_det_error(*delayed),
                factor * std::max(log_det_error(*sm), floor * std::sqrt(updates)));
    }
  }
}

}  // namespace
}  // namespace slaterlab
