// Tests of verify/inputs/workload.hpp: determinism, the electron orders, the
// singular flag, bad specs, and each kind's defining property.
//
// Statistical checks use 5 standard errors of the statistic (a correct
// workload fails one with probability < 6e-7 for a random seed) or a
// published tail bound with the failure probability stated. The seeds are
// fixed, so every test is deterministic; the margins say it does not pass by
// luck of the seed.

#include "verify/inputs/workload_registry.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kSigmas = 5.0;

// The electron gas takes closed shells only: its n is rounded up to one,
// so that every kind runs through the generic tests below.
WorkloadSpec spec(const std::string& kind, Eigen::Index n, std::uint64_t seed,
                  const std::string& order = "sweep") {
  WorkloadSpec s;
  s.kind = kind;
  s.n = n;
  if (kind == "electron-gas") {
    const auto shells = gas_closed_shells(2 * n + 64);
    s.n = *std::lower_bound(shells.begin(), shells.end(), n);
  }
  s.seed = seed;
  s.electron_order = order;
  return s;
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * std::size_t(a.size())) == 0;
}

// Singular values, largest first. BDCSVD: for n >= 16 its absolute error is
// a small multiple of eps ||A|| (measured 10 eps at n = 64); below that
// Eigen hands over to JacobiSVD, measured 0.5 n^1.5 eps ||A||.
Eigen::VectorXd singular_values(const Eigen::MatrixXd& a) {
  return Eigen::BDCSVD<Eigen::MatrixXd>(a).singularValues();
}

double cond2(const Eigen::MatrixXd& a) {
  const Eigen::VectorXd s = singular_values(a);
  return s(0) / s(s.size() - 1);
}

// Ratio det(A') / det(A) of a move minus 1, as (A^{-1} u)_k with u = a' - a_k:
// forming u first keeps the small difference accurate.
double ratio_minus_one(const Eigen::MatrixXd& a, const Move& m) {
  const Eigen::VectorXd u = m.column - a.col(m.k);
  return Eigen::PartialPivLU<Eigen::MatrixXd>(a).solve(u)(m.k);
}

// ---------------------------------------------------------------- factory

TEST(WorkloadFactory, KnownKindsBuildAndDescribeThemselves) {
  EXPECT_EQ(known_workloads(),
            (std::vector<std::string>{"gaussian", "randsvd", "small-step", "randsvd-step",
                                      "adversarial", "slater", "electron-gas"}));
  for (const auto& kind : known_workloads()) {
    auto w = make_workload(spec(kind, 6, 1));
    EXPECT_EQ(w->name(), kind);
    const auto p = w->parameters();
    const auto has = [&](const std::string& key) {
      return std::any_of(p.begin(), p.end(), [&](const auto& kv) { return kv.first == key; });
    };
    for (const char* key : {"kind", "n", "seed", "electron_order", "singular", "rng"}) {
      EXPECT_TRUE(has(key)) << kind << " lacks " << key;
    }
    const bool kind_keys = kind == "randsvd"      ? has("kappa") && has("mode")
                           : kind == "randsvd-step" ? has("kappa") && has("mode") && has("delta")
                           : kind == "small-step" ? has("delta")
                           : kind == "adversarial" ? has("eta") && has("chain") && has("hold")
                           : kind == "slater"      ? has("alpha") && has("delta")
                           : kind == "electron-gas" ? has("rs") && has("delta") && has("cell_length")
                                                   : true;
    EXPECT_TRUE(kind_keys) << kind;
  }
}

// randsvd-step starts from the randsvd matrix of the same seed and steps by
// delta times the column randsvd would propose: exactly, bit for bit (the
// same streams, one multiplication by delta = 0.5, a power of two).
TEST(WorkloadFactory, RandsvdStepStepsByTheRandsvdColumnLaw) {
  WorkloadSpec step_spec = spec("randsvd-step", 8, 11);
  step_spec.kappa = 1e12;
  step_spec.delta = 0.5;
  WorkloadSpec plain_spec = spec("randsvd", 8, 11);
  plain_spec.kappa = 1e12;
  auto step = make_workload(step_spec);
  auto plain = make_workload(plain_spec);
  Eigen::MatrixXd a = step->initial_matrix();
  EXPECT_TRUE(same_bits(a, plain->initial_matrix()));
  for (int i = 0; i < 20; ++i) {
    const Move m = step->next_move(a);
    const Move p = plain->next_move(a);
    ASSERT_EQ(m.k, p.k);
    const Eigen::VectorXd expected = a.col(m.k) + 0.5 * p.column;
    EXPECT_TRUE(same_bits(m.column, expected)) << "move " << i;
    a.col(m.k) = m.column;
  }
}

