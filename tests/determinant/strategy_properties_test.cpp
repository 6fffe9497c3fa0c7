// Generic properties of every determinant-update strategy.
//
// One piece of test code runs over every (strategy, precision) the factory
// knows (known_strategies() x supported_precisions(), with a few window sizes
// K and variants where a strategy distinguishes them), so a newly registered
// strategy is covered without touching this file.
//
// Oracle. Double LU is no reference for double strategies, so the oracle is
// Eigen's PartialPivLU in long double (x87 extended, eps_ld = 2^-63 = 1.1e-19,
// 2048x below double's 2^-52): its own error, c N eps_ld kappa, is added to
// every tolerance and is ~2000x below the double strategies' allowance. (The
// Boost.Multiprecision reference in reference/ has its own tests against
// long double.)
//
// Error model (the one place every tolerance comes from).
//  * A backward-stable computation returns the exact answer for a matrix
//    A + Delta with ||Delta||_F <= eps_m ||A||_F, where
//      eps_m = c (1 + m) N eps,  c = 10,
//    m = accepted updates since the last refactorisation and eps the storage
//    epsilon (eps = 2u). Why c = 10: the LU paths (getrf/getri, LU
//    determinants) have componentwise backward error gamma_{3N} |L||U|, i.e.
//    normwise 3 N u g = 1.5 N eps g with g = || |L||U| ||_F / ||A||_F. For
//    these generators g was measured (2000 matrices per point) at max 3.2,
//    4.7, 8.6, 14 for N = 4, 8, 16, 32 (mean ~N/3 at kappa = 1, below 4 for
//    kappa >= 1e4). Worst-case alignment of every rounding would need
//    c ~ 13 at N = 16, but rounding errors do not align: the probabilistic
//    bound (Higham & Mary, SISC 2019) replaces 3N u by lambda sqrt(3N) u, and
//    lambda = 5 (failure probability below 1e-5 per bound) gives
//    5 sqrt(3N)/2 g / N + (the ratio's own dot product) <= 9.9 for N <= 16.
//    The Householder/Givens paths have constants of 2-3 and no growth. Each
//    update adds a rounding of the same size, hence (1 + m). c was fixed at 10
//    before the runs and is not tuned to them.
//  * Condition numbers over the window since the last refactorisation
//    (norm_max = max ||A_j||_F over the window and the candidate):
//      kappa_rho = norm_max ||e_k^T A^{-1}||_2 ||A^{-1} a'||_2 / |rho|
//        (the condition number of rho = (A^{-1} a')_k under normwise
//        perturbations of A: d rho = -e_k^T A^{-1} Delta A^{-1} a'),
//      kappa_F(A_j) = norm_max ||A_j^{-1}||_F (the condition number of
//        log|det A_j|: d log|det| = tr(A^{-1} Delta) <= ||A^{-1}||_F ||Delta||_F;
//        it governs strategies that take rho as a quotient of determinants, and
//        the log-det itself),
//    and kappa_max = the largest of these over the window: the current
//    proposal, its candidate matrix, and every accepted proposal and matrix
//    since the last refactorisation (an inverse-updating strategy carries the
//    error of every earlier update, amplified by that update's conditioning).
//  * Ratio: b = eps_m kappa_max. Exactly (not to first order),
//    (A + Delta)^{-1} = A^{-1} - A^{-1} Delta (A + Delta)^{-1}, so
//    |d rho| / |rho| <= b / (1 - b) while eta = ||A^{-1} Delta|| <= b < 1.
//    The property is asserted where b < 1/2 (otherwise rounding may have
//    destroyed every digit and no accuracy is claimed; such ratios are counted).
//  * log|det|: the initial log-det error eps_0 kappa_F / (1 - .) plus, per
//    accepted ratio, that ratio's bound (ratio-accumulated log-dets), plus
//    eps_m kappa_max / (1 - .) (log-dets recomputed from maintained factors),
//    plus the double summation of N + m logs.
//  * Inverse residuals: row-wise backward stability (row i of X is a row of
//    (A + Delta_i)^{-1}) gives ||X A - I||_F <= eps_m norm_max ||X||_F, and
//    A X - I = A (X A - I) A^{-1} gives ||A X - I||_F <= kappa_F(A) times
//    that (see LogDetAndResidualsMatchOracle).
//  * QR residuals: ||Q R - A P||_F <= eps_m norm_max and ||Q^T Q - I||_F <=
//    eps_m (orthogonal transformations: no condition number at all).
//
// Generators. N in [1, 16]; A = s U diag(sigma) V^T with Haar-random U, V (QR
// of a Gaussian matrix, signs fixed by diag(R)), sigma_1 = 1,
// sigma_N = 1/kappa, the rest log-uniform between, s a power of two in
// [2^-8, 2^8]; log10 kappa in [0, 8] for double storage and in
// [0, 8 * log(eps_f)/log(eps_d)] = [0, 3.5] for float storage (the same
// fraction of the precision's digits). New columns are drawn from the
// distribution of A's columns (s U diag(sigma) q, q a random unit vector:
// rho = O(1/sqrt(N)) and the conditioning persists along the sequence) or are
// small steps a_k + 0.1 * that (rho near 1). Move sequences of length 0..3N
// with electron indices and an accept/reject pattern.
// Shrink order (RapidCheck shrinks picks in the order they were made): N, then
// kappa, then the sequence length, then values (recompute cadence, seed,
// electron indices, accept pattern; accept shrinks to reject).
//
// Case counts and seeds. RapidCheck's default is 100 cases; properties that
// are expensive per case ask for fewer through check_property(), which also
// fixes the seed per test so that CI runs are reproducible. RC_PARAMS
// overrides either, e.g. RC_PARAMS="max_success=1000 seed=42" for a fuzzing
// run (RC_PARAMS="reproduce=..." replays a printed counterexample).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "strategies/determinant/updater_options.hpp"

