// Delayed (rank-K Sherman-Morrison-Woodbury) updates: agreement with sm, the
// two look-ahead variants, repeated electrons inside one window, flushing,
// observation without side effects, breakdowns.
//
// Error budget (every tolerance below comes from it; first order in the unit
// roundoff u of the storage precision). A run visits exact matrices A_0 (at
// reset), A_1, ... (one per accepted move); the strategy holds X_l ~ A_l^{-1}.
// 1. Rounding committed at step l -> l+1 (an sm rank-1 step, or one bordering
//    step of a delayed window plus its share of the flush GEMMs) is a matrix
//    R_l with
//      ||R_l|| <= 2 W u G^4 [2 M (1 + c) + M^2 s],
//    W = N + K the longest accumulation (length-N dots, GEMM inner size
//    m <= K), M the largest ||A_i^{-1}||_2 within the last K matrices (a
//    window is rounded against its base inverse, at most K steps back; K = 1
//    for sm), s = ||a'|| + ||a_k|| >= ||u||, and c = M s / |rho| the
//    condition number of the ratio (an error in rho, or in Ainv a' - e_k when
//    a' ~ a_k, is magnified by the division by rho). G = 1 + M ||U||_F, U the
//    window's earlier moves (the last K - 1 accepted; G = 1 for sm), bounds
//    the Woodbury matrices: B^{-1} = I - V^T A^{-1} U, so ||B^{-1}|| <= G and
//    ||B|| <= G likewise. A bordering step rounds t = B^{-1} b and
//    q = B^{-T} c (each <= G M s) and divides t q^T by rho; carried back
//    through Ainv U (<= G) and V^T Ainv (<= M) this is at most the sm-step
//    term times G^4. The initial inverse (getrf + getri):
//    ||R_0|| <= N u kappa_0 ||A_0^{-1}||.
// 2. Propagation. Every update maps X = (A + D)^{-1} exactly to
//    (A' + D)^{-1}: a backward error D is carried unchanged. R_l is the
//    backward error A_l R_l A_l, which at a later step J is the forward error
//    (A_J^{-1} A_l) R_l (A_l A_J^{-1}), so
//      ||X_J - A_J^{-1}|| <= E_J = sum_l g_lJ^2 ||R_l||,
//      g_lJ = ||A_J^{-1} A_l||_2 <= 1 + ||A_J^{-1}||_2 ||A_l - A_J||_F.
// 3. A ratio e_k^T X_J a' is then off by at most E_J ||a'|| plus its own
//    rounding, 2 W u M s G^2 (the look-ahead c^T B^{-1} b rounds terms of
//    size |c| |B^{-1}| |b| <= M s G^2: the capacitance-matrix growth that
//    makes Woodbury look-aheads less accurate than sm as the window fills);
//    two computations compared: twice the sum. A log-determinant adds
//    |d rho| / |rho| per accepted move; an LU log-determinant is off by at
//    most N^2 u kappa (the strategy's at reset, and the double reference).
// All norms and condition numbers are computed from the exact double
// matrices of the scenario (JacobiSVD), so a budget follows the conditioning
// a sequence actually reaches. They are worst-case norm bounds, derived and
// never tuned; over a few thousand random moves the largest observed
// difference was about 5% of its budget.

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <Eigen/LU>
#include <Eigen/SVD>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "strategies/determinant/delayed_update.hpp"
#include "strategies/determinant/linalg.hpp"
#include "strategies/determinant/updater_options.hpp"