// "burst" moves one random electron four times in a row; the electrons of
// the bursts are the ones "random" draws for its first moves.
TEST(WorkloadFactory, BurstOrderMovesEachDrawnElectronFourTimes) {
  auto burst = make_workload(spec("gaussian", 9, 5, "burst"));
  auto random = make_workload(spec("gaussian", 9, 5, "random"));
  Eigen::MatrixXd a = burst->initial_matrix();
  const Eigen::MatrixXd b = random->initial_matrix();
  for (int j = 0; j < 6; ++j) {
    const Eigen::Index drawn = random->next_move(b).k;
    for (int r = 0; r < 4; ++r) EXPECT_EQ(burst->next_move(a).k, drawn) << "burst " << j;
  }
}

// The slater workload follows its walker: an accepted proposal (the current
// matrix holds the proposed column) moves the electron, a rejected one does
// not, so the next proposal of that electron starts from a different place.
TEST(SlaterWorkload, FollowsAcceptedMovesOnly) {
  WorkloadSpec s = spec("slater", 1, 7);
  s.alpha = 1.0;
  s.delta = 0.7;
  auto accepted = make_workload(s), rejected = make_workload(s);
  const Eigen::MatrixXd a0 = accepted->initial_matrix();
  ASSERT_EQ(a0, rejected->initial_matrix());
  // N = 1: the one orbital is (alpha/pi)^(3/4) exp(-alpha r^2 / 2), in (0, 0.4240].
  const double peak = std::pow(1.0 / std::acos(-1.0), 0.75);
  EXPECT_GT(a0(0, 0), 0.0);
  EXPECT_LE(a0(0, 0), peak);
  const Move m1 = accepted->next_move(a0);
  ASSERT_EQ(m1.column, rejected->next_move(a0).column);
  const Eigen::MatrixXd a1 = m1.column;  // the proposal was accepted
  const Move after_accept = accepted->next_move(a1);
  const Move after_reject = rejected->next_move(a0);
  EXPECT_NE(after_accept.column, after_reject.column);
  EXPECT_GT(after_accept.column(0), 0.0);
  EXPECT_LE(after_accept.column(0), peak);
}

TEST(WorkloadFactory, ParametersRoundTripDoubles) {
  WorkloadSpec s = spec("randsvd", 4, 3);
  s.kappa = 1.0 / 3.0e-9;
  const auto p = make_workload(s)->parameters();
  const auto it =
      std::find_if(p.begin(), p.end(), [](const auto& kv) { return kv.first == "kappa"; });
  ASSERT_NE(it, p.end());
  EXPECT_EQ(std::stod(it->second), s.kappa);
}

struct BadSpec {
  WorkloadSpec spec;
  std::string must_mention;
};