namespace slaterlab {
namespace {

using Ld = long double;
using MatrixLd = Eigen::Matrix<Ld, Eigen::Dynamic, Eigen::Dynamic>;
using VectorLd = Eigen::Matrix<Ld, Eigen::Dynamic, 1>;

constexpr double kC = 10.0;  // backward-error constant, see the header comment
const double kEpsD = std::numeric_limits<double>::epsilon();
const double kEpsLd = double(std::numeric_limits<Ld>::epsilon());

// ---------------------------------------------------------------------------
// Strategy configurations, enumerated from the factory.

struct Config {
  std::string name;
  UpdaterOptions options;
  std::string label;
};

std::ostream& operator<<(std::ostream& os, const Config& c) { return os << c.label; }

std::unique_ptr<DeterminantUpdater> make(const Config& c, int recompute_every = 0,
                                         double breakdown = -1.0) {
  UpdaterOptions o = c.options;
  o.recompute_every = recompute_every;
  if (breakdown >= 0) o.breakdown = breakdown;
  return make_updater(c.name, o);
}

/// Every (strategy, precision), and for strategies that distinguish them a few
/// window sizes K and variants. Options a strategy ignores give the same
/// label and are dropped, so each distinct configuration appears once. Every
/// name's default configuration is taken first, so a variant of one name that
/// duplicates another name (qr-givens/rank1 = qr-rank1) does not hide it.
std::vector<Config> all_configs() {
  static const int kWindows[] = {16, 1, 3};  // the default first
  // Variant names used by strategies in this project ("" is the default).
  static const char* kVariants[] = {"", "incremental", "naive", "delete-append", "rank1"};
  std::vector<Config> configs;
  auto add = [&](const std::string& name, Precision p, int k, const char* variant) {
    UpdaterOptions o;
    o.precision = p;
    o.k = k;
    o.variant = variant;
    std::string label;
    try {
      label = make_updater(name, o)->label();
    } catch (const std::invalid_argument&) {
      return;  // a variant or K this strategy does not have
    }
    for (const Config& c : configs)
      if (c.label == label) return;
    configs.push_back({name, o, label});
  };
  for (const std::string& name : known_strategies())
    for (Precision p : supported_precisions(name)) add(name, p, kWindows[0], "");
  for (const std::string& name : known_strategies())
    for (Precision p : supported_precisions(name))
      for (int k : kWindows)
        for (const char* variant : kVariants) add(name, p, k, variant);
  return configs;
}

/// (lower-precision, double) pairs of the same strategy and options.
struct PrecisionPair {
  Config low;
  Config high;
};

std::ostream& operator<<(std::ostream& os, const PrecisionPair& p) {
  return os << p.low.label << " vs " << p.high.label;
}

std::vector<PrecisionPair> precision_pairs() {
  const std::vector<Config> configs = all_configs();
  std::vector<PrecisionPair> pairs;
  for (const Config& low : configs) {
    if (low.options.precision == Precision::double_) continue;
    for (const Config& high : configs) {
      if (high.options.precision == Precision::double_ && high.name == low.name &&
          high.options.k == low.options.k && high.options.variant == low.options.variant) {
        pairs.push_back({low, high});
      }
    }
  }
  return pairs;
}

std::string test_name(std::string label) {
  for (char& ch : label)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return label;
}

double storage_eps(const Config& c) { return storage_epsilon(c.options.precision); }

// ---------------------------------------------------------------------------
// RapidCheck driver with a per-property case count.

/// Runs a RapidCheck property inside the current GoogleTest test (mirrors
/// rc::detail::checkGTest) with two defaults that RC_PARAMS overrides:
///  - at most `max_success` cases unless RC_PARAMS names max_success;
///  - a seed fixed per test (a hash of its name) unless RC_PARAMS names seed,
///    so CI is reproducible; fuzzing runs pass their own seeds, e.g.
///    RC_PARAMS="max_success=1000 seed=7".
template <class Testable>
void check_property(int max_success, Testable&& testable, bool shrink = true) {
  using namespace rc::detail;
  TestParams params = configuration().testParams;
  params.disableShrinking = params.disableShrinking || !shrink;
  const char* env = std::getenv("RC_PARAMS");
  const std::string rc_params = env ? env : "";
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  if (rc_params.find("max_success") == std::string::npos) params.maxSuccess = max_success;
  if (rc_params.find("seed") == std::string::npos) {
    std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
    for (unsigned char ch : metadata.id) hash = (hash ^ ch) * 1099511628211ull;
    params.seed = hash;
  }
  const auto result = checkTestable(std::forward<Testable>(testable), metadata, params);
  if (!result.template is<SuccessResult>()) {
    std::ostringstream ss;
    printResultMessage(result, ss);
    FAIL() << ss.str();
  } else if (!result.template get<SuccessResult>().distribution.empty()) {
    printResultMessage(result, std::cout);
    std::cout << std::endl;
  }
}

// ---------------------------------------------------------------------------
// Move scripts: the initial matrix and a fixed sequence of proposals with
// predetermined decisions, so every strategy sees exactly the same data.

struct Move {
  Eigen::Index k = 0;
  Eigen::VectorXd column;
  bool accept = false;
};

struct Script {
  Eigen::MatrixXd a0;
  std::vector<Move> moves;
  int recompute_every = 0;
  double log10_kappa = 0;
};

struct Limits {
  int n_min = 1;
  int n_max = 16;
  double max_log10_kappa = 8;
  int length_per_n = 3;  // sequence length in [0, length_per_n * N]
  bool all_accepted = false;
  bool recompute = true;  // generate a recompute cadence
};

Eigen::MatrixXd haar_orthogonal(Eigen::Index n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd g(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) g(i, j) = normal(rng);
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
  Eigen::MatrixXd q = qr.householderQ();
  // Sign fix (Mezzadri): Q diag(sign(R_ii)) is Haar distributed.
  for (Eigen::Index i = 0; i < n; ++i)
    if (qr.matrixQR()(i, i) < 0) q.col(i) = -q.col(i);
  return q;
}

/// Builds a script from the shape picked by RapidCheck and a seed for the
/// bulk values.
/// With `metropolis`, a move the pattern accepts is accepted only if
/// 1/3 <= |rho| <= 3 (rho from a double LU, only for the decision): the
/// sequence then keeps the conditioning it started with, as a Metropolis walk
/// that rejects nodal crossings does.
Script build_script(int n, double log10_kappa, const std::vector<int>& ks,
                    const std::vector<int>& accepts, int recompute_every,
                    std::uint64_t seed, bool metropolis = false, bool scaled = true) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal;
  const Eigen::MatrixXd u = haar_orthogonal(n, rng);
  const Eigen::MatrixXd v = haar_orthogonal(n, rng);
  Eigen::VectorXd sigma(n);
  for (int i = 0; i < n; ++i) {
    const double t = i == 0 ? 0.0 : i == n - 1 ? 1.0 : uniform(rng);
    sigma(i) = std::pow(10.0, -log10_kappa * t);
  }
  const double scale = std::ldexp(1.0, int(std::floor(uniform(rng) * 17)) - 8) * scaled +
                      (scaled ? 0.0 : 1.0);
  const Eigen::MatrixXd us = scale * u * sigma.asDiagonal();

