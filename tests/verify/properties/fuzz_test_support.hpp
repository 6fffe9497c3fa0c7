#pragma once
// What the tests of the fuzz engine, the corpus and `slaterlab fuzz` share:
// two strategies with a planted defect, registered with the factory by
// register_broken_strategies() (once per process; only in the tests), a
// fixture with the arguments of a small deterministic run, and bitwise
// equality of cases.

#include <memory>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "tests/verify/forwarding_updater.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/properties/case.hpp"
#include "verify/properties/fuzz_args.hpp"

namespace slaterlab::testing {

// Sherman-Morrison whose reported ratio is 1e-6 too large (relative): far
// outside the double error model (~1e-13 for these cases) at any N, so the
// shrunk counterexample is N = 1 with a single move.
class BrokenRatio final : public ForwardingUpdater {
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
class CycleSignSlip final : public ForwardingUpdater {
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

/// Registers "sm-broken" and "splitting-slip" (double); true once done.
inline bool register_broken_strategies() {
  static const bool registered = [] {
    register_strategy("sm-broken", {Precision::double_},
                      [](const UpdaterOptions& o) { return std::make_unique<BrokenRatio>(o); });
    StrategyTraits completes;
    completes.cycles = StrategyTraits::Cycles::whole;
    completes.events = strategy_traits("splitting").events;  // it splits as splitting does
    register_strategy("splitting-slip", {Precision::double_},
                      [](const UpdaterOptions& o) { return std::make_unique<CycleSignSlip>(o); },
                      completes);
    return true;
  }();
  return registered;
}

/// A scratch directory for the corpus, the broken strategies registered, and
/// args(): one strategy (name or label) on the randsvd workload, seed 11,
/// quiet, `cases` cases of N <= max_n, the corpus in the scratch directory.
class FuzzTest : public ScratchTest {
 protected:
  void SetUp() override {
    ScratchTest::SetUp();
    ASSERT_TRUE(register_broken_strategies());
  }
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
};

/// Bit for bit the same case (matrix, moves, decisions, probe, cycles).
inline bool same_case(const Case& a, const Case& b) {
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

}  // namespace slaterlab::testing