TEST(WorkloadFactory, BadSpecsThrowOneLineNamingTheValue) {
  const auto with = [](auto edit) {
    WorkloadSpec s = spec("randsvd", 8, 1);
    edit(s);
    return s;
  };
  const std::vector<BadSpec> cases = {
      {with([](WorkloadSpec& s) { s.kind = "gauss"; }), "'gauss'"},
      {with([](WorkloadSpec& s) { s.n = 0; }), "got 0"},
      {with([](WorkloadSpec& s) { s.n = -3; }), "got -3"},
      {with([](WorkloadSpec& s) { s.kappa = 0.5; }), "0.5"},
      {with([](WorkloadSpec& s) { s.kappa = std::nan(""); }), "kappa"},
      {with([](WorkloadSpec& s) { s.kappa = std::numeric_limits<double>::infinity(); }), "kappa"},
      {with([](WorkloadSpec& s) { s.mode = "log-uniform"; }), "'log-uniform'"},
      {with([](WorkloadSpec& s) { s.delta = 0.0; }), "delta"},
      {with([](WorkloadSpec& s) { s.delta = -0.1; }), "-0.1"},
      {with([](WorkloadSpec& s) { s.eta = 0.0; }), "eta"},
      {with([](WorkloadSpec& s) { s.eta = -1e-6; }), "-1e-06"},
      {with([](WorkloadSpec& s) { s.electron_order = "backwards"; }), "'backwards'"},
      {with([](WorkloadSpec& s) { s.chain = 0; }), "chain"},
      {with([](WorkloadSpec& s) { s.hold = -1; }), "hold"},
      {with([](WorkloadSpec& s) { s.kind = "adversarial"; s.n = 3; }), "needs n >= 4"},
      {with([](WorkloadSpec& s) { s.kind = "adversarial"; s.n = 2; s.hold = 0; s.chain = 2; }),
       "needs n >= 3"},
  };
  for (const auto& c : cases) {
    try {
      make_workload(c.spec);
      ADD_FAILURE() << "no throw for a spec that should mention " << c.must_mention;
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(c.must_mention), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  // An unknown kind lists the valid ones.
  try {
    make_workload(spec("nope", 4, 1));
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    for (const auto& kind : known_workloads()) {
      EXPECT_NE(std::string(e.what()).find(kind), std::string::npos) << e.what();
    }
  }
  // Adversarial with n = chain + 1 and no hold moves is the smallest legal one.
  WorkloadSpec smallest = spec("adversarial", 2, 1);
  smallest.chain = 1;
  smallest.hold = 0;
  EXPECT_NO_THROW(make_workload(smallest));
}

TEST(WorkloadFactory, CallOrderAndShapeAreChecked) {
  auto w = make_workload(spec("gaussian", 4, 1));
  EXPECT_THROW(w->next_move(Eigen::MatrixXd::Identity(4, 4)), std::logic_error);
  const Eigen::MatrixXd a = w->initial_matrix();
  EXPECT_TRUE(same_bits(w->initial_matrix(), a));  // idempotent
  EXPECT_THROW(w->next_move(Eigen::MatrixXd::Identity(3, 4)), std::invalid_argument);
}

// ------------------------------------------------------------ determinism

// Runs `moves` proposals with every move accepted; returns the matrices and moves.
struct Trace {
  Eigen::MatrixXd initial;
  std::vector<Move> moves;
  Eigen::MatrixXd final_matrix;
};

Trace run_forced(const WorkloadSpec& s, int moves) {
  auto w = make_workload(s);
  Trace t{w->initial_matrix(), {}, {}};
  Eigen::MatrixXd a = t.initial;
  for (int i = 0; i < moves; ++i) {
    t.moves.push_back(w->next_move(a));
    a.col(t.moves.back().k) = t.moves.back().column;
  }
  t.final_matrix = a;
  return t;
}

TEST(WorkloadDeterminism, SameSpecSameBits) {
  for (const auto& kind : known_workloads()) {
    for (const std::string order : {"sweep", "random"}) {
      for (const bool singular : {false, true}) {
        WorkloadSpec s = spec(kind, 9, 12345, order);
        s.singular = singular;
        const Trace a = run_forced(s, 40);
        const Trace b = run_forced(s, 40);
        ASSERT_TRUE(same_bits(a.initial, b.initial)) << kind << " " << order;
        for (std::size_t i = 0; i < a.moves.size(); ++i) {
          ASSERT_EQ(a.moves[i].k, b.moves[i].k) << kind << " " << order << " move " << i;
          ASSERT_TRUE(same_bits(a.moves[i].column, b.moves[i].column)) << kind << " move " << i;
        }
        s.seed += 1;
        EXPECT_FALSE(same_bits(a.initial, run_forced(s, 0).initial)) << kind;
      }
    }
  }
}

TEST(WorkloadDeterminism, InitialMatrixDoesNotDependOnElectronOrder) {
  for (const auto& kind : known_workloads()) {
    EXPECT_TRUE(same_bits(run_forced(spec(kind, 7, 5, "sweep"), 0).initial,
                          run_forced(spec(kind, 7, 5, "random"), 0).initial))
        << kind;
  }
}

// Any kind, size, seed and order: proposals are well formed and replayable.
RC_GTEST_PROP(WorkloadProperty, MovesAreWellFormedAndReproducible, ()) {
  const auto kinds = known_workloads();
  const auto kind = *rc::gen::elementOf(kinds);
  const auto order = *rc::gen::element<std::string>("sweep", "random");
  const Eigen::Index n = *rc::gen::inRange<Eigen::Index>(kind == "adversarial" ? 4 : 1, 13);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const WorkloadSpec s = spec(kind, n, seed, order);
  const Trace a = run_forced(s, int(3 * s.n));
  const Trace b = run_forced(s, int(3 * s.n));
  RC_ASSERT(a.initial.allFinite());
  for (std::size_t i = 0; i < a.moves.size(); ++i) {
    RC_ASSERT(a.moves[i].k >= 0 && a.moves[i].k < s.n);
    RC_ASSERT(a.moves[i].column.size() == s.n);
    RC_ASSERT(a.moves[i].column.allFinite());
    RC_ASSERT(a.moves[i].k == b.moves[i].k);
    RC_ASSERT(same_bits(a.moves[i].column, b.moves[i].column));
  }
}

// --------------------------------------------------------- electron order

TEST(WorkloadOrder, SweepMovesElectronsInTurn) {
  for (const std::string kind : {"gaussian", "randsvd", "small-step"}) {
    const Trace t = run_forced(spec(kind, 5, 2), 17);
    for (std::size_t i = 0; i < t.moves.size(); ++i) EXPECT_EQ(t.moves[i].k, Eigen::Index(i % 5));
  }
}

TEST(WorkloadOrder, RandomOrderIsUniform) {
  // Each count is Binomial(moves, 1/n).
  constexpr int kMoves = 4000;
  constexpr Eigen::Index kN = 8;
  for (const std::string kind : {"gaussian", "randsvd", "small-step"}) {
    const Trace t = run_forced(spec(kind, kN, 3, "random"), kMoves);
    std::vector<int> counts(kN, 0);
    for (const auto& m : t.moves) ++counts[std::size_t(m.k)];
    const double p = 1.0 / kN;
    for (const int c : counts) {
      EXPECT_NEAR(c, kMoves * p, kSigmas * std::sqrt(kMoves * p * (1 - p))) << kind;
    }
  }
}

// ---------------------------------------------------------------- singular

TEST(WorkloadSingular, LastColumnCopiesTheFirst) {
  for (const auto& kind : known_workloads()) {
    WorkloadSpec s = spec(kind, 6, 8);
    s.singular = true;
    const Eigen::MatrixXd a = make_workload(s)->initial_matrix();
    const Eigen::Index last = a.cols() - 1;
    EXPECT_TRUE(same_bits(a.col(last), a.col(0))) << kind;
    s.singular = false;
    EXPECT_FALSE(same_bits(make_workload(s)->initial_matrix().col(last), a.col(0))) << kind;
  }
  WorkloadSpec one = spec("gaussian", 1, 8);
  one.singular = true;
  EXPECT_EQ(make_workload(one)->initial_matrix()(0, 0), 0.0);
}

// ---------------------------------------------------------------- gaussian

TEST(WorkloadGaussian, EntriesAreStandardNormal) {
  // n^2 = 4096 iid N(0,1) entries: the mean has standard error 1/64, the
  // mean square sqrt(2/4096).
  constexpr Eigen::Index kN = 64;
  const Eigen::MatrixXd a = make_workload(spec("gaussian", kN, 4))->initial_matrix();
  const double m = double(kN * kN);
  EXPECT_NEAR(a.mean(), 0.0, kSigmas / std::sqrt(m));
  EXPECT_NEAR(a.squaredNorm() / m, 1.0, kSigmas * std::sqrt(2.0 / m));
}

// ----------------------------------------------------------------- randsvd

TEST(WorkloadRandsvd, SingularValueModesMatchDlatms) {
  const double kappa = 1e6;
  const auto geo = randsvd_singular_values(5, kappa, "geometric");
  const auto ari = randsvd_singular_values(5, kappa, "arithmetic");
  const auto small = randsvd_singular_values(5, kappa, "clustered-small");
  const auto large = randsvd_singular_values(5, kappa, "clustered-large");
  for (Eigen::Index i = 0; i < 5; ++i) {
    // One rounding in pow and one in the arithmetic: 4 eps relative is ample.
    EXPECT_NEAR(geo(i), std::pow(10.0, -6.0 * double(i) / 4.0), 4 * kEps * geo(i));
    EXPECT_NEAR(ari(i), 1.0 - double(i) / 4.0 * (1.0 - 1e-6), 4 * kEps);
    EXPECT_EQ(small(i), i == 0 ? 1.0 : 1.0 / kappa);
    EXPECT_EQ(large(i), i == 4 ? 1.0 / kappa : 1.0);
  }
  for (const auto& mode : known_randsvd_modes()) {
    const auto s = randsvd_singular_values(7, kappa, mode);
    EXPECT_EQ(s(0), 1.0) << mode;
    EXPECT_EQ(s(6), 1.0 / kappa) << mode;
    for (Eigen::Index i = 1; i < 7; ++i) EXPECT_LE(s(i), s(i - 1)) << mode;
    EXPECT_EQ(randsvd_singular_values(1, kappa, mode), Eigen::VectorXd::Ones(1)) << mode;
  }
  EXPECT_THROW(randsvd_singular_values(4, 0.9, "geometric"), std::invalid_argument);
  EXPECT_THROW(randsvd_singular_values(4, 10, "mode-5"), std::invalid_argument);
}

TEST(WorkloadRandsvd, SingularValuesAreThePrescribedOnes) {
  // A = fl(fl(U Sigma) V^T). Its singular values differ from sigma by
  // (i) the non-orthogonality of U and V, a multiplicative perturbation of
  //     at most (||U^T U - I|| + ||V^T V - I||) / 2 <= n eps relative
  //     (random_matrices_test: IsOrthogonalToRounding), and
  // (ii) rounding in the product: each entry of the GEMM is off by at most
  //     gamma_n sigma_max ||u_i|| ||v_j|| ~ n eps sigma_max, of random sign,
  //     so ||E||_2 ~ sqrt(n) eps sigma_max (worst case n^2 eps);
  // measured together: <= 6 eps sigma_max at n = 64. The instrument, BDCSVD,
  // adds its own absolute error, measured <= 0.2 n eps sigma_max for n >= 16
  // and <= 1.1 n eps for the n <= 5 it hands to JacobiSVD. Weyl's theorem
  // turns both into |sigma_i(computed) - sigma_i| <= 2 n eps sigma_max, which
  // for kappa = 1e12 still pins sigma_min = 1e-12 to 3% at n = 64.
  for (const Eigen::Index n : {1, 2, 5, 24, 64}) {
    for (const double kappa : {1.0, 1e4, 1e8, 1e12}) {
      for (const auto& mode : known_randsvd_modes()) {
        WorkloadSpec s = spec("randsvd", n, 40 + std::uint64_t(n));
        s.kappa = kappa;
        s.mode = mode;
        const Eigen::VectorXd got = singular_values(make_workload(s)->initial_matrix());
        const Eigen::VectorXd want = randsvd_singular_values(n, kappa, mode);
        const double tolerance = 2.0 * double(n) * kEps * want(0);
        EXPECT_LE((got - want).cwiseAbs().maxCoeff(), tolerance)
            << "n " << n << " kappa " << kappa << " " << mode;
      }
    }
  }
}

TEST(WorkloadRandsvd, ConditioningStaysNearKappaOverSweeps) {
  // A' = U Sigma W, W = V^T with replaced columns g / sqrt(n), so
  //   kappa ||row_1 W|| / ||row_n W|| <= cond_2(A') <= kappa cond_2(W).
  // Lower bound, checked after every move: rows of W have norms near 1
  // (sums of n terms of mean 1/n); a ratio below 1/100 has probability far
  // below 1e-20 at n = 24 (an F(24, 24) variate below 1e-4).
  // Upper bound, checked at the end of each sweep, where every column has
  // been replaced and W is an n x n Gaussian matrix of variance 1/n,
  // independent of the previous sweep's: Azais & Wschebor (2005) bound
  // P(cond(W) > x n) < 5.60 / x. With x = 1e4 each check fails with
  // probability < 5.6e-4, the 12 checks here < 0.7% (union bound). The
  // median of the 12 values of cond / (kappa n) exceeds 100 only if 6 of
  // them exceed it, each with probability < 0.056: < 924 * 0.056^6 = 3e-5.
  // (Mid-sweep, a few nearly dependent columns can appear at any move with
  // the same 1/x tail, which is why the maximum is not checked per move.)
  constexpr Eigen::Index kN = 24;
  constexpr double kKappa = 1e6;
  std::vector<double> ends;
  for (const auto& mode : known_randsvd_modes()) {
    WorkloadSpec s = spec("randsvd", kN, 77);
    s.kappa = kKappa;
    s.mode = mode;
    auto w = make_workload(s);
    Eigen::MatrixXd a = w->initial_matrix();
    for (Eigen::Index move = 1; move <= 3 * kN; ++move) {
      const Move m = w->next_move(a);
      a.col(m.k) = m.column;
      const double c = cond2(a);
      ASSERT_GE(c, kKappa / 100) << mode << " move " << move;
      if (move % kN == 0) {
        EXPECT_LE(c, 1e4 * kN * kKappa) << mode << " sweep " << move / kN;
        ends.push_back(c / (kN * kKappa));
      }
    }
  }
  std::nth_element(ends.begin(), ends.begin() + long(ends.size() / 2), ends.end());
  EXPECT_LE(ends[ends.size() / 2], 100.0);
}

TEST(WorkloadRandsvd, RatiosAreOrderOneWhateverKappa) {
  // rho = e_k^T W^{-1} g / sqrt(n): U and Sigma cancel, so ratios do not
  // scale with kappa. Same seed, two kappas: U, V and g are the same and
  // only Sigma differs, so the ratios are equal in exact arithmetic; in
  // double they differ by LU rounding amplified by cond(A) ~ 1e10 n (up to
  // ~1e-2 relative for the worst ratios). Their medians, and an O(1) size,
  // are checked within a factor 3.
  std::vector<double> medians;
  for (const double kappa : {1e2, 1e10}) {
    WorkloadSpec s = spec("randsvd", 16, 9);
    s.kappa = kappa;
    auto w = make_workload(s);
    Eigen::MatrixXd a = w->initial_matrix();
    std::vector<double> r;
    for (int i = 0; i < 32; ++i) {
      const Move m = w->next_move(a);
      r.push_back(std::abs(1.0 + ratio_minus_one(a, m)));
      a.col(m.k) = m.column;
    }
    std::nth_element(r.begin(), r.begin() + 16, r.end());
    medians.push_back(r[16]);
  }
  EXPECT_GT(medians[0], 0.05);
  EXPECT_LT(medians[0], 20.0);
  EXPECT_NEAR(std::log(medians[1] / medians[0]), 0.0, std::log(3.0));
}

// -------------------------------------------------------------- small-step

TEST(WorkloadSmallStep, RatioMinusOneIsDeltaTimesCauchy) {
  // First move of a fresh workload: a_k is an N(0,1) column independent of
  // the others, so with r_k = row k of A^{-1} = n_k / (n_k . a_k) (n_k the
  // unit normal to the other columns), rho - 1 = delta r_k . g =
  // delta (n_k . g) / (n_k . a_k) = delta z / z', z and z' independent
  // N(0,1): delta times a standard Cauchy variate, whatever n. Hence
  // P(|rho - 1| <= delta) = 1/2 and P(|rho - 1| <= 10 delta) = (2/pi) atan 10,
  // at n = 8 and at n = 64 alike: |rho - 1| does not grow like delta sqrt(n).
  // Each fraction over independent seeds is binomial.
  const double delta = 0.05;
  for (const auto& [n, seeds] : {std::pair<Eigen::Index, int>{8, 1000}, {64, 400}}) {
    int within_1 = 0, within_10 = 0;
    for (int seed = 0; seed < seeds; ++seed) {
      WorkloadSpec s = spec("small-step", n, std::uint64_t(seed));
      s.delta = delta;
      auto w = make_workload(s);
      const Eigen::MatrixXd a = w->initial_matrix();
      const double x = std::abs(ratio_minus_one(a, w->next_move(a))) / delta;
      within_1 += x <= 1.0;
      within_10 += x <= 10.0;
    }
    const double m = seeds;
    const double p10 = 2.0 / std::numbers::pi * std::atan(10.0);
    EXPECT_NEAR(within_1 / m, 0.5, kSigmas * std::sqrt(0.25 / m)) << "n " << n;
    EXPECT_NEAR(within_10 / m, p10, kSigmas * std::sqrt(p10 * (1 - p10) / m)) << "n " << n;
  }
}

TEST(WorkloadSmallStep, StepIsDeltaTimesGaussianFromTheCurrentColumn) {
  // a' - a_k = delta g with g ~ N(0,1): over one sweep of n = 32 the
  // n^2 = 1024 entries of (a' - a_k) / delta have mean square 1 within 5
  // standard errors sqrt(2 / 1024). a' is built from `current`, so a
  // perturbed current matrix moves the proposal with it.
  constexpr Eigen::Index kN = 32;
  WorkloadSpec s = spec("small-step", kN, 6);
  s.delta = 1e-3;
  auto w = make_workload(s);
  Eigen::MatrixXd a = w->initial_matrix();
  double sum_sq = 0.0;
  for (Eigen::Index i = 0; i < kN; ++i) {
    const Move m = w->next_move(a);
    sum_sq += ((m.column - a.col(m.k)) / s.delta).squaredNorm();
    a.col(m.k) = m.column;
  }
  EXPECT_NEAR(sum_sq / double(kN * kN), 1.0, kSigmas * std::sqrt(2.0 / double(kN * kN)));
  Eigen::MatrixXd shifted = a;
  shifted.col(0).array() += 100.0;
  const Move m = w->next_move(shifted);
  ASSERT_EQ(m.k, 0);
  EXPECT_GT(m.column.minCoeff(), 90.0);
}

// ------------------------------------------------------------- adversarial

TEST(WorkloadAdversarial, SweepLayoutOfTheCycles) {
  // n = 8, chain 2, hold 2: cycle q uses c_i = (3q + i) mod 8; moves are
  // collapse c_1, c_2; hold on the next two columns; release c_2, c_1.
  const Trace t = run_forced(spec("adversarial", 8, 1), 18);
  const std::vector<Eigen::Index> expected = {1, 2, 3, 4, 2, 1, 4, 5, 6, 7, 5, 4, 7, 0, 1, 2, 0, 7};
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(t.moves[i].k, expected[i]) << i;
}

TEST(WorkloadAdversarial, CollapseReleaseCycles) {
  // Per cycle (chain 2, hold 2, eta 1e-6, forced acceptance):
  // (a) collapse t: a' = a_j + w, w = eta ||a_j|| g/||g||, j = c_{t-1}, and
  //     rho = r . a' = r . w (r = row k of A^{-1}, r . a_j = 0). Against a
  //     typical ratio tau = ||r|| ||a'|| / sqrt(n) (the RMS ratio of a column
  //     of that norm in a random direction), rho / (eta tau) = sqrt(n) cos
  //     theta (1 + O(eta)), theta the angle between r and the random g:
  //     at most sqrt(n) in size (Cauchy-Schwarz; the computed r, accurate to
  //     about n eps cond(A) relative, cond(A) ~ 1 / eta, and w, accurate to
  //     eps / eta, leave kSlack = 64 n eps / eta of slack, 64 covering the
  //     norms' and dot products' roundings), and about |N(0,1)| in law,
  //     median 0.67.
  //     So the ratios sit within a factor ~10 of eta times a typical ratio:
  //     the median over the 40 collapses lies in [0.1, 10] (it falls below
  //     0.1 only if 20 of 40 do, each with probability ~0.08: < 1e-10).
  // (b) after the collapses and holds, A (e_{c_1} - e_{c_0}) = w_1 with
  //     ||w_1|| = eta ||a_{c_0}|| <= eta ||A||, so cond_2(A) >= sqrt(2) / eta
  //     (the SVD's absolute error, ~n eps ||A||, is n eps / eta of
  //     sigma_min here, within kSlack).
  // (c) after a full cycle every touched column is a fresh N(0,1) column, so
  //     A is again an iid Gaussian matrix: Azais & Wschebor's
  //     P(cond > x n) < 5.60 / x with x = 1e4 gives < 5.6e-4 per check,
  //     < 1.2% for the 20 checks (union bound, valid though consecutive
  //     cycle ends are correlated); 1e4 n = 1.2e5 is still 10x below (b).
  constexpr Eigen::Index kN = 12;
  constexpr int kCycles = 10;
  const double eta = 1e-6;
  const double kSlack = 64 * double(kN) * kEps / eta;  // (a) and (b) above
  std::vector<double> scaled;
  for (const std::string order : {"sweep", "random"}) {
    WorkloadSpec s = spec("adversarial", kN, 2718, order);
    s.eta = eta;
    auto w = make_workload(s);
    Eigen::MatrixXd a = w->initial_matrix();
    for (int cycle = 0; cycle < kCycles; ++cycle) {
      for (int p = 0; p < 6; ++p) {
        const Move m = w->next_move(a);
        if (p < 2) {
          // Find the anchor: the other column the new one is eta-close to.
          Eigen::Index j = -1;
          double best = std::numeric_limits<double>::infinity();
          for (Eigen::Index c = 0; c < kN; ++c) {
            const double d = (m.column - a.col(c)).norm() / a.col(c).norm();
            if (c != m.k && d < best) {
              best = d;
              j = c;
            }
          }
          EXPECT_NEAR(best, eta, kSlack * eta) << order << " cycle " << cycle;
          const Eigen::VectorXd r = a.inverse().row(m.k).transpose();
          const double rho = r.dot(m.column - a.col(j));
          const double tau = r.norm() * m.column.norm() / std::sqrt(double(kN));
          const double x = std::abs(rho) / (eta * tau);
          EXPECT_LE(x, std::sqrt(double(kN)) * (1 + kSlack)) << order << " cycle " << cycle;
          scaled.push_back(x);
        }
        a.col(m.k) = m.column;
        if (p == 3) {
          EXPECT_GE(cond2(a), std::sqrt(2.0) / eta * (1 - kSlack)) << order << " cycle " << cycle;
        }
      }
      EXPECT_LE(cond2(a), 1e4 * double(kN)) << order << " cycle " << cycle;
    }
  }
  std::nth_element(scaled.begin(), scaled.begin() + long(scaled.size() / 2), scaled.end());
  const double median = scaled[scaled.size() / 2];
  EXPECT_GE(median, 0.1);
  EXPECT_LE(median, 10.0);
}

TEST(WorkloadAdversarial, RandomLayoutKeepsRolesApart) {
  // Random order: in each cycle the collapse targets, their anchors and the
  // hold columns are distinct roles: a hold column is never in the chain,
  // and the two releases move the two collapsed columns in reverse order.
  const Trace t = run_forced(spec("adversarial", 7, 99, "random"), 6 * 50);
  for (std::size_t c = 0; c + 6 <= t.moves.size(); c += 6) {
    const Eigen::Index c1 = t.moves[c].k, c2 = t.moves[c + 1].k;
    EXPECT_NE(c1, c2);
    for (const std::size_t h : {c + 2, c + 3}) {
      EXPECT_NE(t.moves[h].k, c1);
      EXPECT_NE(t.moves[h].k, c2);
    }
    EXPECT_EQ(t.moves[c + 4].k, c2);
    EXPECT_EQ(t.moves[c + 5].k, c1);
  }
}

}  // namespace
}  // namespace slaterlab