  Script s;
  s.a0 = us * v.transpose();
  s.recompute_every = recompute_every;
  s.log10_kappa = n == 1 ? 0.0 : log10_kappa;
  Eigen::MatrixXd current = s.a0;
  for (std::size_t i = 0; i < ks.size(); ++i) {
    Eigen::VectorXd q(n);
    for (int r = 0; r < n; ++r) q(r) = normal(rng);
    q.normalize();
    Move mv;
    mv.k = ks[i];
    mv.column = us * q;
    if (uniform(rng) < 0.3) mv.column = current.col(mv.k) + 0.1 * mv.column;
    mv.accept = accepts[i] != 0;
    if (mv.accept && metropolis) {
      const double rho = current.partialPivLu().solve(mv.column)(mv.k);
      mv.accept = std::abs(rho) >= 1.0 / 3 && std::abs(rho) <= 3;
    }
    if (mv.accept) current.col(mv.k) = mv.column;
    s.moves.push_back(std::move(mv));
  }
  return s;
}

/// Picks a script; the order of the picks is the shrink order.
Script gen_script(const Limits& lim) {
  const int n = *rc::gen::inRange(lim.n_min, lim.n_max + 1);
  const int kappa_steps = *rc::gen::inRange(0, 81);  // log10 kappa in 1/80ths of the range
  const int length = *rc::gen::inRange(0, lim.length_per_n * n + 1);
  const int recompute_every = lim.recompute ? *rc::gen::inRange(0, n + 1) : 0;
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto ks = *rc::gen::container<std::vector<int>>(std::size_t(length),
                                                         rc::gen::inRange(0, n));
  // 0 = reject, 1..3 = accept: 3/4 accepted, and shrinking turns accepts into rejects.
  std::vector<int> accepts(std::size_t(length), 1);
  if (!lim.all_accepted) {
    accepts = *rc::gen::container<std::vector<int>>(std::size_t(length), rc::gen::inRange(0, 4));
  }
  const double log10_kappa = lim.max_log10_kappa * kappa_steps / 80.0;
  return build_script(n, log10_kappa, ks, accepts, recompute_every, seed);
}

Limits limits_for(const Config& c) {
  Limits lim;
  if (c.options.precision != Precision::double_) {
    lim.max_log10_kappa = 8.0 * std::log(storage_eps(c)) / std::log(kEpsD);
  }
  return lim;
}

// ---------------------------------------------------------------------------
// Long-double oracle.

struct LogDetLd {
  Ld log_abs = 0;
  int sign = 1;
};

struct MatrixInfo {
  double norm_f = 0;      // ||A||_F
  double inv_norm_f = 0;  // ||A^{-1}||_F
  LogDetLd log_det;
};

struct OracleStep {
  Ld rho = 0;
  double row_norm = 0;      // ||e_k^T A^{-1}||_2
  double solve_norm = 0;    // ||A^{-1} a'||_2
  double sensitivity = 0;   // row_norm * solve_norm / |rho|  (kappa_rho / ||A||_F)
  MatrixInfo candidate;     // A with column k replaced (its log-det is not computed)
};

struct Trace {
  MatrixInfo initial;
  std::vector<OracleStep> steps;
  std::vector<MatrixInfo> after;  // the current matrix after each move
  Eigen::MatrixXd final_matrix;
};

class Oracle {
 public:
  explicit Oracle(const Eigen::MatrixXd& a) { set(a); }

