// Generic properties of every determinant-update strategy: the oracle, the
// error model and the per-case checks (contract in strategy_properties.hpp).
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
//      eps_m = c (g + m) N eps,  c = 10,  g = max(1, growth / 4),
//    m = accepted updates since the last refactorisation, eps the storage
//    epsilon (eps = 2u) and growth = || |L||U| ||_F / ||A||_F of the last
//    factorisation (the oracle's long-double LU with partial pivoting).
//    Why c = 10: the LU paths (getrf/getri, LU
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
//    update adds a rounding of the same size, hence (g + m). c covers a
//    growth up to 4; near-collinear (adversarial) matrices reach more, and
//    the rows of getri's inverse are then backward stable only to
//    gamma |X||L||U| (Higham, ASNA 14.3): g scales eps_m by the excess.
//  * Rounding propagated through inverse updates (PropagatedRounding). An
//    updated inverse carries every earlier update's rounding, mapped by the
//    exact first-order map of each later update, E <- P E Q (P = I - y e_k^T
//    / rho, Q = I - a' r^T / rho). Across a near-singular state this is
//    neither bounded by the largest conditioning nor by the sum above: a
//    rounding committed where ||A^{-1}|| was 1e7 is amplified by the later
//    ratio's conditioning (the product of the two), or damped when the
//    releasing update annihilates it. The model propagates 8 random-sign
//    samples of each update's rounding at its bound's magnitude, in double,
//    and adds lambda = 16 times their RMS effect on the ratio (and on the
//    left residual). Random signs give the typical size of a sum of
//    roundings; the samples' spread makes the RMS of 8 an estimate good to
//    a factor ~2, and the maximal magnitudes overstate uniform roundings by
//    ~sqrt(3); lambda = 16 leaves a margin of an order of magnitude on top.
//    Strategies whose update rounds more than Sherman-Morrison's scale this
//    term by model_factor() (delayed: its growth guard's factor). c was fixed at 10
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
//    The property is asserted where b < 1/2: this is the filter that keeps
//    near-singular proposals (|rho| tiny against its conditioning) out of the
//    comparison, since there rounding may have destroyed every digit and no
//    accuracy is claimed (CheckStats counts what was compared). Near-singular
//    proposals have their own property (breakdown).
//  * log|det|: the initial log-det error eps_0 kappa_F / (1 - .) plus, per
//    accepted ratio, that ratio's bound (ratio-accumulated log-dets), plus
//    eps_m kappa_max / (1 - .) (log-dets recomputed from maintained factors),
//    plus the double summation of N + m logs.
//  * Inverse residuals: row-wise backward stability (row i of X is a row of
//    (A + Delta_i)^{-1}) gives ||X A - I||_F <= eps_m norm_max ||X||_F, and
//    A X - I = A (X A - I) A^{-1} gives ||A X - I||_F <= kappa_F(A) times
//    that (see check_log_det_and_residuals).
//  * QR residuals: ||Q R - A P||_F <= eps_m norm_max and ||Q^T Q - I||_F <=
//    eps_m (orthogonal transformations: no condition number at all).
//
// Generators. randsvd: A = s U diag(sigma) V^T with Haar-random U, V (QR of a
// Gaussian matrix, signs fixed by diag(R)), sigma_1 = 1, sigma_N = 1/kappa,
// the rest log-uniform between, s a power of two in [2^-8, 2^8]. New columns
// are drawn from the distribution of A's columns (s U diag(sigma) q, q a
// random unit vector: rho = O(1/sqrt(N)) and the conditioning persists along
// the sequence) or are small steps a_k + 0.1 * that (rho near 1).
// adversarial: A iid N(0,1); cycles of collapse (a'_{c_t} = a_{c_{t-1}} +
// eta ||a_{c_{t-1}}|| g/||g||, t = 1..chain, rho ~ eta), hold (fresh columns
// elsewhere while near-singular) and release (fresh columns back, rho ~
// 1/eta). The limits scale kappa and 1/eta with the storage precision's
// digits (log(eps_s) / log(eps_d)), so float strategies see the same
// fraction of their precision as double ones.

#include "verify/run/strategy_properties.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <stdexcept>

#include "verify/inputs/suggest.hpp"

namespace slaterlab {

// ---- the oracle's trace (declared in the header, defined here) ---------------

using Ld = long double;
using MatrixLd = Eigen::Matrix<Ld, Eigen::Dynamic, Eigen::Dynamic>;
using VectorLd = Eigen::Matrix<Ld, Eigen::Dynamic, 1>;

namespace {

constexpr double kC = 10.0;  // backward-error constant, see the file comment
const double kEpsD = std::numeric_limits<double>::epsilon();
const double kEpsLd = double(std::numeric_limits<Ld>::epsilon());

struct LogDetLd {
  Ld log_abs = 0;
  int sign = 1;
};

/// What seeding the propagated rounding at a factorisation needs.
struct InverseState {
  Eigen::MatrixXd inverse;       // A^{-1}
  Eigen::MatrixXd residual_size;  // |A^{-1}| |L| |U|: row-wise size of getri's left residual
};

struct MatrixInfo {
  double norm_f = 0;      // ||A||_F
  double inv_norm_f = 0;  // ||A^{-1}||_F
  double lu_growth = 1;   // || |L| |U| ||_F / ||A||_F of partial-pivoting LU
  LogDetLd log_det;
  std::shared_ptr<const InverseState> state;
};

/// What the propagated-rounding estimate needs of a proposal (ErrorModel).
struct StepVectors {
  Eigen::Index k = 0;
  VectorLd column;     // a'
  VectorLd row;        // r = e_k^T A^{-1}
  VectorLd update;     // y = A^{-1} a' - e_k
  VectorLd row_norms;  // ||e_i^T A^{-1}|| for every row i
};

struct OracleStep {
  Ld rho = 0;
  std::shared_ptr<const StepVectors> vectors;
  double row_norm = 0;     // ||e_k^T A^{-1}||_2
  double solve_norm = 0;   // ||A^{-1} a'||_2
  double sensitivity = 0;  // row_norm * solve_norm / |rho|  (kappa_rho / ||A||_F)
  MatrixInfo candidate;    // A with column k replaced (its log-det is not computed)
};

}  // namespace

namespace {

/// The oracle's view of one update cycle.
struct CycleStep {
  Ld rho = 0;          // det(A_after) / det(A_before)
  double beta = 0;     // conditioning of det B (Oracle::block_ratio)
  double kappa_before = 0;  // kappa_F = ||A||_F ||A^{-1}||_F of A_before
  double kappa_after = 0;   // ... of A_after (+inf when singular)
  double kappa_path = 0;    // the largest over the intermediate matrices (+inf when one is singular)
  double min_step = 0;      // the smallest |det A_i / det A_{i-1}| over the cycle's updates
  std::vector<Eigen::Index> columns;  // the distinct columns replaced
  MatrixInfo after;    // A_after
};

}  // namespace

class CaseTrace {
 public:
  MatrixInfo initial;
  std::vector<OracleStep> steps;
  std::vector<CycleStep> cycles;  // cases with update cycles (steps and after stay empty)
  std::vector<MatrixInfo> after;  // the current matrix after each move
  Eigen::MatrixXd final_matrix;

  const MatrixInfo& final_info() const { return after.empty() ? initial : after.back(); }
};

namespace {

class Oracle {
 public:
  explicit Oracle(const Eigen::MatrixXd& a) { set(a); }