namespace slaterlab {
namespace {

struct Move {
  Eigen::Index k;
  Eigen::VectorXd column;
  bool accept;
};

struct Scenario {
  Eigen::MatrixXd a0;
  std::vector<Move> moves;
};

Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = normal(rng);
  return m;
}

/// Iid Gaussian data from a seed; electron = raw % N, accepted when decision != 0.
Scenario make_scenario(int n, const std::vector<std::pair<int, int>>& steps,
                       std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Scenario s{gaussian(n, n, rng), {}};
  for (const auto& [raw, decision] : steps) {
    s.moves.push_back({Eigen::Index(raw % n), gaussian(n, 1, rng).col(0), decision != 0});
  }
  return s;
}

struct Drawn {
  int n;
  int k;
  Scenario scenario;
};

/// Draws, in this order (RapidCheck shrinks earlier draws first): the size N
/// (towards 1), then the delay K (towards 1; up to 2 max_n + 2, so K >= N is
/// common), then the move sequence (towards short, electron 0, rejected),
/// then the data seed. Electrons are drawn raw and reduced mod N, so a
/// sequence stays valid while N shrinks; with N small the same electron
/// moves repeatedly inside a window.
Drawn draw(int max_n, int max_moves) {
  const int n = *rc::gen::inRange(1, max_n + 1);
  const int k = *rc::gen::inRange(1, 2 * max_n + 3);
  // Element draws at full size: RapidCheck scales inRange by the size.
  const int count = *rc::gen::inRange(0, max_moves + 1);
  const auto steps = *rc::gen::container<std::vector<std::pair<int, int>>>(
      std::size_t(count),
      rc::gen::resize(100, rc::gen::pair(rc::gen::inRange(0, 1 << 16), rc::gen::inRange(0, 4))));
  const auto seed = *rc::gen::arbitrary<std::uint32_t>();
  return {n, k, make_scenario(n, steps, seed)};
}

Eigen::VectorXd singular_values(const Eigen::MatrixXd& a) {
  return Eigen::JacobiSVD<Eigen::MatrixXd>(a).singularValues();
}

/// First-order error budget of a scenario (see the file comment), per move.
struct Budget {
  std::vector<double> ratio_tol;    // |rho_a - rho_b| at move j (two computations)
  std::vector<double> inverse_tol;  // ||X - A^{-1}||_2 / ||A^{-1}||_2 after move j
  std::vector<double> log_det_tol;  // |log|det| difference| after move j (vs a double LU)
  std::vector<Eigen::MatrixXd> matrix_after;
  bool sign_reliable = true;  // no accepted ratio within its tolerance of 0
  // The same three after reset, for an empty sequence.
  double inverse_tol0 = 0.0;
  double log_det_tol0 = 0.0;
  Eigen::MatrixXd a0;