  void set(const Eigen::MatrixXd& a) {
    a_ = a.cast<Ld>();
    Eigen::PartialPivLU<MatrixLd> lu(a_);
    inv_ = lu.inverse();
    info_.norm_f = double(a_.norm());
    info_.inv_norm_f = double(inv_.norm());
    LogDetLd d;
    d.sign = int(lu.permutationP().determinant());
    for (Eigen::Index i = 0; i < a_.rows(); ++i) {
      const Ld u = lu.matrixLU()(i, i);
      d.log_abs += std::log(std::abs(u));
      if (u < 0) d.sign = -d.sign;
      if (u == 0) d.sign = 0;
    }
    info_.log_det = d;
  }

  const MatrixInfo& info() const { return info_; }
  const MatrixLd& inverse() const { return inv_; }

  OracleStep propose(Eigen::Index k, const Eigen::VectorXd& column) const {
    const VectorLd a = column.cast<Ld>();
    const VectorLd x = inv_.row(k).transpose();
    const VectorLd y = inv_ * a;
    OracleStep s;
    s.rho = y(k);
    s.row_norm = double(x.norm());
    s.solve_norm = double(y.norm());
    s.sensitivity = s.row_norm * s.solve_norm / double(std::abs(s.rho));
    MatrixLd cand = a_;
    cand.col(k) = a;
    s.candidate.norm_f = double(cand.norm());
    // Sherman-Morrison in long double, only for the norm of the inverse.
    VectorLd yk = y;
    yk(k) -= 1;
    s.candidate.inv_norm_f = double((inv_ - yk * x.transpose() / s.rho).norm());
    return s;
  }

 private:
  MatrixLd a_;
  MatrixLd inv_;
  MatrixInfo info_;
};

Trace trace_script(const Script& s) {
  Trace t;
  Oracle oracle(s.a0);
  t.initial = oracle.info();
  Eigen::MatrixXd current = s.a0;
  for (const Move& mv : s.moves) {
    t.steps.push_back(oracle.propose(mv.k, mv.column));
    if (mv.accept) {
      current.col(mv.k) = mv.column;
      oracle.set(current);
    }
    t.after.push_back(oracle.info());
  }
  t.final_matrix = current;
  return t;
}

// ---------------------------------------------------------------------------
// Error model along a replay (see the header comment for the derivation).

class ErrorModel {
 public:
  ErrorModel(double eps, Eigen::Index n, const MatrixInfo& a0) : eps_(eps), n_(double(n)) {
    restart(a0);
  }

  /// eps_m = c (1 + m) N eps.
  double eps_m() const { return kC * (1.0 + m_) * n_ * eps_; }

  struct Bound {
    bool valid = false;  // b < 1/2: the bound is meaningful
    double rel = 0;      // bound on |d rho| / |rho|
    double kappa = 0;
  };

  /// Bound on the relative error of the ratio of proposal `o`.
  Bound ratio_bound(const OracleStep& o) const {
    const double norm = std::max(norm_max_, o.candidate.norm_f);
    const double inv =
        std::max({inv_max_, o.sensitivity, o.candidate.inv_norm_f});
    Bound b;
    b.kappa = norm * inv;
    const double e = eps_m() * b.kappa;
    b.valid = std::isfinite(e) && e < 0.5;
    b.rel = e / (1 - e) + kC * n_ * kEpsLd * b.kappa;
    return b;
  }

  /// Records an accepted proposal; `refactorised` when the strategy counted a
  /// recompute on this accept.
  void accepted(const OracleStep& o, const MatrixInfo& now, bool refactorised) {
    const Bound b = ratio_bound(o);
    logdet_valid_ = logdet_valid_ && b.valid;
    logdet_sum_ += b.rel;
    sum_abs_log_ += std::abs(std::log(double(std::abs(o.rho))));
    ++terms_;
    if (refactorised) {
      restart(now);
      return;
    }
    ++m_;
    norm_max_ = std::max({norm_max_, o.candidate.norm_f, now.norm_f});
    inv_max_ = std::max({inv_max_, o.sensitivity, o.candidate.inv_norm_f, now.inv_norm_f});
  }

  double kappa_max() const { return norm_max_ * inv_max_; }
  double norm_max() const { return norm_max_; }
  int m() const { return m_; }

  /// Bound on |d log|det|| of the current matrix; `valid` false when some
  /// contribution was outside the first-order regime.
  Bound logdet_bound() const {
    Bound b;
    const double e = eps_m() * kappa_max();
    b.valid = logdet_valid_ && std::isfinite(e) && e < 0.5;
    b.kappa = kappa_max();
    // Recursive summation in double of `terms_` logs, each below
    // ell = 2 ln(N + 1) + max(|ln ||A||_F|, ln ||A^{-1}||_F) + 1 in magnitude
    // (LU and QR pivots lie within [1 / (N ||A^{-1}||), N ||A||] for these
    // matrices), and of the accepted log|rho| terms.
    const double ell =
        2 * std::log(n_ + 1) + std::max(std::abs(std::log(norm_max_)), std::abs(std::log(inv_max_))) + 1;
    const double summation = (terms_ + n_) * kEpsD * (n_ * ell + sum_abs_log_);
    b.rel = logdet_sum_ + e / (1 - e) + summation;
    return b;
  }

 private:
  void restart(const MatrixInfo& a) {
    m_ = 0;
    norm_max_ = a.norm_f;
    inv_max_ = a.inv_norm_f;
    const double e = eps_m() * kappa_max();
    logdet_valid_ = std::isfinite(e) && e < 0.5;
    logdet_sum_ = e / (1 - e);
  }