  void set(const Eigen::MatrixXd& a) {
    a_ = a.cast<Ld>();
    lu_.compute(a_);
    const auto& lu = lu_;
    inv_ = lu.inverse();
    row_norms_ = inv_.rowwise().norm();
    {
      const MatrixLd lu_abs = lu.matrixLU().cwiseAbs();
      const MatrixLd l = lu_abs.triangularView<Eigen::UnitLower>();
      const MatrixLd u = lu_abs.triangularView<Eigen::Upper>();
      // |L||U| of P A: columns in A's order, rows permuted back.
      const MatrixLd lu_product = lu.permutationP().transpose() * (l * u);
      info_.lu_growth = double(lu_product.norm() / a_.norm());
      auto state = std::make_shared<InverseState>();
      state->inverse = inv_.cast<double>();
      state->residual_size = (inv_.cwiseAbs() * lu_product).cast<double>();
      info_.state = std::move(state);
    }
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

  /// The cycle ratio det(A_after) / det(A) = det B, B = W^T C: W the rows
  /// `columns` of A^{-1}, C the cycle's last column written to each (the
  /// mp reference's block form: no intermediate matrix enters it). B's rows
  /// are formed by solves with A^T (backward stable, as propose()'s column
  /// solve); `beta` = ||B^{-1}||_F ||W||_F ||C||_F, the condition number
  /// of det B under perturbations of W and C (d log det B = tr(B^{-1} dB),
  /// ||dB||_F <= ||dW||_F ||C||_F + ||W||_F ||dC||_F).
  Ld block_ratio(const std::vector<Eigen::Index>& columns, const MatrixLd& c,
                 double& beta) const {
    const Eigen::Index m = Eigen::Index(columns.size());
    MatrixLd e = MatrixLd::Zero(a_.rows(), m);
    for (Eigen::Index j = 0; j < m; ++j) e(columns[std::size_t(j)], j) = 1;
    const MatrixLd w = lu_.transpose().solve(e);  // columns are the rows of A^{-1}
    const MatrixLd b = w.transpose() * c;
    const Eigen::PartialPivLU<MatrixLd> block(b);
    beta = double(block.inverse().norm() * w.norm() * c.norm());
    if (!std::isfinite(beta)) beta = std::numeric_limits<double>::infinity();
    return block.determinant();
  }

  OracleStep propose(Eigen::Index k, const Eigen::VectorXd& column) const {
    const VectorLd a = column.cast<Ld>();
    const VectorLd x = inv_.row(k).transpose();
    // rho = (A^{-1} a')_k from a solve with a' (backward stable: error
    // c N eps_ld kappa_rho), never as row k of the inverse times a': Eigen
    // forms the inverse column by column, so its columns are backward stable
    // but its rows are not, and a row times a' then errs by up to
    // eps_ld kappa(A) ||x|| ||a'|| / |rho| (found by fuzzing: a ratio of
    // 3.7536e-8 at kappa = 3e8, N = 6, off by 5e-5 relative, where every
    // double strategy agreed with a 60-digit determinant ratio to 2e-8).
    const VectorLd y = lu_.solve(a);
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
    s.vectors = std::make_shared<const StepVectors>(StepVectors{k, a, x, yk, row_norms_});
    return s;
  }

 private:
  MatrixLd a_;
  Eigen::PartialPivLU<MatrixLd> lu_;
  MatrixLd inv_;  // for norms only
  VectorLd row_norms_;
  MatrixInfo info_;
};

// ---- rounding propagated through inverse updates (see the file comment) -------

/// Sample forward errors E of an updated inverse: each accepted move maps E
/// by the exact first-order map of Sherman-Morrison, E <- P E Q with
/// P = I - y e_k^T / rho, Q = I - a' r^T / rho, and adds that update's own
/// rounding with random signs at its bound's magnitude: the product
/// y = Ainv a' (sqrt(N) eps ||x_i|| ||a'|| per entry, N roundings adding as
/// a random walk), the ratio (sqrt(N) eps ||r|| ||a'||), and the rank-1
/// update (eps (|x_ij| + |y_i r_j / rho|) per entry, with |x_ij| taken as
/// ||x_i|| / sqrt(N) and the signs as an outer product of random sign
/// vectors: the same magnitude in any norm, at O(N^2) cost). The spread of
/// e_k^T E a' over the samples estimates what a later ratio inherits. Double
/// precision suffices: an estimate needs one correct digit.
class PropagatedRounding {
 public:
  static constexpr int kSamples = 8;

  PropagatedRounding(double eps, Eigen::Index n) : eps_(eps), n_(n) {}

  void clear() { samples_.clear(); }

  /// Starts from a factorisation: getri's rows are each backward stable for
  /// a different nearby matrix, X A = I + R with |R| <= gamma |X||L||U| row
  /// by row, so E = R A^{-1}; R's entries take random signs at the size
  /// sqrt(N) eps (|X||L||U|)_ij (N roundings adding as a random walk).
  /// Exact updates preserve one backward error but mix these different
  /// rows, which is what propagates.
  void seed(const InverseState& s) {
    const double scale = eps_ * std::sqrt(double(n_));
    samples_.assign(kSamples, Eigen::MatrixXd());
    for (Eigen::MatrixXd& e : samples_) {
      Eigen::MatrixXd r(n_, n_);
      for (Eigen::Index j = 0; j < n_; ++j)
        for (Eigen::Index i = 0; i < n_; ++i) r(i, j) = sign() * scale * s.residual_size(i, j);
      e.noalias() = r * s.inverse;
    }
  }

  void accept(const OracleStep& o) {
    const StepVectors& v = *o.vectors;
    if (samples_.empty()) samples_.assign(kSamples, Eigen::MatrixXd::Zero(n_, n_));
    const double rho = double(o.rho);
    const Eigen::VectorXd a = v.column.cast<double>();
    const Eigen::VectorXd r = v.row.cast<double>();
    const Eigen::VectorXd y = v.update.cast<double>();
    const Eigen::VectorXd row_norms = v.row_norms.cast<double>();
    const double root_n = std::sqrt(double(n_));
    const double a_norm = a.norm();
    const Eigen::VectorXd dy_size = eps_ * root_n * a_norm * row_norms;
    const double drho_size = eps_ * root_n * r.norm() * a_norm;
    const Eigen::VectorXd entry_rows = eps_ * row_norms / root_n;
    const Eigen::VectorXd abs_y = eps_ * y.cwiseAbs() / std::abs(rho);
    const Eigen::VectorXd abs_r = r.cwiseAbs();
    for (Eigen::MatrixXd& e : samples_) {
      const Eigen::VectorXd ea = e * a;
      const Eigen::VectorXd ek = e.row(v.k).transpose();
      const double drho = sign() * drho_size;
      const double c = (ek.dot(a) + drho) / (rho * rho);
      const Eigen::VectorXd dy = signs().cwiseProduct(dy_size);
      e.noalias() -= (ea + dy) * (r.transpose() / rho);
      e.noalias() -= y * (ek.transpose() / rho);
      e.noalias() += y * (c * r.transpose());
      const Eigen::VectorXd sigma = signs();
      const Eigen::VectorXd tau = signs();
      e.noalias() += sigma.cwiseProduct(entry_rows) * tau.transpose();
      e.noalias() += sigma.cwiseProduct(abs_y) * tau.cwiseProduct(abs_r).transpose();
    }
  }

  /// RMS over the samples of |e_k^T E a| (absolute).
  double product_error(Eigen::Index k, const Eigen::VectorXd& a) const {
    if (samples_.empty()) return 0;
    double sum = 0;
    for (const Eigen::MatrixXd& e : samples_) {
      const double d = e.row(k).dot(a.transpose());
      sum += d * d;
    }
    return std::sqrt(sum / kSamples);
  }

  /// RMS over the samples of |e_k^T E a'| / |rho| for proposal `o`.
  double ratio_error(const OracleStep& o) const {
    const StepVectors& v = *o.vectors;
    return product_error(v.k, v.column.cast<double>()) / double(std::abs(o.rho));
  }

  /// RMS over the samples of ||E A||_F (the left residual E leaves).
  double left_residual(const MatrixLd& a) const {
    if (samples_.empty()) return 0;
    const Eigen::MatrixXd ad = a.cast<double>();
    double sum = 0;
    for (const Eigen::MatrixXd& e : samples_) sum += (e * ad).squaredNorm();
    return std::sqrt(sum / kSamples);
  }

 private:
  double sign() { return (rng_() & 1) ? -1.0 : 1.0; }
  Eigen::VectorXd signs() {
    Eigen::VectorXd s(n_);
    for (Eigen::Index i = 0; i < n_; ++i) s(i) = sign();
    return s;
  }

  double eps_;
  Eigen::Index n_;
  std::vector<Eigen::MatrixXd> samples_;  // empty while no update was propagated
  std::mt19937_64 rng_{0x5105a7e5ULL};    // fixed: a property's bound is reproducible
};

// ---- the error model along a replay (derivation in the file comment) -----------

class ErrorModel {
 public:
  /// `factor` scales the propagated rounding for strategies whose update
  /// rounds more than Sherman-Morrison's (model_factor()).
  ErrorModel(double eps, Eigen::Index n, const MatrixInfo& a0, double factor = 1)
      : eps_(eps), n_(double(n)), factor_(factor), propagated_(eps, n) {
    restart(a0);
  }

  /// Safety factor on the propagated-rounding estimate (file comment).
  static constexpr double kLambda = 16;

  /// The propagated estimate of |e_k^T (X - A^{-1}) a|, with its factors.
  double propagated_product(Eigen::Index k, const Eigen::VectorXd& a) const {
    return kLambda * factor_ * propagated_.product_error(k, a);
  }

  /// eps_m = c (1 + m) N eps.
  /// eps_m = c (g + m) N eps, g = max(1, growth / kGrowthCovered) of the
  /// last factorisation.
  double eps_m() const { return kC * (growth_ + m_) * n_ * eps_; }

  /// The LU growth || |L||U| ||_F / ||A||_F that c = 10 covers (file comment).
  static constexpr double kGrowthCovered = 4;

  struct Bound {
    bool valid = false;  // b < 1/2: the bound is meaningful
    double rel = 0;      // bound on |d rho| / |rho|
    double kappa = 0;
  };

  /// Bound on the relative error of the ratio of proposal `o`.
  Bound ratio_bound(const OracleStep& o) const {
    const double norm = std::max(norm_max_, o.candidate.norm_f);
    const double inv = std::max({inv_max_, o.sensitivity, o.candidate.inv_norm_f});
    Bound b;
    b.kappa = norm * inv;
    const double e = eps_m() * b.kappa + kLambda * factor_ * propagated_.ratio_error(o);
    b.valid = std::isfinite(e) && e < 0.5;
    b.rel = e / (1 - e) + kC * n_ * kEpsLd * b.kappa;
    return b;
  }