  double final_inverse_tol() const { return inverse_tol.empty() ? inverse_tol0 : inverse_tol.back(); }
  double final_log_det_tol() const { return log_det_tol.empty() ? log_det_tol0 : log_det_tol.back(); }
  const Eigen::MatrixXd& final_matrix() const {
    return matrix_after.empty() ? a0 : matrix_after.back();
  }
};

/// `window`: the longest stretch of steps rounded against one base inverse
/// (K for delayed, 1 for sm; the larger of the two strategies compared).
Budget error_budget(const Scenario& s, double u, int window) {
  const Eigen::Index n = s.a0.rows();
  const double width = double(n + window);  // longest accumulation: dots (N), GEMM (m <= K)
  const double u_double = std::numeric_limits<double>::epsilon();

  struct Visited {
    Eigen::MatrixXd a;
    double inv_norm;  // ||A_l^{-1}||_2
    double kappa;
  };
  std::vector<Visited> visited;
  std::vector<double> local;  // R_l: rounding committed in the step that produced A_l
  std::vector<double> u_norms;  // ||u|| of every accepted move
  auto visit = [&](const Eigen::MatrixXd& a) {
    const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(a).singularValues();
    visited.push_back({a, 1.0 / sv(n - 1), sv(0) / sv(n - 1)});
  };
  // M: the largest inverse met within the window (the base of a delayed
  // window is at most `window` steps back).
  auto window_max = [&](std::size_t last) {
    double m = 0.0;
    for (std::size_t l = last + 1 > std::size_t(window) ? last + 1 - std::size_t(window) : 0;
         l <= last; ++l)
      m = std::max(m, visited[l].inv_norm);
    return m;
  };
  // G = 1 + M ||U||_F over the window's earlier moves (the last window - 1
  // accepted): ||B^{-1}|| = ||I - V^T A^{-1} U|| <= G, ||B|| <= G likewise.
  auto window_growth = [&](double m) {
    double sum2 = 0.0;
    const std::size_t count = std::min(u_norms.size(), std::size_t(window - 1));
    for (std::size_t i = u_norms.size() - count; i < u_norms.size(); ++i) sum2 += u_norms[i] * u_norms[i];
    return 1.0 + m * std::sqrt(sum2);
  };
  // E_J <= sum_l ||A_J^{-1} A_l||^2 R_l, with ||A_J^{-1} A_l||_2 <= 1 + ||A_J^{-1}|| ||A_l - A_J||_F.
  auto inverse_error = [&]() {
    const Visited& cur = visited.back();
    double e = 0.0;
    for (std::size_t l = 0; l < visited.size(); ++l) {
      const double g = 1.0 + cur.inv_norm * (visited[l].a - cur.a).norm();
      e += g * g * local[l];
    }
    return e;
  };

  visit(s.a0);
  local.push_back(double(n) * u * visited[0].kappa * visited[0].inv_norm);  // LU inverse
  double error = inverse_error();
  // The strategy's LU log-determinant at reset (and at a refactorisation of
  // the current matrix) is off by at most N^2 u kappa, as the reference's.
  const double nn = double(n * n);
  double log_det_tol = nn * u * visited[0].kappa;
  Budget b;
  b.inverse_tol0 = 2.0 * error / visited[0].inv_norm;
  b.log_det_tol0 = log_det_tol + nn * u_double * visited[0].kappa;
  b.a0 = s.a0;
  for (const Move& mv : s.moves) {
    const Eigen::MatrixXd cur = visited.back().a;  // a copy: visit() grows `visited`
    const double m = window_max(visited.size() - 1);
    const double size = mv.column.norm() + cur.col(mv.k).norm();  // ||a'|| + ||a_k|| >= ||u||
    // Two computations, each: inverse error times ||a'|| plus the rounding of
    // the ratio's own accumulations (terms of size M (||a'|| + ||a_k||)).
    const double g = window_growth(m);
    const double tol = 2.0 * (error * mv.column.norm() + 2.0 * width * u * m * size * g * g);
    b.ratio_tol.push_back(tol);
    if (mv.accept) {
      Eigen::MatrixXd next = cur;
      next.col(mv.k) = mv.column;
      const double rho = cur.partialPivLu().solve(mv.column)(mv.k);
      log_det_tol += tol / std::abs(rho);  // d log|rho| = d rho / rho, first order
      if (tol >= 0.5 * std::abs(rho)) b.sign_reliable = false;
      visit(next);
      const double m_step = window_max(visited.size() - 1);
      const double c = m_step * size / std::abs(rho);  // condition of the ratio
      const double g4 = std::pow(window_growth(m_step), 4);
      local.push_back(2.0 * width * u * g4 * (2.0 * m_step * (1.0 + c) + m_step * m_step * size));
      u_norms.push_back((mv.column - cur.col(mv.k)).norm());
      error = inverse_error();
    }
    const Visited& now = visited.back();
    b.inverse_tol.push_back(2.0 * error / now.inv_norm);
    // LU log-determinants: |tr(A^{-1} dA)| <= N ||A^{-1}|| N u ||A||.
    b.log_det_tol.push_back(log_det_tol + nn * (u + u_double) * now.kappa);
    b.matrix_after.push_back(now.a);
  }
  return b;
}

struct RunResult {
  std::vector<double> ratios;
  std::vector<bool> breakdowns;
};

RunResult run(DeterminantUpdater& s, const Scenario& sc, bool observe = false) {
  RunResult r;
  s.reset(sc.a0);
  for (const Move& mv : sc.moves) {
    const Ratio rho = s.ratio(mv.k, mv.column);
    r.ratios.push_back(rho.value);
    r.breakdowns.push_back(rho.breakdown);
    if (observe) (void)s.maintained();
    if (mv.accept) {
      s.accept();
    } else {
      s.reject();
    }
    if (observe) (void)s.maintained();
  }
  return r;
}

UpdaterOptions options_for(Precision p, int k = 16, std::string variant = {}) {
  UpdaterOptions o;
  o.precision = p;
  o.k = k;
  o.variant = std::move(variant);
  return o;
}

/// Accepted moves still in the window, whatever the instantiation.
Eigen::Index pending_moves(const DeterminantUpdater& s) {
  if (auto* d = dynamic_cast<const DelayedUpdate<double, double>*>(&s)) return d->pending_moves();
  if (auto* f = dynamic_cast<const DelayedUpdate<float, float>*>(&s)) return f->pending_moves();
  if (auto* m = dynamic_cast<const DelayedUpdate<float, double>*>(&s)) return m->pending_moves();
  return -1;
}

bool bit_identical(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * std::size_t(a.size())) == 0;
}