  double eps_;
  double n_;
  int m_ = 0;
  double norm_max_ = 0;
  double inv_max_ = 0;
  bool logdet_valid_ = true;
  double logdet_sum_ = 0;
  double sum_abs_log_ = 0;
  int terms_ = 0;
};

double rel_error(double value, Ld reference) {
  return double(std::abs(Ld(value) - reference) / std::abs(reference));
}

// ---------------------------------------------------------------------------
// Bitwise snapshots for the reject property.

struct Snapshot {
  LogDet log_det;
  MaintainedState state;
  UpdaterCounters counters;
};

Snapshot snapshot(const DeterminantUpdater& up) {
  return {up.log_det(), up.maintained(), up.counters()};
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * std::size_t(a.size())) == 0;
}

/// Bit-for-bit equality of what a strategy exposes (the breakdown counter
/// excepted: ratio() legitimately counts a breakdown it reports).
bool same_state(const Snapshot& x, const Snapshot& y) {
  if (std::memcmp(&x.log_det.log_abs, &y.log_det.log_abs, sizeof(double)) != 0) return false;
  if (x.log_det.sign != y.log_det.sign) return false;
  if (x.state.inverse.has_value() != y.state.inverse.has_value()) return false;
  if (x.state.inverse && !same_bits(*x.state.inverse, *y.state.inverse)) return false;
  if (x.state.qr.has_value() != y.state.qr.has_value()) return false;
  if (x.state.qr) {
    if (!same_bits(x.state.qr->q, y.state.qr->q)) return false;
    if (!same_bits(x.state.qr->r, y.state.qr->r)) return false;
    if (x.state.qr->column_of != y.state.qr->column_of) return false;
  }
  return x.counters.recomputes == y.counters.recomputes &&
         x.counters.flushes == y.counters.flushes && x.counters.splits == y.counters.splits;
}

/// A strategy run through a whole script (then flush()), with the error model
/// that went along.
struct Replay {
  std::unique_ptr<DeterminantUpdater> updater;
  ErrorModel model;
};

Replay replay(const Config& cfg, const Script& s, const Trace& t) {
  Replay r{make(cfg, s.recompute_every), ErrorModel(storage_eps(cfg), s.a0.rows(), t.initial)};
  r.updater->reset(s.a0);
  for (std::size_t i = 0; i < s.moves.size(); ++i) {
    r.updater->ratio(s.moves[i].k, s.moves[i].column);
    if (s.moves[i].accept) {
      const auto before = r.updater->counters().recomputes;
      r.updater->accept();
      r.model.accepted(t.steps[i], t.after[i], r.updater->counters().recomputes > before);
    } else {
      r.updater->reject();
    }
  }
  r.updater->flush();
  return r;
}

/// Left residual ||X A - I||_F of a maintained inverse, in long double, and
/// its bound eps_m norm_max ||X||_F (see LogDetAndResidualsMatchOracle).
struct LeftResidual {
  double residual = 0;
  double bound = 0;
};

LeftResidual left_residual(const Replay& r, const Eigen::MatrixXd& a) {
  const Eigen::MatrixXd x = *r.updater->maintained().inverse;
  const MatrixLd xl = x.cast<Ld>();
  const Eigen::Index n = a.rows();
  return {double((xl * a.cast<Ld>() - MatrixLd::Identity(n, n)).norm()),
          r.model.eps_m() * std::max(r.model.kappa_max(), r.model.norm_max() * x.norm())};
}

// ---------------------------------------------------------------------------
// The per-strategy properties.

class StrategyProperty : public ::testing::TestWithParam<Config> {};

// Ratios agree with the oracle within the derived bound
// (1 + m) c N eps kappa_max / (1 - .), at every step of every sequence.
TEST_P(StrategyProperty, RatiosMatchOracle) {
  const Config cfg = GetParam();
  check_property(100, [&] {
    const Script s = gen_script(limits_for(cfg));
    const Trace t = trace_script(s);
    auto up = make(cfg, s.recompute_every);
    up->reset(s.a0);
    ErrorModel model(storage_eps(cfg), s.a0.rows(), t.initial);
    int checked = 0;
    for (std::size_t i = 0; i < s.moves.size(); ++i) {
      const Move& mv = s.moves[i];
      const OracleStep& o = t.steps[i];
      const Ratio r = up->ratio(mv.k, mv.column);
      RC_ASSERT(std::isfinite(r.value));
      const auto b = model.ratio_bound(o);
      if (b.valid) {
        ++checked;
        const double err = rel_error(r.value, o.rho);
        if (!(err <= b.rel))
          RC_LOG() << "move " << i << " (k=" << mv.k << ", m=" << model.m()
                 << "): rho=" << r.value << " oracle=" << double(o.rho)
                 << " rel.err=" << err << " bound=" << b.rel << " kappa_max=" << b.kappa
                 << "\n";
        RC_ASSERT(err <= b.rel);
      }
      if (mv.accept) {
        const auto before = up->counters().recomputes;
        up->accept();
        model.accepted(o, t.after[i], up->counters().recomputes > before);
      } else {
        up->reject();
      }
    }
    RC_CLASSIFY(!s.moves.empty() && checked == 0, "no ratio inside the first-order regime");
  });
}