  /// kLambda times the left residual the propagated update roundings leave.
  double propagated_left_residual(const MatrixLd& a) const {
    return kLambda * factor_ * propagated_.left_residual(a);
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
    propagated_.accept(o);
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
    const double ell = 2 * std::log(n_ + 1) +
                       std::max(std::abs(std::log(norm_max_)), std::abs(std::log(inv_max_))) + 1;
    const double summation = (terms_ + n_) * kEpsD * (n_ * ell + sum_abs_log_);
    b.rel = logdet_sum_ + e / (1 - e) + summation;
    return b;
  }

 private:
  void restart(const MatrixInfo& a) {
    m_ = 0;
    growth_ = std::max(1.0, a.lu_growth / kGrowthCovered);
    propagated_.clear();
    if (a.state) propagated_.seed(*a.state);
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
  double growth_ = 1;
  double factor_ = 1;
  PropagatedRounding propagated_;
};

/// How much more than Sherman-Morrison a strategy's updates may round: the
/// rounding factor it registers (StrategyTraits::rounding_factor; delayed
/// updates: their growth guard's), 1 by default.
double model_factor(const std::string& name, const UpdaterOptions& o) {
  const StrategyTraits& traits = strategy_traits(name);
  return traits.rounding_factor ? traits.rounding_factor(o) : 1.0;
}

ErrorModel make_model(const std::string& name, const UpdaterOptions& o, const Case& c,
                      const CaseTrace& t) {
  return ErrorModel(storage_epsilon(o.precision), c.n(), t.initial, model_factor(name, o));
}

/// A strategy reported, as documented, a matrix singular to its working
/// precision where the error model itself makes no claim (c N eps
/// kappa_F >= 1/2 for the matrix after the move): the case ends there and
/// nothing more is asserted (check_case counts it as vacuous).
struct BeyondTheModel {};

/// accept(), with a SingularMatrixError beyond the model turned into
/// BeyondTheModel; inside the model it stays a failure.
void accept_move(DeterminantUpdater& up, const MatrixInfo& after, Precision p, Eigen::Index n) {
  try {
    up.accept();
  } catch (const SingularMatrixError&) {
    if (kC * double(n) * storage_epsilon(p) * after.norm_f * after.inv_norm_f >= 0.5) {
      throw BeyondTheModel{};
    }
    throw;
  }
}

double rel_error(double value, Ld reference) {
  return double(std::abs(Ld(value) - reference) / std::abs(reference));
}

std::unique_ptr<DeterminantUpdater> make(const std::string& name, UpdaterOptions o,
                                         int recompute_every, double breakdown = -1.0) {
  o.recompute_every = recompute_every;
  if (breakdown >= 0) o.breakdown = breakdown;
  return make_updater(name, o);
}

std::optional<PropertyFailure> failure(Property p, std::string message) {
  return PropertyFailure{std::string(to_string(p)), std::move(message)};
}

// ---- bitwise snapshots for the reject property ------------------------------------

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
/// excepted: ratio() legitimately counts a breakdown it reports). Returns
/// what differs, or "" when nothing does.
std::string state_difference(const Snapshot& x, const Snapshot& y) {
  if (std::memcmp(&x.log_det.log_abs, &y.log_det.log_abs, sizeof(double)) != 0 ||
      x.log_det.sign != y.log_det.sign) {
    return fmt::format("log|det| {} (sign {}) became {} (sign {})", x.log_det.log_abs,
                       x.log_det.sign, y.log_det.log_abs, y.log_det.sign);
  }
  if (x.state.inverse.has_value() != y.state.inverse.has_value())
    return "inverse appeared/vanished";
  if (x.state.inverse && !same_bits(*x.state.inverse, *y.state.inverse)) return "inverse changed";
  if (x.state.qr.has_value() != y.state.qr.has_value()) return "QR factors appeared/vanished";
  if (x.state.qr) {
    if (!same_bits(x.state.qr->q, y.state.qr->q)) return "Q changed";
    if (!same_bits(x.state.qr->r, y.state.qr->r)) return "R changed";
    if (x.state.qr->column_of != y.state.qr->column_of) return "column permutation changed";
  }
  if (x.counters.recomputes != y.counters.recomputes) return "recompute counter changed";
  if (x.counters.flushes != y.counters.flushes) return "flush counter changed";
  if (x.counters.splits != y.counters.splits) return "split counter changed";
  return "";
}

/// A strategy run through a whole case (then flush()), with the error model
/// that went along.
struct Playback {
  std::unique_ptr<DeterminantUpdater> updater;
  ErrorModel model;
};

Playback play(const std::string& name, const UpdaterOptions& options, const Case& c,
              const CaseTrace& t) {
  Playback r{make(name, options, options.recompute_every), make_model(name, options, c, t)};
  r.updater->reset(c.initial);
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    r.updater->ratio(c.moves[i].electron, c.moves[i].column);
    if (c.moves[i].accept) {
      const auto before = r.updater->counters().recomputes;
      accept_move(*r.updater, t.after[i], options.precision, c.n());
      r.model.accepted(t.steps[i], t.after[i], r.updater->counters().recomputes > before);
    } else {
      r.updater->reject();
    }
  }
  r.updater->flush();
  return r;
}

// ---- the properties ---------------------------------------------------------------

// Ratios agree with the oracle within the derived bound
// (1 + m) c N eps kappa_max / (1 - .), at every step of every sequence; every
// ratio is finite.
std::optional<PropertyFailure> check_ratios(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t, CheckStats& stats) {
  const Property p = Property::ratios_match_oracle;
  auto up = make(name, options, options.recompute_every);
  up->reset(c.initial);
  ErrorModel model = make_model(name, options, c, t);
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const CaseMove& mv = c.moves[i];
    const OracleStep& o = t.steps[i];
    const Ratio r = up->ratio(mv.electron, mv.column);
    ++stats.ratios;
    if (!std::isfinite(r.value)) {
      return failure(
          p, fmt::format("move {} (k={}): ratio {} is not finite", i, mv.electron, r.value));
    }
    const auto b = model.ratio_bound(o);
    if (b.valid) {
      ++stats.ratios_checked;
      const double err = rel_error(r.value, o.rho);
      if (!(err <= b.rel)) {
        return failure(p, fmt::format("move {} (k={}, m={}): rho={:.17g} oracle={:.17g} "
                                      "rel.err={:.3e} > bound={:.3e} (kappa_max={:.3e}, "
                                      "eps_m={:.3e})",
                                      i, mv.electron, model.m(), r.value, double(o.rho), err, b.rel,
                                      b.kappa, model.eps_m()));
      }
    }
    if (mv.accept) {
      const auto before = up->counters().recomputes;
      accept_move(*up, t.after[i], options.precision, c.n());
      model.accepted(o, t.after[i], up->counters().recomputes > before);
    } else {
      up->reject();
    }
  }
  return std::nullopt;
}

// After any sequence and flush(), log|det| and its sign match the oracle, and
// the maintained state satisfies its residual bounds.
std::optional<PropertyFailure> check_log_det_and_residuals(const std::string& name,
                                                           const UpdaterOptions& options,
                                                           const Case& c, const CaseTrace& t,
                                                           CheckStats& stats) {
  const Property p = Property::log_det_and_residuals_match_oracle;
  const Playback run = play(name, options, c, t);
  const DeterminantUpdater* up = run.updater.get();
  const ErrorModel& model = run.model;
  const MatrixInfo& fin = t.final_info();
  const LogDet ld = up->log_det();
  const auto lb = model.logdet_bound();
  if (lb.valid) {
    ++stats.log_dets_checked;
    const double err = double(std::abs(Ld(ld.log_abs) - fin.log_det.log_abs));
    if (!(err <= lb.rel)) {
      return failure(p, fmt::format("log|det| = {:.17g}, oracle {:.17g}: error {:.3e} > bound "
                                    "{:.3e} (m={}, kappa_max={:.3e})",
                                    ld.log_abs, double(fin.log_det.log_abs), err, lb.rel, model.m(),
                                    lb.kappa));
    }
    if (ld.sign != fin.log_det.sign) {
      return failure(p, fmt::format("sign(det) = {}, oracle {}", ld.sign, fin.log_det.sign));
    }
  }

  const MaintainedState st = up->maintained();
  const Eigen::Index n = c.n();
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
    // max(kappa_max, norm_max ||X||_F): ||X||_F is the computed inverse's
    // norm, which for a state outside the model may exceed the oracle's.
    const Eigen::MatrixXd& x = *st.inverse;
    const MatrixLd xl = x.cast<Ld>();
    const double left = double((xl * a - MatrixLd::Identity(n, n)).norm());
    const double bound = eps_m * std::max(model.kappa_max(), model.norm_max() * x.norm()) +
                         model.propagated_left_residual(a);
    const double right = double((a * xl - MatrixLd::Identity(n, n)).norm());
    const double kappa_final = fin.norm_f * fin.inv_norm_f;
    if (bound < 0.5) {
      ++stats.residuals_checked;
      if (!(left <= bound) || !(right <= bound * kappa_final)) {
        return failure(p, fmt::format("||X A - I||_F = {:.3e} (bound {:.3e}), ||A X - I||_F = "
                                      "{:.3e} (bound {:.3e}); m = {}, eps_m = {:.3e}, "
                                      "kappa_max = {:.3e}, kappa_F(final) = {:.3e}",
                                      left, bound, right, bound * kappa_final, model.m(), eps_m,
                                      model.kappa_max(), kappa_final));
      }
    }
  }
  if (st.qr) {
    const QrFactors& f = *st.qr;
    if (f.q.rows() != n || f.q.cols() != n || f.r.rows() != n || f.r.cols() != n) {
      return failure(p, fmt::format("Q is {}x{}, R is {}x{}, N = {}", f.q.rows(), f.q.cols(),
                                    f.r.rows(), f.r.cols(), n));
    }
    std::vector<Eigen::Index> sorted = f.column_of;
    std::sort(sorted.begin(), sorted.end());
    for (Eigen::Index j = 0; j < n; ++j) {
      if (std::size_t(n) != sorted.size() || sorted[std::size_t(j)] != j) {
        return failure(p, "column_of is not a permutation of 0..N-1");
      }
    }
    for (Eigen::Index j = 0; j < n; ++j) {
      for (Eigen::Index i = j + 1; i < n; ++i) {
        if (f.r(i, j) != 0.0) {
          return failure(p, fmt::format("R({}, {}) = {} below the diagonal", i, j, f.r(i, j)));
        }
      }
    }
    MatrixLd ap(n, n);
    for (Eigen::Index j = 0; j < n; ++j) ap.col(j) = a.col(f.column_of[std::size_t(j)]);
    const MatrixLd q = f.q.cast<Ld>();
    const double qr_residual = double((q * f.r.cast<Ld>() - ap).norm());
    const double orthogonality = double((q.transpose() * q - MatrixLd::Identity(n, n)).norm());
    ++stats.residuals_checked;
    if (!(qr_residual <= eps_m * model.norm_max()) || !(orthogonality <= eps_m)) {
      return failure(
          p, fmt::format("||Q R - A P||_F = {:.3e} (bound {:.3e}), ||Q^T Q - I||_F = "
                         "{:.3e} (bound {:.3e}); m = {}",
                         qr_residual, eps_m * model.norm_max(), orthogonality, eps_m, model.m()));
    }
  }
  return std::nullopt;
}

// A rejected proposal leaves the state bit-for-bit unchanged, at every point
// of a sequence, and a fully rejected sequence leaves the state of reset().
std::optional<PropertyFailure> check_reject(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t) {
  const Property p = Property::reject_leaves_state_unchanged;
  auto up = make(name, options, options.recompute_every);
  up->reset(c.initial);
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const CaseMove& mv = c.moves[i];
    if (mv.accept) {
      up->ratio(mv.electron, mv.column);
      accept_move(*up, t.after[i], options.precision, c.n());
      continue;
    }
    const Snapshot before = snapshot(*up);
    up->ratio(mv.electron, mv.column);
    up->reject();
    const std::string diff = state_difference(before, snapshot(*up));
    if (!diff.empty()) {
      return failure(p, fmt::format("move {} (k={}) rejected: {}", i, mv.electron, diff));
    }
  }