bool bit_identical(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Ratios of two runs agree move by move within the budget.
void assert_ratios_agree(const RunResult& a, const RunResult& b, const Budget& budget) {
  RC_ASSERT(a.ratios.size() == b.ratios.size());
  for (std::size_t j = 0; j < a.ratios.size(); ++j) {
    const double diff = std::abs(a.ratios[j] - b.ratios[j]);
    if (!(diff <= budget.ratio_tol[j])) {
      RC_LOG() << "move " << j << ": " << a.ratios[j] << " vs " << b.ratios[j] << ", |diff| "
               << diff << " > tol " << budget.ratio_tol[j] << "\n";
    }
    RC_ASSERT(diff <= budget.ratio_tol[j]);
  }
}

void check_matches_sm(Precision p, const std::string& variant) {
  const Drawn d = draw(12, 40);
  const auto delayed = make_updater("delayed", options_for(p, d.k, variant));
  const auto sm = make_updater("sm", options_for(p));
  const Budget budget = error_budget(d.scenario, storage_epsilon(p), d.k);
  assert_ratios_agree(run(*delayed, d.scenario), run(*sm, d.scenario), budget);
}

RC_GTEST_PROP(DelayedUpdate, RatiosMatchShermanMorrisonDouble, ()) {
  check_matches_sm(Precision::double_, "incremental");
}
RC_GTEST_PROP(DelayedUpdate, RatiosMatchShermanMorrisonFloat, ()) {
  check_matches_sm(Precision::single, "incremental");
}
RC_GTEST_PROP(DelayedUpdate, RatiosMatchShermanMorrisonMixed, ()) {
  check_matches_sm(Precision::mixed, "incremental");
}
RC_GTEST_PROP(DelayedUpdate, NaiveRatiosMatchShermanMorrisonDouble, ()) {
  check_matches_sm(Precision::double_, "naive");
}

void check_naive_matches_incremental(Precision p) {
  const Drawn d = draw(12, 40);
  const auto incremental = make_updater("delayed", options_for(p, d.k, "incremental"));
  const auto naive = make_updater("delayed", options_for(p, d.k, "naive"));
  const Budget budget = error_budget(d.scenario, storage_epsilon(p), d.k);
  assert_ratios_agree(run(*incremental, d.scenario), run(*naive, d.scenario), budget);
}

RC_GTEST_PROP(DelayedUpdate, NaiveMatchesIncrementalDouble, ()) {
  check_naive_matches_incremental(Precision::double_);
}
RC_GTEST_PROP(DelayedUpdate, NaiveMatchesIncrementalFloat, ()) {
  check_naive_matches_incremental(Precision::single);
}

void check_k_one_is_sm(Precision p) {
  const Drawn d = draw(12, 40);
  const auto delayed = make_updater("delayed", options_for(p, 1));
  const auto sm = make_updater("sm", options_for(p));
  const Budget budget = error_budget(d.scenario, storage_epsilon(p), d.k);
  assert_ratios_agree(run(*delayed, d.scenario), run(*sm, d.scenario), budget);
  // Every accepted move is flushed at once: no window is ever left open.
  std::int64_t accepted = 0;
  for (const Move& mv : d.scenario.moves) accepted += mv.accept;
  const auto c = delayed->counters();
  RC_ASSERT(c.flushes + c.recomputes == accepted);
  // log|det| from the same per-move ratios (each within its budget).
  const LogDet ld = delayed->log_det();
  const LogDet ls = sm->log_det();
  RC_ASSERT(std::abs(ld.log_abs - ls.log_abs) <= budget.final_log_det_tol());
  if (budget.sign_reliable) RC_ASSERT(ld.sign == ls.sign);
}

RC_GTEST_PROP(DelayedUpdate, KOneBehavesAsShermanMorrisonDouble, ()) {
  check_k_one_is_sm(Precision::double_);
}
RC_GTEST_PROP(DelayedUpdate, KOneBehavesAsShermanMorrisonFloat, ()) {
  check_k_one_is_sm(Precision::single);
}

RC_GTEST_PROP(DelayedUpdate, ObservingDoesNotChangeTheNumerics, ()) {
  const Drawn d = draw(12, 40);
  const Precision p = *rc::gen::element(Precision::single, Precision::double_, Precision::mixed);
  const std::string variant = *rc::gen::element<std::string>("incremental", "naive");
  const auto plain = make_updater("delayed", options_for(p, d.k, variant));
  const auto observed = make_updater("delayed", options_for(p, d.k, variant));
  const RunResult a = run(*plain, d.scenario);
  const RunResult b = run(*observed, d.scenario, /*observe=*/true);
  for (std::size_t j = 0; j < a.ratios.size(); ++j) RC_ASSERT(bit_identical(a.ratios[j], b.ratios[j]));
  RC_ASSERT(bit_identical(plain->log_det().log_abs, observed->log_det().log_abs));
  RC_ASSERT(bit_identical(*plain->maintained().inverse, *observed->maintained().inverse));
}

void check_flush_matches_fresh_lu(Precision p, const std::string& variant) {
  const Drawn d = draw(12, 40);
  const auto delayed = make_updater("delayed", options_for(p, d.k, variant));
  const Budget budget = error_budget(d.scenario, storage_epsilon(p), d.k);
  run(*delayed, d.scenario);
  delayed->flush();
  RC_ASSERT(pending_moves(*delayed) == 0);

  const auto lu = lu_factor<double>(budget.final_matrix());
  const Eigen::MatrixXd fresh = lu_inverse<double>(lu);
  const Eigen::MatrixXd x = *delayed->maintained().inverse;
  const double rel = singular_values(x - fresh)(0) / singular_values(fresh)(0);
  if (!(rel <= budget.final_inverse_tol())) RC_LOG() << "inverse " << rel << " > " << budget.final_inverse_tol();
  RC_ASSERT(rel <= budget.final_inverse_tol());
  const LogDet ld = delayed->log_det();
  RC_ASSERT(std::abs(ld.log_abs - lu.log_det.log_abs) <= budget.final_log_det_tol());
  if (budget.sign_reliable) RC_ASSERT(ld.sign == lu.log_det.sign);
}

RC_GTEST_PROP(DelayedUpdate, FlushMatchesFreshFactorisationDouble, ()) {
  check_flush_matches_fresh_lu(Precision::double_, "incremental");
}
RC_GTEST_PROP(DelayedUpdate, FlushMatchesFreshFactorisationNaiveDouble, ()) {
  check_flush_matches_fresh_lu(Precision::double_, "naive");
}
RC_GTEST_PROP(DelayedUpdate, FlushMatchesFreshFactorisationFloat, ()) {
  check_flush_matches_fresh_lu(Precision::single, "incremental");
}
RC_GTEST_PROP(DelayedUpdate, FlushMatchesFreshFactorisationMixed, ()) {
  check_flush_matches_fresh_lu(Precision::mixed, "incremental");
}

RC_GTEST_PROP(DelayedUpdate, RejectedSequenceLeavesStateBitIdentical, ()) {
  const Drawn d = draw(12, 20);
  const Precision p = *rc::gen::element(Precision::single, Precision::double_, Precision::mixed);
  const std::string variant = *rc::gen::element<std::string>("incremental", "naive");
  const auto delayed = make_updater("delayed", options_for(p, d.k, variant));
  run(*delayed, d.scenario);  // leaves a window of some length open
  const LogDet before = delayed->log_det();
  const Eigen::MatrixXd inverse_before = *delayed->maintained().inverse;
  std::mt19937_64 rng(d.scenario.moves.size());
  for (int j = 0; j < 3 * d.n; ++j) {
    (void)delayed->ratio(j % d.n, gaussian(d.n, 1, rng).col(0));
    delayed->reject();
  }
  RC_ASSERT(bit_identical(before.log_abs, delayed->log_det().log_abs));
  RC_ASSERT(before.sign == delayed->log_det().sign);
  RC_ASSERT(bit_identical(inverse_before, *delayed->maintained().inverse));
}

// --- deterministic cases ---------------------------------------------------

/// Reference ratio (A^{-1} a')_k from a double LU solve: a backward-stable
/// computation, itself within one strategy's budget.
double reference_ratio(const Eigen::MatrixXd& a, Eigen::Index k, const Eigen::VectorXd& column) {
  return a.partialPivLu().solve(column)(k);
}

TEST(DelayedUpdate, SameElectronMovingRepeatedlyInsideOneWindow) {
  // Electron 2 moves four times, interleaved with others, all inside one
  // window of K = 8: V holds e_2 four times and each u is taken against the
  // column as already changed by the window.
  std::mt19937_64 rng(7);
  const Eigen::Index n = 5;
  Scenario s{gaussian(n, n, rng), {}};
  for (const Eigen::Index k : {2, 2, 0, 2, 4, 2, 0}) s.moves.push_back({k, gaussian(n, 1, rng).col(0), true});
  const Budget budget = error_budget(s, storage_epsilon(Precision::double_), 8);

  for (const char* variant : {"incremental", "naive"}) {
    SCOPED_TRACE(variant);
    const auto delayed = make_updater("delayed", options_for(Precision::double_, 8, variant));
    delayed->reset(s.a0);
    Eigen::MatrixXd a = s.a0;
    for (std::size_t j = 0; j < s.moves.size(); ++j) {
      const Move& mv = s.moves[j];
      const double want = reference_ratio(a, mv.k, mv.column);
      const Ratio got = delayed->ratio(mv.k, mv.column);
      EXPECT_FALSE(got.breakdown);
      // Two computations (strategy, LU reference): the pairwise budget.
      EXPECT_NEAR(got.value, want, budget.ratio_tol[j]) << "move " << j;
      delayed->accept();
      a.col(mv.k) = mv.column;
    }
    EXPECT_EQ(pending_moves(*delayed), 7);
    EXPECT_EQ(delayed->counters().flushes, 0);
    const Eigen::MatrixXd fresh = lu_inverse<double>(lu_factor<double>(a));
    const double rel = singular_values(*delayed->maintained().inverse - fresh)(0) /
                       singular_values(fresh)(0);
    EXPECT_LE(rel, budget.final_inverse_tol());
  }
}

TEST(DelayedUpdate, WindowFlushesAfterKAcceptedMovesOnly) {
  std::mt19937_64 rng(11);
  const Eigen::Index n = 6;
  const auto delayed = make_updater("delayed", options_for(Precision::double_, 3));
  delayed->reset(gaussian(n, n, rng));
  int accepted = 0;
  for (int j = 0; j < 20; ++j) {
    (void)delayed->ratio(j % n, gaussian(n, 1, rng).col(0));
    if (j % 3 == 1) {  // rejections neither fill the window nor flush it
      delayed->reject();
    } else {
      delayed->accept();
      ++accepted;
    }
    EXPECT_EQ(pending_moves(*delayed), accepted % 3);
    EXPECT_EQ(delayed->counters().flushes, accepted / 3);
  }
  delayed->flush();
  EXPECT_EQ(pending_moves(*delayed), 0);
  EXPECT_EQ(delayed->counters().flushes, accepted / 3 + (accepted % 3 != 0));
  delayed->flush();  // nothing pending: no flush counted
  EXPECT_EQ(delayed->counters().flushes, accepted / 3 + (accepted % 3 != 0));
}

TEST(DelayedUpdate, FlushBetweenRatioAndDecisionIsAProtocolError) {
  std::mt19937_64 rng(3);
  const auto delayed = make_updater("delayed", options_for(Precision::double_, 4));
  delayed->reset(gaussian(4, 4, rng));
  (void)delayed->ratio(1, gaussian(4, 1, rng).col(0));
  EXPECT_THROW(delayed->flush(), ProtocolError);
  delayed->reject();
  EXPECT_NO_THROW(delayed->flush());
}

/// A window of two accepted moves, then a proposal making column k equal to
/// column j: det(A') = 0 exactly. The computed ratio is rounding only, within
/// the one-strategy budget, so a threshold at that budget must report it.
void check_exactly_singular_is_breakdown(Precision p, const std::string& variant) {
  std::mt19937_64 rng(5);
  const Eigen::Index n = 6;
  Scenario s{gaussian(n, n, rng), {}};
  s.moves.push_back({1, gaussian(n, 1, rng).col(0), true});
  s.moves.push_back({3, gaussian(n, 1, rng).col(0), true});
  Eigen::MatrixXd a = s.a0;
  for (const Move& mv : s.moves) a.col(mv.k) = mv.column;
  s.moves.push_back({1, a.col(4), false});
  const Budget budget = error_budget(s, storage_epsilon(p), 4);

  UpdaterOptions o = options_for(p, 4, variant);
  o.breakdown = 0.5 * budget.ratio_tol.back();
  const auto delayed = make_updater("delayed", o);
  const RunResult r = run(*delayed, s);
  EXPECT_TRUE(r.breakdowns.back()) << "ratio " << r.ratios.back() << ", threshold " << o.breakdown;
  EXPECT_TRUE(std::isfinite(r.ratios.back()));
  EXPECT_GE(delayed->counters().breakdowns, 1);
}

TEST(DelayedUpdate, ExactlySingularProposalIsABreakdown) {
  for (const Precision p : {Precision::single, Precision::double_, Precision::mixed}) {
    for (const char* variant : {"incremental", "naive"}) {
      SCOPED_TRACE(std::string(to_string(p)) + " " + variant);
      check_exactly_singular_is_breakdown(p, variant);
    }
  }
}

TEST(DelayedUpdate, AcceptedBreakdownDiscardsTheWindowAndRefactorises) {
  // With a window of two moves open, a proposal close to column 4 has
  // |rho| ~ 1e-6 (below the threshold 1e-3): accepting it must discard the
  // window and refactorise the exact matrix, bit for bit as a fresh
  // factorisation does.
  std::mt19937_64 rng(13);
  const Eigen::Index n = 5;
  UpdaterOptions o = options_for(Precision::double_, 4);
  o.breakdown = 1e-3;
  const auto delayed = make_updater("delayed", o);
  Eigen::MatrixXd a = gaussian(n, n, rng);
  delayed->reset(a);
  for (const Eigen::Index k : {0, 3}) {
    const Eigen::VectorXd c = gaussian(n, 1, rng).col(0);
    ASSERT_FALSE(delayed->ratio(k, c).breakdown);
    delayed->accept();
    a.col(k) = c;
  }
  ASSERT_EQ(pending_moves(*delayed), 2);
  const Eigen::VectorXd c = a.col(4) + 1e-6 * gaussian(n, 1, rng).col(0);
  ASSERT_TRUE(delayed->ratio(2, c).breakdown);
  delayed->accept();
  a.col(2) = c;
  EXPECT_EQ(delayed->counters().recomputes, 1);
  EXPECT_EQ(delayed->counters().flushes, 0);
  EXPECT_EQ(pending_moves(*delayed), 0);
  const Inversion<double> fresh = invert<double, double>(a);
  EXPECT_TRUE(bit_identical(*delayed->maintained().inverse, fresh.inverse));
  EXPECT_TRUE(bit_identical(delayed->log_det().log_abs, fresh.log_det.log_abs));
}

TEST(DelayedUpdate, RecomputeEveryCountsAcceptedMovesAndDiscardsTheWindow) {
  std::mt19937_64 rng(17);
  const Eigen::Index n = 6;
  UpdaterOptions o = options_for(Precision::mixed, 4);
  o.recompute_every = 3;
  const auto delayed = make_updater("delayed", o);
  Eigen::MatrixXd a = gaussian(n, n, rng);
  delayed->reset(a);
  for (int j = 0; j < 3; ++j) {
    const Eigen::VectorXd c = gaussian(n, 1, rng).col(0);
    (void)delayed->ratio(j, c);
    delayed->reject();  // rejections do not count
    (void)delayed->ratio(j, c);
    delayed->accept();
    a.col(j) = c;
  }
  EXPECT_EQ(delayed->counters().recomputes, 1);
  EXPECT_EQ(delayed->counters().flushes, 0);
  EXPECT_EQ(pending_moves(*delayed), 0);
  const Inversion<float> fresh = invert<float, double>(a);  // mixed: inverted in double
  EXPECT_TRUE(bit_identical(*delayed->maintained().inverse, fresh.inverse.cast<double>()));
  EXPECT_TRUE(bit_identical(delayed->log_det().log_abs, fresh.log_det.log_abs));
}

TEST(DelayedUpdate, KLargerThanNWorks) {
  std::mt19937_64 rng(19);
  const Eigen::Index n = 3;
  Scenario s{gaussian(n, n, rng), {}};
  for (int j = 0; j < 12; ++j) s.moves.push_back({j % n, gaussian(n, 1, rng).col(0), true});
  const Budget budget = error_budget(s, storage_epsilon(Precision::double_), 50);
  const auto delayed = make_updater("delayed", options_for(Precision::double_, 50));
  const auto sm = make_updater("sm", options_for(Precision::double_));
  const RunResult a = run(*delayed, s);
  const RunResult b = run(*sm, s);
  for (std::size_t j = 0; j < a.ratios.size(); ++j)
    EXPECT_NEAR(a.ratios[j], b.ratios[j], budget.ratio_tol[j]) << "move " << j;
  EXPECT_EQ(pending_moves(*delayed), 12);
}

TEST(DelayedUpdate, LabelsNameDelayPrecisionAndNonDefaultVariant) {
  EXPECT_EQ(make_updater("delayed", options_for(Precision::double_, 16))->label(),
            "delayed-16-double");
  EXPECT_EQ(make_updater("delayed", options_for(Precision::single, 64, "naive"))->label(),
            "delayed-64-float-naive");
  EXPECT_EQ(make_updater("delayed", options_for(Precision::mixed, 8, "incremental"))->label(),
            "delayed-8-mixed");
  EXPECT_THROW(make_updater("delayed", options_for(Precision::double_, 8, "eager")),
               std::invalid_argument);
}

}  // namespace
}  // namespace slaterlab