// After any sequence and flush(), log|det| and its sign match the oracle, and
// the maintained state satisfies its residual bounds.
TEST_P(StrategyProperty, LogDetAndResidualsMatchOracle) {
  const Config cfg = GetParam();
  check_property(100, [&] {
    const Script s = gen_script(limits_for(cfg));
    const Trace t = trace_script(s);
    const Replay run = replay(cfg, s, t);
    const DeterminantUpdater* up = run.updater.get();
    const ErrorModel& model = run.model;
    const MatrixInfo& fin = t.after.empty() ? t.initial : t.after.back();
    const LogDet ld = up->log_det();
    const auto lb = model.logdet_bound();
    RC_CLASSIFY(!lb.valid, "log-det beyond the first-order regime");
    if (lb.valid) {
      const double err = double(std::abs(Ld(ld.log_abs) - fin.log_det.log_abs));
      RC_ASSERT(err <= lb.rel);
      RC_ASSERT(ld.sign == fin.log_det.sign);
    }

    const MaintainedState st = up->maintained();
    const Eigen::Index n = s.a0.rows();
    const MatrixLd a = t.final_matrix.cast<Ld>();
    const double eps_m = model.eps_m();
    if (st.inverse) {
      // Row-wise backward stability (what the ratio bound rests on, and what
      // LU-based inversion guarantees) makes every row x_i of X the exact row
      // of (A + Delta_i)^{-1}: x_i A - e_i^T = -x_i Delta_i, so the LEFT
      // residual ||X A - I||_F <= eps_m norm_max ||X||_F. The right residual
      // follows as A X - I = A (X A - I) A^{-1}: <= kappa_2(A) times that
      // (<= kappa_F(A), the oracle's). A right-residual bound without the
      // extra kappa would need X to be the inverse of ONE nearby matrix, which
      // getri does not deliver (Higham, ASNA 2nd ed., section 14.3).
      const MatrixLd x = st.inverse->cast<Ld>();
      const auto [left, bound] = left_residual(run, t.final_matrix);
      const double right = double((a * x - MatrixLd::Identity(n, n)).norm());
      const double kappa_final = fin.norm_f * fin.inv_norm_f;
      RC_LOG() << "||X A - I||_F = " << left << ", ||A X - I||_F = " << right
               << ", bound " << bound << ", m = " << model.m() << ", eps_m = " << eps_m
               << ", kappa_F(final) = " << kappa_final << "\n";
      if (bound < 0.5) {
        RC_ASSERT(left <= bound);
        RC_ASSERT(right <= bound * kappa_final);
      }
    }
    if (st.qr) {
      const QrFactors& f = *st.qr;
      RC_ASSERT(f.q.rows() == n && f.q.cols() == n && f.r.rows() == n && f.r.cols() == n);
      std::vector<Eigen::Index> sorted = f.column_of;
      std::sort(sorted.begin(), sorted.end());
      for (Eigen::Index j = 0; j < n; ++j) RC_ASSERT(sorted[std::size_t(j)] == j);
      for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = j + 1; i < n; ++i) RC_ASSERT(f.r(i, j) == 0.0);
      MatrixLd ap(n, n);
      for (Eigen::Index j = 0; j < n; ++j) ap.col(j) = a.col(f.column_of[std::size_t(j)]);
      const MatrixLd q = f.q.cast<Ld>();
      const double qr_residual = double((q * f.r.cast<Ld>() - ap).norm());
      const double orthogonality = double((q.transpose() * q - MatrixLd::Identity(n, n)).norm());
      RC_ASSERT(qr_residual <= eps_m * model.norm_max());
      RC_ASSERT(orthogonality <= eps_m);
    }
  });
}

// A rejected proposal leaves the state bit-for-bit unchanged, at every point
// of a sequence, and a fully rejected sequence leaves the state of reset().
TEST_P(StrategyProperty, RejectLeavesStateUnchanged) {
  const Config cfg = GetParam();
  check_property(100, [&] {
    const Script s = gen_script(limits_for(cfg));
    auto up = make(cfg, s.recompute_every);
    up->reset(s.a0);
    for (std::size_t i = 0; i < s.moves.size(); ++i) {
      const Move& mv = s.moves[i];
      if (mv.accept) {
        up->ratio(mv.k, mv.column);
        up->accept();
        continue;
      }
      const Snapshot before = snapshot(*up);
      up->ratio(mv.k, mv.column);
      up->reject();
      RC_ASSERT(same_state(before, snapshot(*up)));
    }

    auto fresh = make(cfg, s.recompute_every);
    fresh->reset(s.a0);
    const Snapshot initial = snapshot(*fresh);
    for (const Move& mv : s.moves) {
      fresh->ratio(mv.k, mv.column);
      fresh->reject();
    }
    fresh->flush();
    RC_ASSERT(same_state(initial, snapshot(*fresh)));
  });
}