  auto fresh = make(name, options, options.recompute_every);
  fresh->reset(c.initial);
  const Snapshot initial = snapshot(*fresh);
  for (const CaseMove& mv : c.moves) {
    fresh->ratio(mv.electron, mv.column);
    fresh->reject();
  }
  fresh->flush();
  const std::string diff = state_difference(initial, snapshot(*fresh));
  if (!diff.empty()) {
    return failure(p, fmt::format("all {} moves rejected, then flush(): {}", c.moves.size(), diff));
  }
  return std::nullopt;
}

// Near-singular and non-finite proposals are reported as breakdown with a
// finite value, never as NaN or inf; an accepted near-singular move leaves a
// finite state (or a SingularMatrixError, the documented outcome for a matrix
// singular to working precision). Runs without periodic recompute.
std::optional<PropertyFailure> check_near_singular(const std::string& name,
                                                   const UpdaterOptions& options, const Case& c,
                                                   const CaseTrace& t, CheckStats& stats) {
  const Property p = Property::near_singular_is_breakdown;
  const Eigen::Index n = c.n();
  const Eigen::Index k = c.probe_column;
  const Eigen::Index j = c.probe_source;

  // Everything the threshold depends on, from the oracle: the final state
  // after the prefix, its worst conditioning, m <= number of accepts.
  ErrorModel model = make_model(name, options, c, t);
  for (std::size_t i = 0; i < c.moves.size(); ++i)
    if (c.moves[i].accept) model.accepted(t.steps[i], t.after[i], false);
  // The rounding propagated through the prefix's updates, as it reaches a
  // copy of column j (the worse of the copies probed below).
  const double propagated =
      n > 1 ? model.propagated_product(k, t.final_matrix.col(j)) : 0.0;
  const double eta = model.eps_m() * model.kappa_max() + propagated;
  if (!(eta < 0.5)) {  // precondition: the threshold below means something
    ++stats.vacuous;
    return std::nullopt;
  }
  ++stats.breakdowns_checked;
  // Noise floor of a ratio whose true value is 0 (a copied column: A' has
  // two equal columns). In the error model the state carries a backward
  // error eps_m ||A|| amplified by at most kappa_max, so the computed rho
  // lies within eps_m / (1 - eta) * norm_max * inv_max * ||A^{-1} a'||,
  // with ||A^{-1} a'|| = ||e_j|| = 1 for a copy and at most sqrt(2) for the
  // other proposals below; i.e. sqrt(2) eps_m kappa_max / (1 - eta), with
  // the rounding the prefix's updates propagated (ErrorModel) added to eta.
  // Twice that is the breakdown threshold.
  const double noise = std::sqrt(2.0) * eta / (1 - eta);
  const double threshold = 2 * noise;
  auto up = make(name, options, 0, threshold);
  up->reset(c.initial);
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const Ratio r = up->ratio(c.moves[i].electron, c.moves[i].column);
    if (!std::isfinite(r.value)) {
      return failure(p, fmt::format("prefix move {}: ratio {} is not finite", i, r.value));
    }
    c.moves[i].accept ? accept_move(*up, t.after[i], options.precision, n) : up->reject();
  }

  auto expect_breakdown = [&](const Eigen::VectorXd& column,
                              const char* what) -> std::optional<PropertyFailure> {
    const auto before = up->counters().breakdowns;
    const Ratio r = up->ratio(k, column);
    if (!std::isfinite(r.value) || !r.breakdown || up->counters().breakdowns != before + 1) {
      return failure(p, fmt::format("{} for column {}: rho={} breakdown={} (counted {}), "
                                    "threshold={:.3e} (eps_m kappa_max = {:.3e})",
                                    what, k, r.value, r.breakdown,
                                    up->counters().breakdowns - before, threshold, eta));
    }
    return std::nullopt;
  };
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
  if (auto f = expect_breakdown(zero, "zero column")) return f;
  up->reject();
  Eigen::VectorXd bad = t.final_matrix.col(k);
  bad(n / 2) = std::numeric_limits<double>::quiet_NaN();
  if (auto f = expect_breakdown(bad, "NaN entry")) return f;
  up->reject();
  bad(n / 2) = std::numeric_limits<double>::infinity();
  if (auto f = expect_breakdown(bad, "inf entry")) return f;
  up->reject();
  if (n < 2) return std::nullopt;
  if (auto f = expect_breakdown(t.final_matrix.col(j), "copy of another column")) return f;
  up->reject();
  // rho = delta (+ the rounding of a_j + delta a_k, ~eps ||x_k|| ||a_j||):
  // delta = threshold / 4 (>= 7 N eps kappa) keeps A' clear of exact
  // singularity in double while |rho| + noise < threshold.
  const double delta = threshold / 4;
  const Eigen::VectorXd near = t.final_matrix.col(j) + delta * t.final_matrix.col(k);
  if (auto f = expect_breakdown(near, "near-singular column")) return f;
  try {
    up->accept();
  } catch (const SingularMatrixError&) {
    return std::nullopt;
  }
  const LogDet ld = up->log_det();
  const MaintainedState st = up->maintained();
  const bool nan_state = std::isnan(ld.log_abs) || (st.inverse && st.inverse->hasNaN()) ||
                         (st.qr && (st.qr->q.hasNaN() || st.qr->r.hasNaN()));
  if (nan_state) return failure(p, "accepting the near-singular column left NaN in the state");
  const Ratio after = up->ratio(k, t.final_matrix.col(k));
  if (!std::isfinite(after.value)) {
    return failure(p, fmt::format("after the accepted near-singular column, ratio {} is not "
                                  "finite",
                                  after.value));
  }
  up->reject();
  return std::nullopt;
}

