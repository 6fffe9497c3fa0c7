#pragma once
// Support shared by the update-strategy tests (delayed_update_test,
// splitting_test): scenarios of moves, Gaussian data, the first-order error
// budget every tolerance of those tests comes from, and runs compared move by
// move.
//
// Error budget (first order in the unit roundoff u of the storage precision).
// A run visits exact matrices A_0 (at reset), A_1, ... (one per accepted
// move); the strategy holds X_l ~ A_l^{-1}.
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
// never tuned; over a few thousand random moves of delayed_update_test the
// largest observed difference was about 5% of its budget.

#include <rapidcheck.h>

#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab::testing {

/// A proposal: column k replaced by `column`, then accepted or rejected.
struct Move {
  Eigen::Index k;
  Eigen::VectorXd column;
  bool accept;
};

/// A reset matrix and the moves proposed after it.
struct Scenario {
  Eigen::MatrixXd a0;
  std::vector<Move> moves;
};

/// Iid standard normal entries, column by column from one distribution.
/// The tests' fixed-seed scenarios depend on this exact order of draws.
inline Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = normal(rng);
  return m;
}

/// A Gaussian column: the same draws as gaussian(n, 1, rng).
inline Eigen::VectorXd gaussian_vector(Eigen::Index n, std::mt19937_64& rng) {
  return gaussian(n, 1, rng).col(0);
}

inline Eigen::VectorXd singular_values(const Eigen::MatrixXd& a) {
  return Eigen::JacobiSVD<Eigen::MatrixXd>(a).singularValues();
}

/// ||x - ref||_2 / ||ref||_2, the measure the budget's inverse_tol bounds.
inline double relative_error_2norm(const Eigen::MatrixXd& x, const Eigen::MatrixXd& ref) {
  return singular_values(x - ref)(0) / singular_values(ref)(0);
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
inline Budget error_budget(const Scenario& s, double u, int window) {
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

/// What a run reports per move.
struct RunResult {
  std::vector<double> ratios;
  std::vector<bool> breakdowns;
};

/// Resets `s` to the scenario's matrix and plays its moves. `observe` reads
/// the maintained state around every decision (a read must not change the
/// numerics).
inline RunResult run(DeterminantUpdater& s, const Scenario& sc, bool observe = false) {
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

/// The defaults of k and variant are UpdaterOptions' own, so options_for(p)
/// is the factory default at precision p.
inline UpdaterOptions options_for(Precision p, int k = 16, std::string variant = {}) {
  UpdaterOptions o;
  o.precision = p;
  o.k = k;
  o.variant = std::move(variant);
  return o;
}

inline bool bit_identical(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * std::size_t(a.size())) == 0;
}

inline bool bit_identical(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Ratios of two runs agree move by move within the budget.
inline void assert_ratios_agree(const RunResult& a, const RunResult& b, const Budget& budget) {
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

/// Inverse after the moves of `s` (all accepted), by Sherman-Morrison in
/// long double: 11 more bits than double, a reference for double errors.
inline Eigen::MatrixXd long_double_inverse(const Scenario& s) {
  using MatrixL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
  using VectorL = Eigen::Matrix<long double, Eigen::Dynamic, 1>;
  MatrixL inv = s.a0.cast<long double>().partialPivLu().inverse();
  for (const Move& mv : s.moves) {
    const VectorL a = mv.column.cast<long double>();
    const VectorL r = inv.row(mv.k).transpose();
    VectorL x = inv * a;
    const long double rho = x(mv.k);
    x(mv.k) -= 1;
    inv -= x * (r.transpose() / rho);
  }
  return inv.cast<double>();
}

/// The walk `s` with the matrix's rows in the order `rows` (row i is row
/// rows[i] of s's): P A has the same ratios and the inverse A^{-1} P^T, and
/// every sum over the rows runs in another order, so it rounds otherwise.
inline Scenario rows_reordered(const Scenario& s, const std::vector<int>& rows) {
  Scenario r{s.a0(rows, Eigen::all), {}};
  for (const Move& mv : s.moves) r.moves.push_back({mv.k, mv.column(rows), mv.accept});
  return r;
}

struct ErrorScales {
  double delayed;  // the windowed strategy's
  double sm;
};

/// Root mean square, over `orders` row orders of the walk (its own, then
/// shuffles drawn from `seed`), of the Frobenius error of the flushed
/// inverse of `strategy` (a windowed one, delay k, double) and of sm's
/// after the walk, against a long-double one.
inline ErrorScales error_scales(const std::string& strategy, const Scenario& s, int k, int orders,
                                std::uint64_t seed) {
  const Eigen::MatrixXd reference = long_double_inverse(s);
  std::mt19937_64 shuffle(seed);
  std::vector<int> rows(std::size_t(s.a0.rows()));
  double delayed2 = 0.0;
  double sm2 = 0.0;
  for (int order = 0; order < orders; ++order) {
    std::iota(rows.begin(), rows.end(), 0);
    if (order > 0) std::shuffle(rows.begin(), rows.end(), shuffle);
    const Scenario walk = rows_reordered(s, rows);
    const Eigen::MatrixXd walk_reference = reference(Eigen::all, rows);
    const auto delayed = make_updater(strategy, options_for(Precision::double_, k));
    const auto sm = make_updater("sm", options_for(Precision::double_));
    run(*delayed, walk);
    run(*sm, walk);
    delayed->flush();
    delayed2 += (*delayed->maintained().inverse - walk_reference).squaredNorm();
    sm2 += (*sm->maintained().inverse - walk_reference).squaredNorm();
  }
  return {std::sqrt(delayed2 / orders), std::sqrt(sm2 / orders)};
}

}  // namespace slaterlab::testing