// Near-singular and non-finite proposals are reported as breakdown with a
// finite value, never as NaN or inf; an accepted near-singular move leaves a
// finite state (or a SingularMatrixError, the documented outcome for a matrix
// singular to working precision).
TEST_P(StrategyProperty, NearSingularIsBreakdown) {
  const Config cfg = GetParam();
  check_property(100, [&] {
    // Small, well-conditioned prefixes: the threshold below must sit above
    // the strategy's noise floor and below the regular ratios.
    Limits lim;
    lim.n_max = 8;
    lim.length_per_n = 1;
    lim.max_log10_kappa = 1;
    const Script s = gen_script(lim);
    const Eigen::Index n = s.a0.rows();
    const Eigen::Index k = *rc::gen::inRange<Eigen::Index>(0, n);
    const Eigen::Index j = n > 1 ? (k + *rc::gen::inRange<Eigen::Index>(1, n)) % n : k;

    // Everything the threshold depends on, from the oracle: the final state
    // after the prefix, its worst conditioning, m <= number of accepts.
    const Trace t = trace_script(s);
    ErrorModel model(storage_eps(cfg), n, t.initial);
    for (std::size_t i = 0; i < s.moves.size(); ++i)
      if (s.moves[i].accept) model.accepted(t.steps[i], t.after[i], false);
    const double eta = model.eps_m() * model.kappa_max();
    RC_PRE(eta < 0.5);
    // Noise floor of a ratio whose true value is 0 (a copied column: A' has
    // two equal columns). In the error model the state carries a backward
    // error eps_m ||A|| amplified by at most kappa_max, so the computed rho
    // lies within eps_m / (1 - eta) * norm_max * inv_max * ||A^{-1} a'||,
    // with ||A^{-1} a'|| = ||e_j|| = 1 for a copy and at most sqrt(2) for the
    // other proposals below (the u-form d = 1 + r^T (a' - a_k) of delayed
    // updates sees ||a_k|| as well); i.e. sqrt(2) eps_m kappa_max / (1 - eta).
    // Twice that is the breakdown threshold.
    const double noise = std::sqrt(2.0) * eta / (1 - eta);
    const double threshold = 2 * noise;
    auto up = make(cfg, 0, threshold);
    up->reset(s.a0);
    for (const Move& mv : s.moves) {
      const Ratio r = up->ratio(mv.k, mv.column);
      RC_ASSERT(std::isfinite(r.value));
      mv.accept ? up->accept() : up->reject();
    }

    auto expect_breakdown = [&](const Eigen::VectorXd& column, const char* what) {
      const auto before = up->counters().breakdowns;
      const Ratio r = up->ratio(k, column);
      RC_LOG() << what << ": rho=" << r.value << " threshold=" << threshold << "\n";
      RC_ASSERT(std::isfinite(r.value));
      RC_ASSERT(r.breakdown);
      RC_ASSERT(up->counters().breakdowns == before + 1);
    };
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    expect_breakdown(zero, "zero column");
    up->reject();
    Eigen::VectorXd bad = t.final_matrix.col(k);
    bad(n / 2) = std::numeric_limits<double>::quiet_NaN();
    expect_breakdown(bad, "NaN entry");
    up->reject();
    bad(n / 2) = std::numeric_limits<double>::infinity();
    expect_breakdown(bad, "inf entry");
    up->reject();
    if (n < 2) return;
    expect_breakdown(t.final_matrix.col(j), "copy of another column");
    up->reject();
    // rho = delta (+ the rounding of a_j + delta a_k, ~eps ||x_k|| ||a_j||):
    // delta = threshold / 4 (>= 7 N eps kappa) keeps A' clear of exact
    // singularity in double while |rho| + noise < threshold.
    const double delta = threshold / 4;
    const Eigen::VectorXd near = t.final_matrix.col(j) + delta * t.final_matrix.col(k);
    expect_breakdown(near, "near-singular column");
    try {
      up->accept();
    } catch (const SingularMatrixError&) {
      return;
    }
    const LogDet ld = up->log_det();
    RC_ASSERT(!std::isnan(ld.log_abs));
    const MaintainedState st = up->maintained();
    if (st.inverse) RC_ASSERT(!st.inverse->hasNaN());
    if (st.qr) RC_ASSERT(!st.qr->q.hasNaN() && !st.qr->r.hasNaN());
    const Ratio after = up->ratio(k, t.final_matrix.col(k));
    RC_ASSERT(std::isfinite(after.value));
    up->reject();
  });
}

INSTANTIATE_TEST_SUITE_P(Factory, StrategyProperty, ::testing::ValuesIn(all_configs()),
                         [](const auto& info) { return test_name(info.param.label); });

// ---------------------------------------------------------------------------
// Float against double.
//
// On well-conditioned cases both runs are in the first-order regime and make
// errors eps_s * C_s, where C_s, the error in units of the storage epsilon,
// comes from the same algorithm on the same data. So
//   err_low / err_double = (eps_low / eps_d) * (C_low / C_d).
// Window for the median of C_low / C_d over a batch of 9 cases, each C the
// maximum relative error over the well-conditioned proposals (1/3 <= |rho|
// <= 3) of a 2N-move sequence, N in [16, 32], kappa <= 10, unit scale:
//  - rounding errors of the same algorithm have the same distribution in
//    both precisions, and the maximum of >= 32 of them concentrates within a
//    factor ~2 of its typical value: C_low / C_d in [1/4, 4] per case;
//  - the float run also rounds its inputs (backward error u ||A|| against
//    the algorithm's >= N u): at most x2;
//  - mixed variants round only the stored inverse and run the look-ahead in
//    double, so C_mixed can be below C_d by the ratio of the algorithm's
//    rounding count to one rounding of the inverse (<= N = 32, in practice
//    ~x4-x16); and the double log-det difference of recompute adds
//    eps_d sum |log|pivot|| to C_d only (~x4 with unit scale).
// That spans [1/128, 8] for single cases; the median of 9 is tighter, and
// [1/64, 64] is the window. It excludes a silently-double computation (a
// ratio near 1, i.e. 2^-29 of the target) and a half-precision or otherwise
// degraded one (2^13 above). Measured (300 batches per pair): every pair's
// median within 2^-4.5 .. 2^+2 of the target; pure-float pairs within 2^+-2.

class PrecisionProperty : public ::testing::TestWithParam<PrecisionPair> {};