// ---- update cycles ------------------------------------------------------------------
//
// Error model of a cycle's ratio rho = det(A_after) / det(A_before), in the
// terms of the file comment (eps_m = c (g + m) N eps, kappa_F(A) =
// ||A||_F ||A^{-1}||_F, m the updates carried since the last
// refactorisation, this cycle's included).
//  * A strategy that completes the cycle (StrategyTraits::cycles: splitting,
//    delayed within its window, a whole-cycle kernel) never forms an
//    intermediate matrix. Its state is the inverse of A_before + Delta,
//    ||Delta||_F <= eps_m ||A||_F, and its ratio is the exact one of the
//    perturbed data: d log rho = tr(A_after^{-1} Delta') - tr(A_before^{-1}
//    Delta) (Delta' = Delta on the columns kept), so |d rho| / |rho| <=
//    eps_m (kappa_F(A_before) + kappa_F(A_after)) <= 2 eps_m kappa, kappa the
//    largest kappa_F since the last refactorisation (an inverse carries the
//    errors of earlier states). The cycle's own arithmetic forms the m x m
//    B = W^T C (dot products of length N: |dB_ij| <= N eps |w_i|^T |c_j|)
//    and its determinant, or, for splitting, at most 2 m pieces of the same
//    kind (m pieces and at most m deferred halves): c 2 m N eps beta with
//    beta = ||B^{-1}||_F ||W||_F ||C||_F (Oracle::block_ratio). So
//      e = 2 eps_m kappa + c 2 m N eps beta.
//  * A strategy that applies the cycle one update at a time multiplies m
//    ratios, each against the matrix just before it. Each has kappa_rho <=
//    3 ||A||_F max(||A^{-1}||_F, ||A'^{-1}||_F) (Sherman-Morrison: the new
//    inverse is A^{-1} - (A^{-1} a' - e_k) r^T / rho and its row k is
//    r / rho), so the product errs by at most e = 3 m eps_m kappa, kappa now
//    over the intermediate matrices too (+inf when one is exactly singular:
//    then only a finite value or a breakdown is asserted, and the state's
//    later cycles make no claim until the strategy refactorises).
//  * As for single ratios, |d rho| / |rho| <= e / (1 - e) while e < 1/2 (the
//    comparison is made only there), plus the oracle's own c N eps_ld
//    (kappa + beta). Strategies whose updates round more than
//    Sherman-Morrison's scale the carried m by their rounding factor.
// A SingularMatrixError is the documented outcome only where a matrix the
// strategy forms (A_after; for update-at-a-time cycles also the
// intermediates) is beyond the model (c N eps kappa_F >= 1/2); the check
// then re-establishes the strategy from A_after as the runner does.

double kappa_f(const MatrixInfo& a) {
  const double k = a.norm_f * a.inv_norm_f;
  return std::isfinite(k) ? k : std::numeric_limits<double>::infinity();
}

/// kappa_F and log|det| of A from a long-double LU (+inf and -inf for an
/// exactly singular A).
std::pair<double, Ld> kappa_and_log_det(const Eigen::MatrixXd& a) {
  const MatrixLd al = a.cast<Ld>();
  const Eigen::PartialPivLU<MatrixLd> lu(al);
  const double k = double(al.norm() * lu.inverse().norm());
  Ld log_abs = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) log_abs += std::log(std::abs(lu.matrixLU()(i, i)));
  if (!std::isfinite(k)) return {std::numeric_limits<double>::infinity(), -std::numeric_limits<Ld>::infinity()};
  return {k, log_abs};
}

/// Whether the strategy completes this cycle without forming its
/// intermediate matrices (StrategyTraits::cycles).
bool completes_cycle(const std::string& name, const UpdaterOptions& o, std::size_t updates,
                     const CycleStep& step) {
  switch (strategy_traits(name, o).cycles) {
    case StrategyTraits::Cycles::whole: return true;
    case StrategyTraits::Cycles::window:
      return updates == step.columns.size() && updates <= std::size_t(std::max(o.k, 0));
    case StrategyTraits::Cycles::per_update: break;
  }
  return false;
}

/// The error model along a sequence of cycles (derivation above).
class CycleModel {
 public:
  CycleModel(double eps, Eigen::Index n, const MatrixInfo& a0, double factor)
      : eps_(eps), n_(double(n)), factor_(factor) {
    restart(a0);
  }

  void restart(const MatrixInfo& a) {
    m_ = 0;
    growth_ = std::max(1.0, a.lu_growth / ErrorModel::kGrowthCovered);
    kappa_ = kappa_f(a);
  }

  /// kappa over the state's window and the matrices this cycle forms.
  double kappa(const CycleStep& s, bool completes) const {
    return std::max({kappa_, s.kappa_before, s.kappa_after, completes ? 0.0 : s.kappa_path});
  }

  ErrorModel::Bound bound(const CycleStep& s, bool completes, int updates) const {
    const double eps_m = kC * (growth_ + factor_ * (m_ + updates)) * n_ * eps_;
    ErrorModel::Bound b;
    b.kappa = kappa(s, completes);
    const double e = completes ? 2 * eps_m * b.kappa + kC * 2 * updates * n_ * eps_ * s.beta
                               : 3 * updates * eps_m * b.kappa;
    b.valid = std::isfinite(e) && e < 0.5;
    b.rel = e / (1 - e) + kC * n_ * kEpsLd * (b.kappa + s.beta);
    return b;
  }

  /// Whether a SingularMatrixError is the documented outcome of the cycle.
  bool singular_allowed(const CycleStep& s, bool completes) const {
    const double kappa = completes ? s.kappa_after : std::max(s.kappa_after, s.kappa_path);
    return !(kC * n_ * eps_ * kappa < 0.5);
  }

  /// `refactorised`: the strategy refactorised during the cycle, at a
  /// matrix the model does not know (for update-at-a-time cycles possibly
  /// an intermediate one, whose conditioning then stays in the window).
  void applied(const CycleStep& s, bool completes, int updates, bool refactorised) {
    if (refactorised) {
      restart(s.after);
      if (!completes) kappa_ = std::max(kappa_, s.kappa_path);
      return;
    }
    m_ += updates;
    kappa_ = kappa(s, completes);
  }

 private:
  double eps_;
  double n_;
  double factor_;
  int m_ = 0;
  double growth_ = 1;
  double kappa_ = 1;
};

/// The cycle's exact replaced columns in order of application.
std::vector<ColumnUpdate> cycle_updates(const Case& c, std::size_t first, int length) {
  std::vector<ColumnUpdate> updates;
  for (std::size_t i = first; i < first + std::size_t(length); ++i)
    updates.push_back({c.moves[i].electron, c.moves[i].column});
  return updates;
}

// Each cycle's ratio matches the oracle's det(A_after) / det(A_before)
// within the bound above wherever it is valid (for update-at-a-time cycles:
// unless the strategy reported a breakdown); every ratio is finite; a
// SingularMatrixError only where the model allows it.
std::optional<PropertyFailure> check_cycles(const std::string& name, const UpdaterOptions& options,
                                            const Case& c, const CaseTrace& t, CheckStats& stats) {
  const Property p = Property::cycle_ratio_matches_oracle;
  auto up = make(name, options, options.recompute_every);
  up->reset(c.initial);
  CycleModel model(storage_epsilon(options.precision), c.n(), t.initial,
                   model_factor(name, options));
  Eigen::MatrixXd current = c.initial;
  std::size_t first = 0;
  for (std::size_t i = 0; i < c.cycles.size(); ++i) {
    const CycleStep& step = t.cycles[i];
    const std::vector<ColumnUpdate> updates = cycle_updates(c, first, c.cycles[i]);
    first += updates.size();
    for (const ColumnUpdate& u : updates) current.col(u.k) = u.column;
    const bool completes = completes_cycle(name, options, updates.size(), step);
    const int m = int(updates.size());
    const ErrorModel::Bound b = model.bound(step, completes, m);
    const auto where = [&] {
      return fmt::format("cycle {} ({} updates, columns {}, {})", i, m,
                         fmt::join(step.columns, " "),
                         completes ? "completed by the strategy" : "one update at a time");
    };
    ++stats.cycles;
    const auto recomputes = up->counters().recomputes;
    CycleRatio r;
    try {
      r = up->apply_cycle(updates);
    } catch (const SingularMatrixError& e) {
      if (!model.singular_allowed(step, completes)) {
        return failure(p, fmt::format("{}: SingularMatrixError although every matrix it forms "
                                      "is regular within the model (kappa_F(A_after) = {:.3e}): "
                                      "{}",
                                      where(), step.kappa_after, e.what()));
      }
      try {  // as the runner does: from the exact matrix after the cycle
        up->reset(current);
      } catch (const SingularMatrixError&) {
        throw BeyondTheModel{};
      }
      model.restart(step.after);
      continue;
    }
    if (!std::isfinite(r.value)) {
      return failure(p, fmt::format("{}: ratio {} is not finite (breakdown={})", where(), r.value,
                                    r.breakdown));
    }
    // One update at a time, every ratio of a cycle inside the model at least
    // breakdown / (1 - bound) in magnitude is computed above the threshold
    // (each ratio errs by at most the cycle's bound): a breakdown there is a
    // finding (a state that lost an update, say), not a singular intermediate.
    if (!completes && r.breakdown && b.valid && b.rel < 1 &&
        step.min_step * (1 - b.rel) >= options.breakdown) {
      return failure(p, fmt::format("{}: reported a breakdown, but every ratio of the cycle is "
                                    "regular (the smallest |det A_i / det A_i-1| is {:.3e}, "
                                    "threshold {:.3e}, bound {:.3e})",
                                    where(), step.min_step, options.breakdown, b.rel));
    }
    if (b.valid && (completes || !r.breakdown)) {
      ++stats.cycles_checked;
      const double err = rel_error(r.value, step.rho);
      if (!(err <= b.rel)) {
        return failure(p, fmt::format("{}: rho={:.17g} oracle={:.17g} rel.err={:.3e} > "
                                      "bound={:.3e} (kappa={:.3e}, beta={:.3e}, breakdown={})",
                                      where(), r.value, double(step.rho), err, b.rel, b.kappa,
                                      step.beta, r.breakdown));
      }
    }
    model.applied(step, completes, m, up->counters().recomputes > recomputes);
  }
  return std::nullopt;
}

void validate(const Case& c) {
  const Eigen::Index n = c.n();
  if (n < 1 || c.initial.cols() != n) {
    throw std::invalid_argument(
        fmt::format("case: the initial matrix must be N x N with N >= 1, "
                    "got {} x {}",
                    c.initial.rows(), c.initial.cols()));
  }
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const CaseMove& mv = c.moves[i];
    if (mv.electron < 0 || mv.electron >= n || mv.column.size() != n) {
      throw std::invalid_argument(
          fmt::format("case: move {} has electron {} and a column of {} "
                      "entries (N = {})",
                      i, mv.electron, mv.column.size(), n));
    }
  }
  std::size_t in_cycles = 0;
  for (int length : c.cycles) {
    if (length < 1) throw std::invalid_argument("case: an update cycle of no move");
    in_cycles += std::size_t(length);
  }
  if (c.has_cycles() && in_cycles != c.moves.size()) {
    throw std::invalid_argument(fmt::format("case: its cycles hold {} moves, it has {}", in_cycles,
                                            c.moves.size()));
  }
}

/// The probe NearSingularIsBreakdown uses must name two distinct columns (one
/// when N = 1): a "copy" of the column itself has rho = 1.
void validate_probe(const Case& c) {
  const Eigen::Index n = c.n();
  if (c.probe_column < 0 || c.probe_column >= n || c.probe_source < 0 || c.probe_source >= n ||
      (n > 1 && c.probe_source == c.probe_column)) {
    throw std::invalid_argument(
        fmt::format("case: probe columns {} / {} are not two distinct "
                    "columns of 0..{}",
                    c.probe_column, c.probe_source, n - 1));
  }
}

}  // namespace

// ---- public: cases and properties ---------------------------------------------------

std::size_t Case::accepted() const {
  return std::size_t(
      std::count_if(moves.begin(), moves.end(), [](const CaseMove& m) { return m.accept; }));
}

const std::vector<Property>& all_properties() {
  static const std::vector<Property> all = {
      Property::ratios_match_oracle, Property::log_det_and_residuals_match_oracle,
      Property::reject_leaves_state_unchanged, Property::near_singular_is_breakdown,
      Property::cycle_ratio_matches_oracle};
  return all;
}

bool applies(Property p, const Case& c) {
  return (p == Property::cycle_ratio_matches_oracle) == c.has_cycles();
}

bool applies(Property p, CaseMode mode) {
  return (p == Property::cycle_ratio_matches_oracle) == (mode == CaseMode::cycles);
}

std::string_view to_string(Property p) {
  switch (p) {
    case Property::ratios_match_oracle:
      return "RatiosMatchOracle";
    case Property::log_det_and_residuals_match_oracle:
      return "LogDetAndResidualsMatchOracle";
    case Property::reject_leaves_state_unchanged:
      return "RejectLeavesStateUnchanged";
    case Property::near_singular_is_breakdown:
      return "NearSingularIsBreakdown";
    case Property::cycle_ratio_matches_oracle:
      return "CycleRatioMatchesOracle";
  }
  return "?";
}

std::vector<std::string> property_names() {
  std::vector<std::string> names;
  for (Property p : all_properties()) names.emplace_back(to_string(p));
  return names;
}

Property parse_property(std::string_view name) {
  for (Property p : all_properties())
    if (to_string(p) == name) return p;
  throw std::invalid_argument("unknown property '" + std::string(name) + "'" +
                              suggestion_suffix(name, property_names()));
}

namespace {

/// The oracle along a case of update cycles.
void trace_cycles(const Case& c, Oracle& oracle, CaseTrace& t) {
  Eigen::MatrixXd current = c.initial;
  std::size_t first = 0;
  for (int length : c.cycles) {
    CycleStep s;
    // The distinct columns, the last write to each winning.
    std::vector<std::size_t> source;
    for (std::size_t i = first + std::size_t(length); i-- > first;) {
      const Eigen::Index k = c.moves[i].electron;
      if (std::find(s.columns.begin(), s.columns.end(), k) != s.columns.end()) continue;
      s.columns.push_back(k);
      source.push_back(i);
    }
    MatrixLd columns(c.n(), Eigen::Index(source.size()));
    for (std::size_t j = 0; j < source.size(); ++j)
      columns.col(Eigen::Index(j)) = c.moves[source[j]].column.cast<Ld>();
    s.rho = oracle.block_ratio(s.columns, columns, s.beta);
    s.kappa_before = kappa_f(oracle.info());
    Ld log_det = oracle.info().log_det.log_abs;
    s.min_step = std::numeric_limits<double>::infinity();
    const auto step_to = [&](Ld next) {
      s.min_step = std::min(s.min_step, double(std::exp(next - log_det)));
      log_det = next;
    };
    for (std::size_t i = first; i < first + std::size_t(length); ++i) {
      current.col(c.moves[i].electron) = c.moves[i].column;
      if (i + 1 < first + std::size_t(length)) {
        const auto [kappa, next] = kappa_and_log_det(current);
        s.kappa_path = std::max(s.kappa_path, kappa);
        step_to(next);
      }
    }
    oracle.set(current);
    s.after = oracle.info();
    s.kappa_after = kappa_f(s.after);
    step_to(s.after.log_det.log_abs);
    t.cycles.push_back(std::move(s));
    first += std::size_t(length);
  }
  t.final_matrix = current;
}

}  // namespace

std::shared_ptr<const CaseTrace> trace_case(const Case& c) {
  validate(c);
  auto t = std::make_shared<CaseTrace>();
  Oracle oracle(c.initial);
  t->initial = oracle.info();
  Eigen::MatrixXd current = c.initial;
  if (c.has_cycles()) {
    trace_cycles(c, oracle, *t);
    return t;
  }
  for (const CaseMove& mv : c.moves) {
    t->steps.push_back(oracle.propose(mv.electron, mv.column));
    if (mv.accept) {
      current.col(mv.electron) = mv.column;
      oracle.set(current);
    }
    t->after.push_back(oracle.info());
  }
  t->final_matrix = current;
  return t;
}

std::optional<PropertyFailure> check_case(Property property, const std::string& strategy,
                                          const UpdaterOptions& options, const Case& c,
                                          const CaseTrace& trace, CheckStats* stats) {
  validate(c);
  if (property == Property::near_singular_is_breakdown) validate_probe(c);
  make_updater(strategy, options);  // a bad configuration is bad input, not a failure
  CheckStats local;
  CheckStats& s = stats ? *stats : local;
  if (!applies(property, c)) {
    ++s.vacuous;
    return std::nullopt;
  }
  try {
    switch (property) {
      case Property::ratios_match_oracle:
        return check_ratios(strategy, options, c, trace, s);
      case Property::log_det_and_residuals_match_oracle:
        return check_log_det_and_residuals(strategy, options, c, trace, s);
      case Property::reject_leaves_state_unchanged:
        return check_reject(strategy, options, c, trace);
      case Property::near_singular_is_breakdown:
        return check_near_singular(strategy, options, c, trace, s);
      case Property::cycle_ratio_matches_oracle:
        return check_cycles(strategy, options, c, trace, s);
    }
  } catch (const BeyondTheModel&) {
    ++s.vacuous;
    return std::nullopt;
  } catch (const std::exception& e) {
    // Valid input (a matrix regular to working precision, the protocol
    // followed) must not make a strategy throw.
    return failure(property, std::string("the strategy threw: ") + e.what());
  }
  return std::nullopt;
}

std::optional<PropertyFailure> check_case(Property property, const std::string& strategy,
                                          const UpdaterOptions& options, const Case& c,
                                          CheckStats* stats) {
  return check_case(property, strategy, options, c, *trace_case(c), stats);
}

std::optional<PropertyFailure> check_all(const std::string& strategy, const UpdaterOptions& options,
                                         const Case& c, const CaseTrace& trace, CheckStats* stats) {
  for (Property p : all_properties())
    if (auto f = check_case(p, strategy, options, c, trace, stats)) return f;
  return std::nullopt;
}

// ---- public: configurations ----------------------------------------------------------

std::ostream& operator<<(std::ostream& os, const PropertyConfig& c) { return os << c.label; }