double max_ratio_error(const Config& cfg, const Script& s, const Trace& t) {
  auto up = make(cfg);
  up->reset(s.a0);
  double worst = 0;
  for (std::size_t i = 0; i < s.moves.size(); ++i) {
    const Ratio r = up->ratio(s.moves[i].k, s.moves[i].column);
    // Well-conditioned proposals only (the ones a Metropolis walk accepts):
    // a ratio near a nodal crossing has kappa_rho ~ 1/|rho| and would make
    // the maximum a statement about one proposal rather than the precision.
    const Ld rho = std::abs(t.steps[i].rho);
    if (rho >= 1.0L / 3 && rho <= 3) worst = std::max(worst, rel_error(r.value, t.steps[i].rho));
    s.moves[i].accept ? up->accept() : up->reject();
  }
  return worst;
}

TEST_P(PrecisionProperty, FloatErrorsAreEpsilonRatioAboveDouble) {
  const PrecisionPair pair = GetParam();
  const double target = storage_eps(pair.low) / storage_eps(pair.high);
  check_property(10, [&] {
    constexpr int kBatch = 9;
    std::vector<double> ratios;
    for (int c = 0; c < kBatch; ++c) {
      const int n = *rc::gen::inRange(16, 33);
      const double log10_kappa = *rc::gen::inRange(0, 11) / 10.0;
      const auto seed = *rc::gen::arbitrary<std::uint64_t>();
      const auto ks = *rc::gen::container<std::vector<int>>(std::size_t(2 * n),
                                                             rc::gen::inRange(0, n));
      const Script s =
          build_script(n, log10_kappa, ks, std::vector<int>(ks.size(), 1), 0, seed, true, false);
      const Trace t = trace_script(s);
      const double low = max_ratio_error(pair.low, s, t);
      const double high = max_ratio_error(pair.high, s, t);
      // The oracle's own error (~2^-63) is the floor of what can be measured.
      ratios.push_back(low / std::max(high, 1e3 * kEpsLd));
      RC_LOG() << "N=" << n << " log10 kappa=" << log10_kappa << ": err/eps low "
               << low / storage_eps(pair.low) << ", double " << high / kEpsD << "\n";
    }
    std::nth_element(ratios.begin(), ratios.begin() + kBatch / 2, ratios.end());
    const double median = ratios[kBatch / 2];
    RC_LOG() << "median ratio / (eps_low / eps_double) = " << median / target << "\n";
    // The distribution of log2(median / target) is printed with the result.
    RC_TAG("log2(median / (eps_low/eps_double)) ~ " +
           std::to_string(int(std::lround(std::log2(median / target)))));
    RC_ASSERT(median >= target / 64);
    RC_ASSERT(median <= target * 64);
  }, /*shrink=*/false);  // a batch statistic: shrinking its picks means nothing
}

INSTANTIATE_TEST_SUITE_P(Factory, PrecisionProperty, ::testing::ValuesIn(precision_pairs()),
                         [](const auto& info) {
                           return test_name(info.param.low.label);
                         });

// Finding, kept as a disabled regression test until it is resolved (run it
// with --gtest_also_run_disabled_tests): delayed (Woodbury) updates exceed the
// generic error model when a window follows a near-singular state, while
// Sherman-Morrison on the same sequence stays well inside it. Shrunk
// counterexample of LogDetAndResidualsMatchOracle (RC_PARAMS="max_success=1000
// seed=136"): N = 15, kappa = 1, recompute_every = 11. The 22nd accepted move
// has rho = 1.9e-4 (kappa_F 1.5e5) and triggers the periodic refactorisation;
// the next two moves (rho = 6632, then -0.63) bring kappa_F back to 45. The
// flushed inverse of delayed-K (K = 3, 16; incremental and naive) then has
// ||X A - I||_F = 5.5e-8 (naive 3.8e-8) against the bound 1.5e-8, where sm
// has 7.8e-12: the Woodbury correction Ainv U B^{-1} V^T Ainv cancels most of
// an inverse with kappa 1.5e5 down to one with kappa 45, and its rounding
// (through B^{-1}, whose conditioning is not part of the model) is not
// damped as the sequential rank-1 updates are. Over 240 seeds x 1000 cases
// only delayed-K (K >= 3) exceeded any bound: left residuals by up to ~140x,
// ratios by up to ~6x (a float ratio with the wrong sign where the model
// allows 45%).
TEST(StrategyFindings, DISABLED_DelayedFlushAfterNearSingularStateExceedsModel) {
  const std::vector<int> ks{0, 9, 0, 0, 0,  0, 0, 0, 0,  8, 0, 0, 0, 0, 0, 5, 0, 0, 9, 10,
                            1, 6, 14, 12, 0, 3, 0, 13, 0, 0, 11, 3, 2, 0, 0, 0, 0, 2, 2};
  const std::vector<int> accepts{1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1,
                                 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1};
  const Script s = build_script(15, 0.0, ks, accepts, 11, 2912772143047442553ull);
  const Trace t = trace_script(s);
  for (const Config& cfg : all_configs()) {
    if (cfg.options.precision != Precision::double_) continue;
    const Replay run = replay(cfg, s, t);
    if (!run.updater->maintained().inverse) continue;
    const LeftResidual res = left_residual(run, t.final_matrix);
    EXPECT_LE(res.residual, res.bound) << cfg.label;
  }
}

// The enumeration itself: every name and precision the factory reports is
// covered, so a new strategy cannot slip past this suite.
TEST(StrategyEnumeration, CoversEveryNameAndPrecision) {
  const auto configs = all_configs();
  for (const std::string& name : known_strategies()) {
    for (Precision p : supported_precisions(name)) {
      const bool found = std::any_of(configs.begin(), configs.end(), [&](const Config& c) {
        return c.name == name && c.options.precision == p;
      });
      EXPECT_TRUE(found) << name << " " << to_string(p);
    }
  }
}

}  // namespace
}  // namespace slaterlab