std::vector<PropertyConfig> property_configs() {
  static const int kWindows[] = {16, 1, 3};  // the default first
  std::vector<PropertyConfig> configs;
  auto add = [&](const std::string& name, Precision p, int k, const std::string& variant) {
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
    for (const PropertyConfig& c : configs)
      if (c.label == label) return;
    configs.push_back({name, o, label});
  };
  for (const std::string& name : known_strategies())
    for (Precision p : supported_precisions(name)) add(name, p, kWindows[0], "");
  for (const std::string& name : known_strategies()) {
    const StrategyTraits& traits = strategy_traits(name);
    std::vector<std::string> variants = {""};
    variants.insert(variants.end(), traits.variants.begin(), traits.variants.end());
    for (Precision p : supported_precisions(name))
      for (int k : kWindows) {
        if (!traits.windowed && k != kWindows[0]) continue;
        for (const std::string& variant : variants) add(name, p, k, variant);
      }
  }
  return configs;
}

// ---- public: generators -----------------------------------------------------------------

std::string_view to_string(CaseMode m) {
  switch (m) {
    case CaseMode::randsvd: return "randsvd";
    case CaseMode::adversarial: return "adversarial";
    case CaseMode::cycles: return "cycles";
  }
  return "?";
}

std::vector<std::string> case_mode_names() { return {"randsvd", "adversarial", "cycles"}; }

CaseMode parse_case_mode(std::string_view name) {
  if (name == "randsvd") return CaseMode::randsvd;
  if (name == "adversarial") return CaseMode::adversarial;
  if (name == "cycles") return CaseMode::cycles;
  throw std::invalid_argument("unknown workload '" + std::string(name) + "'" +
                              suggestion_suffix(name, case_mode_names()));
}

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

namespace {

/// log(eps_s) / log(eps_d): the fraction of double's digits a storage
/// precision has (0.46 for float).
double digit_fraction(Precision p) { return std::log(storage_epsilon(p)) / std::log(kEpsD); }


struct AdversarialRecipe {
  int n = 1;
  double log10_inv_eta = 0;
  int length = 0;
  int chain = 1;
  int hold = 0;
  std::vector<int> accepts;
  std::uint64_t seed = 0;
};

Eigen::VectorXd normal_vector(Eigen::Index n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = normal(rng);
  return v;
}

/// Cycles of collapse / hold / release on distinct columns c_0..c_chain
/// (consecutive from a random start), as the adversarial workload lays
/// them out; the sequence is cut at `length`.
Case build_adversarial_case(const AdversarialRecipe& r) {
  std::mt19937_64 rng(r.seed);
  const Eigen::Index n = r.n;
  const double eta = std::pow(10.0, -r.log10_inv_eta);
  Case c;
  c.initial.resize(n, n);
  for (Eigen::Index j = 0; j < n; ++j) c.initial.col(j) = normal_vector(n, rng);
  Eigen::MatrixXd current = c.initial;
  auto push = [&](Eigen::Index k, Eigen::VectorXd column) {
    const std::size_t i = c.moves.size();
    CaseMove mv{k, std::move(column), r.accepts[i] != 0};
    if (mv.accept) current.col(k) = mv.column;
    c.moves.push_back(std::move(mv));
  };
  const auto length = std::size_t(r.length);
  const Eigen::Index chain = std::min<Eigen::Index>(r.chain, n - 1);
  while (c.moves.size() < length) {
    if (chain == 0) {  // N = 1: nothing to collapse onto
      push(0, normal_vector(n, rng));
      continue;
    }
    const Eigen::Index start = std::uniform_int_distribution<Eigen::Index>(0, n - 1)(rng);
    auto col = [&](Eigen::Index t) { return (start + t) % n; };
    for (Eigen::Index t = 1; t <= chain && c.moves.size() < length; ++t) {
      const Eigen::VectorXd base = current.col(col(t - 1));
      const Eigen::VectorXd g = normal_vector(n, rng);
      push(col(t), base + eta * base.norm() * g / g.norm());
    }
    const Eigen::Index others = n - chain - 1;
    for (int h = 0; h < r.hold && others > 0 && c.moves.size() < length; ++h) {
      const Eigen::Index o = std::uniform_int_distribution<Eigen::Index>(0, others - 1)(rng);
      push(col(chain + 1 + o), normal_vector(n, rng));
    }
    for (Eigen::Index t = chain; t >= 1 && c.moves.size() < length; --t) {
      push(col(t), normal_vector(n, rng));
    }
  }
  return c;
}

/// The picks of the breakdown probe (last in the shrink order).
void pick_probe(Case& c) {
  const Eigen::Index n = c.n();
  c.probe_column = *rc::gen::inRange<Eigen::Index>(0, n);
  c.probe_source =
      n > 1 ? (c.probe_column + *rc::gen::inRange<Eigen::Index>(1, n)) % n : c.probe_column;
}

/// 0 = reject, 1..3 = accept: 3/4 accepted, and shrinking turns accepts into rejects.
std::vector<int> pick_accepts(int length, bool all_accepted) {
  if (all_accepted) return std::vector<int>(std::size_t(length), 1);
  return *rc::gen::container<std::vector<int>>(std::size_t(length), rc::gen::inRange(0, 4));
}

GeneratedCase generate_randsvd(const CaseLimits& lim) {
  const int n = *rc::gen::inRange(lim.n_min, lim.n_max + 1);
  const int kappa_steps = *rc::gen::inRange(0, 81);  // log10 kappa in 1/80ths of the range
  const int length = *rc::gen::inRange(0, lim.length_per_n * n + 1);
  const int recompute_every = lim.recompute ? *rc::gen::inRange(0, n + 1) : 0;
  // Electrons from the first `spread` only: a small spread moves the same
  // electrons again and again inside one delayed window (shrinks towards 1,
  // one electron moving every time).
  const int spread = *rc::gen::inRange(1, n + 1);
  RandsvdRecipe r;
  r.n = n;
  r.seed = *rc::gen::arbitrary<std::uint64_t>();
  r.electrons =
      *rc::gen::container<std::vector<int>>(std::size_t(length), rc::gen::inRange(0, spread));
  r.accepts = pick_accepts(length, lim.all_accepted);
  r.log10_kappa = lim.max_log10_kappa * kappa_steps / 80.0;
  GeneratedCase g{build_randsvd_case(r), recompute_every, CaseMode::randsvd,
                  n == 1 ? 0.0 : r.log10_kappa, 0.0};
  pick_probe(g.kase);
  return g;
}

GeneratedCase generate_adversarial(const CaseLimits& lim) {
  AdversarialRecipe r;
  r.n = *rc::gen::inRange(lim.n_min, lim.n_max + 1);
  const int eta_steps = *rc::gen::inRange(0, 81);  // log10(1/eta) in 1/80ths of the range
  r.length = *rc::gen::inRange(0, lim.length_per_n * r.n + 1);
  const int recompute_every = lim.recompute ? *rc::gen::inRange(0, r.n + 1) : 0;
  r.chain = *rc::gen::inRange(1, 4);
  r.hold = *rc::gen::inRange(0, 3);
  r.seed = *rc::gen::arbitrary<std::uint64_t>();
  r.accepts = pick_accepts(r.length, lim.all_accepted);
  r.log10_inv_eta = lim.max_log10_inv_eta * eta_steps / 80.0;
  GeneratedCase g{build_adversarial_case(r), recompute_every, CaseMode::adversarial, 0.0,
                  r.log10_inv_eta};
  pick_probe(g.kase);
  return g;
}

}  // namespace

// Fresh columns s U diag(sigma) q (q a random unit vector) keep the
// conditioning of the randsvd matrix along the sequence. A shift cycle
// writes a_{p+t} := a_{p+t-1} (the columns before the cycle) for t =
// 1..rank-1, then a_p := fresh, as an expansion writes an excitation that
// inserts an orbital: every intermediate matrix has two equal columns.
Case build_cycles_case(int n, double log10_kappa, std::uint64_t seed,
                       const std::vector<CycleShape>& shapes) {
  RandsvdRecipe r;
  r.n = n;
  r.log10_kappa = log10_kappa;
  r.seed = seed;
  Case c = build_randsvd_case(r);  // the matrix alone (no moves)
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);  // a stream apart from the matrix's
  std::normal_distribution<double> normal;
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(c.initial, Eigen::ComputeFullU);
  const Eigen::MatrixXd us = svd.matrixU() * svd.singularValues().asDiagonal();
  const auto fresh = [&] {
    Eigen::VectorXd q(n);
    for (int i = 0; i < n; ++i) q(i) = normal(rng);
    return Eigen::VectorXd(us * q.normalized());
  };
  Eigen::MatrixXd current = c.initial;
  for (const CycleShape& shape : shapes) {
    const auto col = [&](int t) { return Eigen::Index((shape.position + t) % n); };
    const Eigen::MatrixXd before = current;
    const auto push = [&](Eigen::Index k, Eigen::VectorXd column) {
      current.col(k) = column;
      c.moves.push_back({k, std::move(column), true});
    };
    if (shape.shift && shape.rank >= 2) {
      for (int t = 1; t < shape.rank; ++t) push(col(t), before.col(col(t - 1)));
      push(col(0), fresh());
    } else {
      for (int t = 0; t < shape.rank; ++t) push(col(t), fresh());
    }
    c.cycles.push_back(shape.rank);
  }
  return c;
}

namespace {

GeneratedCase generate_cycles(const CaseLimits& lim) {
  const int n = *rc::gen::inRange(lim.n_min, lim.n_max + 1);
  const int kappa_steps = *rc::gen::inRange(0, 81);  // log10 kappa in 1/80ths of the range
  const int count = *rc::gen::inRange(1, std::max(1, lim.length_per_n * n) + 1);
  const int recompute_every = lim.recompute ? *rc::gen::inRange(0, n + 1) : 0;
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const int max_rank = std::max(1, std::min(lim.max_rank, n));
  // Ranks shrink to 1, shifts to plain cycles, positions to 0.
  std::vector<CycleShape> shapes;
  for (int i = 0; i < count; ++i) {
    CycleShape shape;
    shape.rank = *rc::gen::inRange(1, max_rank + 1);
    shape.shift = *rc::gen::inRange(0, 2) == 1;
    shape.position = *rc::gen::inRange(0, n);
    shapes.push_back(shape);
  }
  const double log10_kappa = lim.max_log10_kappa * kappa_steps / 80.0;
  return {build_cycles_case(n, log10_kappa, seed, shapes), recompute_every, CaseMode::cycles,
          n == 1 ? 0.0 : log10_kappa, 0.0};
}

}  // namespace

CaseLimits cycle_limits(Precision p) {
  CaseLimits lim;
  lim.mode = CaseMode::cycles;
  lim.n_max = 12;
  lim.length_per_n = 1;
  // 6 of double's digits: well inside the model at N <= 12 with the
  // carried updates, the same fraction of the digits for float storage.
  lim.max_log10_kappa = 6.0 * digit_fraction(p);
  return lim;
}

CaseLimits property_limits(Precision p) {
  CaseLimits lim;
  // The same fraction of the precision's digits: 8 log(eps_s) / log(eps_d).
  lim.max_log10_kappa = 8.0 * digit_fraction(p);
  return lim;
}

CaseLimits breakdown_limits() {
  CaseLimits lim;
  lim.n_max = 8;
  lim.length_per_n = 1;
  lim.max_log10_kappa = 1;
  return lim;
}

CaseLimits fuzz_limits(Precision p, CaseMode mode, int max_n) {
  CaseLimits lim;
  lim.mode = mode;
  lim.n_max = max_n;
  lim.length_per_n = 4;
  // kappa up to 1e12 and eta down to 1e-10 in double: 4 and 6 digits short
  // of singular to working precision (eps_d = 2.2e-16); the same fractions of
  // the digits for float storage (kappa <= 3e5, eta >= 2.5e-5).
  lim.max_log10_kappa = 12.0 * digit_fraction(p);
  lim.max_log10_inv_eta = 10.0 * digit_fraction(p);
  // Cycles: 1 to N of them (each up to 4 updates, an oracle LU per
  // matrix), kappa up to 1e8 in double: every cycle's updates are carried
  // (m up to 4N), and the model's (g + m) N eps kappa must stay below 1/2
  // for a comparison to be made.
  if (mode == CaseMode::cycles) {
    lim.length_per_n = 1;
    lim.max_log10_kappa = 8.0 * digit_fraction(p);
  }
  return lim;
}

std::ostream& operator<<(std::ostream& os, const GeneratedCase& g) {
  os << "N=" << g.kase.n() << ", " << g.kase.moves.size() << " moves (";
  if (g.kase.has_cycles()) {
    os << g.kase.cycles.size() << " cycles of ranks";
    for (int length : g.kase.cycles) os << " " << length;
  } else {
    os << g.kase.accepted() << " accepted";
  }
  os << "), " << to_string(g.mode);
  if (g.mode != CaseMode::adversarial) os << " log10 kappa=" << g.log10_kappa;
  if (g.mode == CaseMode::adversarial) os << " log10(1/eta)=" << g.log10_inv_eta;
  return os << ", recompute_every=" << g.recompute_every << ", probe " << g.kase.probe_column
            << "<-" << g.kase.probe_source;
}

GeneratedCase pick_case(const CaseLimits& limits) {
  switch (limits.mode) {
    case CaseMode::randsvd: return generate_randsvd(limits);
    case CaseMode::adversarial: return generate_adversarial(limits);
    case CaseMode::cycles: return generate_cycles(limits);
  }
  throw std::invalid_argument("unknown case mode");
}

// gen_case(limits) picks, in this order (RapidCheck shrinks picks in the
// order they were made): N, the conditioning (log10 kappa, or the
// adversarial collapse size eta), the sequence length, then values (the
// recompute cadence, for randsvd the electron spread (electrons drawn from
// the first `spread` only, so that small spreads move the same electrons
// repeatedly inside one delayed window), the seed of the bulk values,
// electron indices, the
// accept pattern — accept shrinks to reject — and the breakdown probe).
// The cycles mode picks N, kappa, the number of cycles, the cadence, the
// seed, then per cycle its rank (shrinks to 1), whether it shifts (shrinks
// to a plain cycle) and its first column (shrinks to 0).
rc::Gen<GeneratedCase> gen_case(const CaseLimits& limits) {
  return rc::gen::exec([limits] { return pick_case(limits); });
}

Case build_randsvd_case(const RandsvdRecipe& rec) {
  const int n = rec.n;
  std::mt19937_64 rng(rec.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal;
  const Eigen::MatrixXd u = haar_orthogonal(n, rng);
  const Eigen::MatrixXd v = haar_orthogonal(n, rng);
  Eigen::VectorXd sigma(n);
  for (int i = 0; i < n; ++i) {
    const double t = i == 0 ? 0.0 : i == n - 1 ? 1.0 : uniform(rng);
    sigma(i) = std::pow(10.0, -rec.log10_kappa * t);
  }
  const double scale = std::ldexp(1.0, int(std::floor(uniform(rng) * 17)) - 8) * rec.scaled +
                       (rec.scaled ? 0.0 : 1.0);
  const Eigen::MatrixXd us = scale * u * sigma.asDiagonal();

  Case c;
  c.initial = us * v.transpose();
  Eigen::MatrixXd current = c.initial;
  for (std::size_t i = 0; i < rec.electrons.size(); ++i) {
    Eigen::VectorXd q(n);
    for (int r = 0; r < n; ++r) q(r) = normal(rng);
    q.normalize();
    CaseMove mv;
    mv.electron = rec.electrons[i];
    mv.column = us * q;
    if (uniform(rng) < 0.3) mv.column = current.col(mv.electron) + 0.1 * mv.column;
    mv.accept = rec.accepts[i] != 0;
    if (mv.accept && rec.metropolis) {
      const double rho = current.partialPivLu().solve(mv.column)(mv.electron);
      mv.accept = std::abs(rho) >= 1.0 / 3 && std::abs(rho) <= 3;
    }
    if (mv.accept) current.col(mv.electron) = mv.column;
    c.moves.push_back(std::move(mv));
  }
  c.probe_column = 0;
  c.probe_source = n > 1 ? 1 : 0;
  return c;
}

// ---- public: float against double ---------------------------------------------------------
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
// [1/64, 64] (kPrecisionWindow) is the window. It excludes a silently-double
// computation (a ratio near 1, i.e. 2^-29 of the target) and a half-precision
// or otherwise degraded one (2^13 above). Measured (300 batches per pair):
// every pair's median within 2^-4.5 .. 2^+2 of the target; pure-float pairs
// within 2^+-2.

std::ostream& operator<<(std::ostream& os, const PrecisionPair& p) {
  return os << p.low.label << " vs " << p.high.label;
}

std::vector<PrecisionPair> precision_pairs() {
  const std::vector<PropertyConfig> configs = property_configs();
  std::vector<PrecisionPair> pairs;
  for (const PropertyConfig& low : configs) {
    if (low.options.precision == Precision::double_) continue;
    for (const PropertyConfig& high : configs) {
      if (high.options.precision == Precision::double_ && high.name == low.name &&
          high.options.k == low.options.k && high.options.variant == low.options.variant) {
        pairs.push_back({low, high});
      }
    }
  }
  return pairs;
}

namespace {

double max_ratio_error(const PropertyConfig& cfg, const Case& c, const CaseTrace& t) {
  auto up = make(cfg.name, cfg.options, 0);
  up->reset(c.initial);
  double worst = 0;
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const Ratio r = up->ratio(c.moves[i].electron, c.moves[i].column);
    // Well-conditioned proposals only (the ones a Metropolis walk accepts):
    // a ratio near a nodal crossing has kappa_rho ~ 1/|rho| and would make
    // the maximum a statement about one proposal rather than the precision.
    const Ld rho = std::abs(t.steps[i].rho);
    if (rho >= 1.0L / 3 && rho <= 3) worst = std::max(worst, rel_error(r.value, t.steps[i].rho));
    c.moves[i].accept ? up->accept() : up->reject();
  }
  return worst;
}

}  // namespace

PrecisionSample precision_sample(const PrecisionPair& pair, const Case& c) {
  const auto t = trace_case(c);
  PrecisionSample s;
  s.low = max_ratio_error(pair.low, c, *t);
  s.high = max_ratio_error(pair.high, c, *t);
  // The oracle's own error (~2^-63) is the floor of what can be measured.
  s.ratio = s.low / std::max(s.high, 1e3 * kEpsLd);
  return s;
}

double precision_target(const PrecisionPair& pair) {
  return storage_epsilon(pair.low.options.precision) / storage_epsilon(pair.high.options.precision);
}

}  // namespace slaterlab
