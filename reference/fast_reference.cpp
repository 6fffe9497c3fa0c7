// The fast reference: double LU, dd residuals, refinement. The error bounds
// are derived in docs/fast-reference.md; the comments name the terms.

#include "slaterlab/reference/fast_reference.hpp"

#include "slaterlab/reference/error_free_slices.hpp"
#include "slaterlab/reference/log_det_bound.hpp"
#include "slaterlab/reference/lu_residual.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>


namespace slaterlab::reference {
namespace {

using dd::Dd;
using namespace detail;
// The refinement of a ratio stops at this many steps; with a contraction
// below 1e-4 (kept by refactorising the preconditioner) four reach dd.
constexpr int kMaxSteps = 8;
// Above this observed contraction the preconditioner is renewed after the
// move: each step then gains less than four digits.
constexpr double kRenewContraction = 1e-4;
// 1 + 4u: a rounded-down non-negative sum of two roundings times this,
// rounded once more, is above the exact sum (accept()).
constexpr double kOneUp = 1 + 4 * kU;

// R = I - A X0 by error-free splitting (Ozaki, Ogita, Oishi, Rump, Numer.
// Algorithms 59, 2012), in BLAS products. Row i of A has a power of two
// 2^{e_i} > max_j |a_ij|, column j of X0 one 2^{f_j} > max_i |x_ij|. A1 is
// A rounded to multiples of 2^{e_i - b}, A2 the rest Ar = A - A1 rounded to
// multiples of 2^{e_i - 2b}, A3 = Ar - A2; likewise X1, X0r = X0 - X1, X2,
// X3 by columns. Every split is exact (a rounding to a multiple of a power
// of two, error_free_slices.hpp, and a difference that is a multiple of
// the entry's ulp no larger than the entry). The magnitudes: |A1| <= 2^e,
// |A2| <= 2^{e-b-1} (1 + 2^-b), |A3| <= 2^{e-2b-1}, the same for X.
//  - P1 = A1 X1: terms are multiples of 2^{e+f-2b} below 2^{e+f}; N of them
//    sum to at most N 2^{2b} such units, every partial sum too.
//  - P2 = A1 X2 + A2 X1 (two dgemms, the second accumulating): multiples of
//    2^{e+f-3b}, 2N terms below 2^{e+f-b-1} (1 + 2^-b): at most N 2^{2b}
//    (1 + 2^-b) units.
//  With N 2^{2b} (1 + 2^-b) <= 2^53 (b below) both are exact in any order of
//  summation, FMA or not, unless a unit underflows (checked: else the Dot2
//  product is used; e_i + f_j >= log2 of |a_ij x_ji| / 4, so that needs rows
//  and columns scaled apart by about 2^900, where the bound is infinite).
//  - A X0 - P1 - P2 = A1 X3 + A3 X1 + Ar X0r =: Q, second order (below
//    2^{-2b+1} |A||X0| entrywise), by three dgemms: |fl(Q) - Q| <= gamma_{3N}
//    (|A1||X3| + |A3||X1| + |Ar||X0r|), in norm at most gamma_{3N} times the
//    sum of the products of the factors' 1-norms.
//  - R = I - P1 - P2 - fl(Q) summed in dd per entry: TwoSum exact, then
//    each dd + double (TwoSum, one rounding of the lo parts, each below u
//    |hi|, FastTwoSum) errs by at most 3u^2 (|s.hi| + |b|); the high part
//    rounds hi + lo, within u |R^| (1 + u).
// Returns R^ and a bound of ||R^ - R||_1, or nothing where a unit underflows
// or a product could overflow.
struct SplitResidual {
  Eigen::MatrixXd r;
  double error_1 = 0.0;    // >= ||R^ - R||_1
  double error_inf = 0.0;  // >= ||R^ - R||_inf
};

void gemm_add(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q, double beta, Eigen::MatrixXd& c) {
  const int n = int(p.rows());
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, p.data(), n, q.data(), n,
              beta, c.data(), n);
}

std::optional<SplitResidual> split_residual(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x0) {
  const int n = int(a.rows());
  // b with N 2^{2b} (1 + 2^-b) <= 2^53: 2b <= 52 - ceil(log2 N).
  const int log_n = std::max(1, slices::ceil_log2(n));  // 2^{log_n} >= N
  const int b = (52 - log_n) / 2;
  const Eigen::VectorXi e = slices::magnitude_exponents(a, true);
  const Eigen::VectorXi f = slices::magnitude_exponents(x0, false);
  // The smallest unit 2^{e+f-3b} normal, the largest product sum 2N 2^{e+f}
  // finite, and the rounding shifts 1.5 2^{52 + e - b} finite and
  // 1.5 2^{52 + e - 2b} normal.
  if (e.minCoeff() + f.minCoeff() - 3 * b < -1021 || e.maxCoeff() + f.maxCoeff() + log_n + 2 > 1023 ||
      std::min(e.minCoeff(), f.minCoeff()) - 2 * b < -1021 ||
      std::max(e.maxCoeff(), f.maxCoeff()) + 52 - b > 1022) {
    return std::nullopt;
  }
  Eigen::MatrixXd a1, a2, a3, x1, x2, x3;
  slices::slice_matrix(a, e, true, b, {&a1, &a2}, a3);
  slices::slice_matrix(x0, f, false, b, {&x1, &x2}, x3);
  const Eigen::MatrixXd ar = a - a1, x0r = x0 - x1;  // A2 + A3 and X2 + X3, exactly
  Eigen::MatrixXd p1(n, n), p2(n, n), q(n, n);
  gemm_add(a1, x1, 0.0, p1);
  gemm_add(a1, x2, 0.0, p2);
  gemm_add(a2, x1, 1.0, p2);
  gemm_add(a1, x3, 0.0, q);
  gemm_add(a3, x1, 1.0, q);
  gemm_add(ar, x0r, 1.0, q);
  SplitResidual out{Eigen::MatrixXd(n, n)};
  // The dd sums' error terms |s.hi| + |b|: largest column sum, and row sums.
  double sum_error_1 = 0.0;
  Eigen::VectorXd row_terms = Eigen::VectorXd::Zero(n);
  for (int j = 0; j < n; ++j) {
    double column = 0.0;
    for (int i = 0; i < n; ++i) {
      Dd s = dd::two_sum(i == j ? 1.0 : 0.0, -p1(i, j));
      double terms = std::abs(s.hi) + std::abs(p2(i, j));
      s = dd::add(s, -p2(i, j));
      terms += std::abs(s.hi) + std::abs(q(i, j));
      s = dd::add(s, -q(i, j));
      out.r(i, j) = s.hi + s.lo;
      column += terms;
      row_terms(i) += terms;
    }
    sum_error_1 = std::max(sum_error_1, column);
  }
  const double gamma = dd::gamma(3 * double(n));
  const double q_error_1 =
      gamma * up(norm_1(a1) * norm_1(x3) + norm_1(a3) * norm_1(x1) + norm_1(ar) * norm_1(x0r));
  const double q_error_inf = gamma * up(norm_inf(a1) * norm_inf(x3) + norm_inf(a3) * norm_inf(x1) +
                                        norm_inf(ar) * norm_inf(x0r));
  out.error_1 = up(kU * norm_1(out.r) * (1 + kU) + q_error_1 + 3 * kU * kU * up(sum_error_1));
  out.error_inf = up(kU * norm_inf(out.r) * (1 + kU) + q_error_inf +
                     3 * kU * kU * up(row_terms.maxCoeff()));
  return out;
}

}  // namespace

void FastReference::require_ready(const char* what) const {
  if (!ready_) {
    throw std::logic_error(std::string("FastReference::") + what +
                           ": no valid state; call reset() first");
  }
}

void FastReference::reset(const Eigen::MatrixXd& a) {
  ready_ = false;
  pending_ = false;
  if (a.rows() != a.cols() || a.rows() == 0) {
    throw std::invalid_argument("fast reference: expected a non-empty square matrix, got " +
                                std::to_string(a.rows()) + " x " + std::to_string(a.cols()));
  }
  a_ = a;
  factorize_with_log_det();
  refactorisations_ = 0;
  ready_ = true;
}

void FastReference::recompute() {
  require_ready("recompute");
  ready_ = false;
  factorize_with_log_det();
  ready_ = true;
}

// log|det A| = log|det(P^T L U)| + log det(I + F), F = (L U)^{-1} E, E = P A - L U.
// E is computed in dd (Dot2, every product exact); F in double by two
// triangular solves; log det(I + F) = tr F - tr F^2 / 2 + remainder with
// |remainder| <= N f^3 / (3 (1 - f)), f = ||F||_1 >= spectral radius.
void FastReference::factorize_with_log_det() {
  const int n = int(a_.rows());
  LuResidual r = lu_residual(a_);
  det_ = dd::ScaledProduct{};
  det_.multiply({double(r.swap_sign), 0.0});
  for (int i = 0; i < n; ++i) det_.multiply({r.lu.lu(i, i), 0.0});
  log_correction_ = dd::add(r.trace, -0.5 * r.trace2);
  log_bound_ = a_priori_log_det_bound(r);
  // Where the worst case of the triangular solves takes more than half the
  // trust threshold (the rest is left to the ratios log|det| carries after
  // it), their residual is measured instead (three DGEMMs, log_det_bound.hpp).
  const Dd log_abs = dd::add(dd::log_abs(det_.mantissa(), det_.exponent()), log_correction_);
  const double threshold = kFastTrustMargin * kU *
                           std::max({1.0, std::abs(log_abs.hi), norm_1(a_) * norm_1(r.x)});
  if (log_bound_ > 0.5 * threshold) {
    if (const std::optional<double> measured = a_posteriori_log_det_bound(r)) {
      log_bound_ = std::min(log_bound_, *measured);
    }
  }
  carried_ratios_ = 0;
  contraction_ = std::max(up(norm_1(r.f)), 2 * double(n) * kU * norm_1(a_) * norm_1(r.x));
  x_ = std::move(r.x);
  updates_since_refactor_ = 0;
  a_frobenius_ = a_.norm();
  renew_row_sums();
}

// Each sum has N non-negative terms: up() covers its roundings.
void FastReference::renew_row_sums() {
  row_abs_ = a_.cwiseAbs().rowwise().sum().unaryExpr([](double s) { return up(s); });
}

void FastReference::refactor_preconditioner() {
  x_ = lu_inverse(double_lu(a_));
  updates_since_refactor_ = 0;
  contraction_ = 2 * double(a_.rows()) * kU * norm_1(a_) * norm_1(x_);
  a_frobenius_ = a_.norm();
  renew_row_sums();
  ++refactorisations_;
}

// y = A^{-1} a' by refinement: r = a' - A y in dd, y += X r. The error of
// y_j, from its residual r_j: rho - y_jk = e_k^T A^{-1} r_j, so
//   |.| <= ||e_k^T A^{-1}||_1 ||r_j||_inf <= ||e_k^T X||_1 ||r_j||_inf / (1 - theta),
// theta >= ||I - A X||_inf (contraction_: measured by the last inverse(),
// a-priori after a factorisation, raised by each proposal's ||r_0|| /
// ||a'||; observed between checkpoints), e_k^T A^{-1} = e_k^T X
// (I - (I - A X))^{-1}; ||r_j||_inf <= the computed residual (rh, rl) plus
// Dot2's error, u ||r_j|| + (gamma_{2N}^2 + 2 u gamma_N) ||A||_inf ||y_j||_inf.
//
// The bound of y_{j+1} = y_j + fl(X rh_j), before its own residual: with
// r_j = rh_j + e_j (e_j = rl_j + Dot2's error) and fl(X rh_j) = X rh_j + g,
// |g| <= gamma_N |X| |rh_j| (Higham, 3.5),
//   A^{-1} a' - y_{j+1} = A^{-1} r_j - X rh_j - g - s
//                       = (A^{-1} - X) rh_j + A^{-1} e_j - g - s,
// s the dd sum's error, |s_k| <= 2 u^2 (|y_{j,k}| + |y_{j+1,k}|) (TwoSum
// exact, one rounding of lo parts below u |hi| each). With A^{-1} - X =
// A^{-1} (I - A X),
//   |rho - y_{j+1,k}| <= ||e_k^T X||_1 ((theta / (1 - theta) + gamma_N) ||rh_j||_inf
//                        + ||e_j||_inf / (1 - theta)) + |s_k|,
// a bound that saves the last residual whenever it already meets the target.
//
// The target: the bound at most kFastStopFraction of both the trust threshold
// (kFastTrustMargin u kappa_rho |rho|) and u |y_k| (then y_k rounds to
// the same double as the exact ratio unless the ratio lies within that
// fraction of an ulp of a rounding boundary). Where theta is so large or
// the ratio so ill-conditioned that the refinement cannot get there, it goes
// on until dd accuracy (8 u^2 |y_k|), stagnation or kMaxSteps.
FastReference::Refined FastReference::refine(Eigen::Index k, const Eigen::VectorXd& new_column) {
  const int n = int(size());
  Eigen::VectorXd yh(n), yl = Eigen::VectorXd::Zero(n), rh(n), rl(n), d(n);
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, x_.data(), n, new_column.data(), 1, 0.0,
              yh.data(), 1);
  // Row k of X, gathered once (a strided pass costs about a tenth of the
  // dgemv): its norms, the k-th entry of a step, and accept()'s update of X.
  Eigen::VectorXd x_row = x_.row(k).transpose();
  const double a_inf = up(row_abs_.maxCoeff());
  const double row_k = up(x_row.cwiseAbs().sum());
  const double row_2 = x_row.norm();
  const double residual_floor = (dot2_gamma2(n) + dd::gamma(n) * 2 * kU) * a_inf;
  const auto target = [&] {
    const double scale = std::min(kFastTrustMargin * conditioning_scale(yh, k, row_2),
                                  std::abs(yh(k)));
    return kFastStopFraction * kU * scale;
  };
  double theta = contraction_;
  const double column_inf = new_column.cwiseAbs().maxCoeff();
  double previous = yh.cwiseAbs().maxCoeff();
  Refined out;
  out.bound = kInf;
  bool stagnated = false;
  for (int step = 0;; ++step) {
    dd::residual_gemv(n, n, a_.data(), n, yh.data(), yl.data(), new_column.data(), rh.data(),
                      rl.data());
    const double y_inf = up(yh.cwiseAbs().maxCoeff() * (1 + 2 * kU));
    const double rh_inf = rh.cwiseAbs().maxCoeff();
    const double rl_inf = rl.cwiseAbs().maxCoeff();
    const double e_inf = up(rl_inf + kU * (rh_inf + rl_inf) * (1 + kU) + residual_floor * y_inf);
    if (step == 0 && column_inf > 0) {
      // r_0 is R a' (R = I - A X) up to the dgemv's rounding: ||R||_inf is
      // about this at least, whatever the last measurement said.
      theta = std::max(theta, up(rh_inf / column_inf));
      contraction_ = std::max(contraction_, theta);
    }
    out.bound = theta < 1 ? up(row_k * (rh_inf + e_inf) / (1 - theta)) : kInf;
    out.steps = step;
    // Done at the target or at dd accuracy, or when another step cannot help.
    if (out.bound <= target() || out.bound <= 8 * kU * kU * std::abs(yh(k)) || stagnated ||
        step == kMaxSteps) {
      break;
    }
    // The step's k-th entry alone (one dot with row k of X): where its bound
    // meets the target, the ratio is done and the rest of the step is left
    // to accept(), which alone needs all of y.
    if (theta < 1) {
      const Dd before{yh(k), yl(k)};
      const Dd y_k = dd::add(before, x_row.dot(rh));
      const double predicted =
          up(row_k * ((theta / (1 - theta) + dd::gamma(n)) * rh_inf + e_inf / (1 - theta)) +
             2 * kU * kU * (std::abs(before.hi) + std::abs(y_k.hi)));
      yh(k) = y_k.hi;  // the target is judged at the new y_k
      yl(k) = y_k.lo;
      if (predicted <= target()) {
        out.bound = predicted;
        out.steps = step + 1;
        out.deferred_step = rh;
        break;
      }
      yh(k) = before.hi;
      yl(k) = before.lo;
    }
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, x_.data(), n, rh.data(), 1, 0.0,
                d.data(), 1);
    for (int i = 0; i < n; ++i) {
      const Dd s = dd::add(Dd{yh(i), yl(i)}, d(i));
      yh(i) = s.hi;
      yl(i) = s.lo;
    }
    // Stagnation: the refinement is at its floor; y_{j+1}'s residual gives its bound.
    const double change = d.cwiseAbs().maxCoeff();
    stagnated = step > 0 && change > 0.5 * previous;
    previous = change;
  }
  out.hi = std::move(yh);
  out.lo = std::move(yl);
  out.x_row = std::move(x_row);
  out.theta = theta;
  out.row_2 = row_2;
  return out;
}

double FastReference::conditioning_scale(const Eigen::VectorXd& yh, Eigen::Index k,
                                         double row_2) const {
  return std::max(std::abs(yh(k)), a_frobenius_ * row_2 * yh.norm());
}

FastRatio FastReference::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  require_ready("ratio");
  if (pending_) {
    throw std::logic_error("FastReference::ratio: a proposal is pending; accept() or reject() it");
  }
  const int n = int(size());
  if (k < 0 || k >= n) {
    throw std::logic_error("FastReference::ratio: column index " + std::to_string(k) +
                           " is out of range [0, " + std::to_string(n) + ")");
  }
  if (new_column.size() != n || !new_column.allFinite()) {
    throw std::logic_error("FastReference::ratio: the new column has the wrong length or is not finite");
  }
  Refined y = refine(k, new_column);
  // A preconditioner worn by updates may no longer contract: renew it once.
  if (!(y.theta < 0.5 && std::isfinite(y.bound)) && updates_since_refactor_ > 0) {
    refactor_preconditioner();
    y = refine(k, new_column);
  }
  const Eigen::VectorXd& yh = y.hi;
  const Eigen::VectorXd& yl = y.lo;
  const double bound = y.bound;
  const double theta = y.theta;
  FastRatio out;
  out.refinement_steps = y.steps;
  const Dd rho{yh(k), yl(k)};
  out.info.value = rho.hi + rho.lo;
  out.error_bound = bound;
  out.info.conditioning =
      rho.hi == 0 ? kInf : std::max(1.0, a_frobenius_ * y.row_2 * yh.norm() / std::abs(rho.hi));
  out.trusted = theta < 0.5 &&
                bound <= kFastTrustMargin * kU * out.info.conditioning * std::abs(rho.hi);
  pending_ = true;
  pending_k_ = k;
  pending_column_ = new_column;
  pending_y_ = yh;
  pending_x_row_ = std::move(y.x_row);
  pending_step_ = std::move(y.deferred_step);
  pending_rho_ = rho;
  pending_bound_ = bound;
  return out;
}

void FastReference::accept() {
  require_ready("accept");
  if (!pending_) throw std::logic_error("FastReference::accept: no pending proposal");
  pending_ = false;
  const double rho = pending_rho_.hi;
  if (rho == 0.0) throw SingularMatrixError("fast reference: the accepted ratio is exactly zero");
  const int n = int(size());
  det_.multiply(pending_rho_);
  ++carried_ratios_;
  // |log|rho^| - log|rho|| <= b / (|rho^| - b) for the ratio's bound b.
  const double b = pending_bound_;
  log_bound_ = up(log_bound_ + (b < std::abs(rho) ? b / (std::abs(rho) - b) : kInf) + 4 * kU * kU);
  // Sherman-Morrison on the double preconditioner: X -= (y - e_k) (e_k^T X) / rho.
  Eigen::VectorXd& w = pending_y_;
  if (pending_step_.size() > 0) {  // the step refine() took for entry k only
    const double y_k = w(pending_k_);
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, x_.data(), n, pending_step_.data(), 1,
                1.0, w.data(), 1);
    w(pending_k_) = y_k;
  }
  w(pending_k_) -= 1.0;
  cblas_dger(CblasColMajor, n, n, -1.0 / rho, w.data(), 1, pending_x_row_.data(), 1, x_.data(), n);
  const double old2 = a_.col(pending_k_).squaredNorm();
  // The row sums of |A| follow the column: with s_i >= S_i (the exact sum),
  // s_i - |o_i| >= 0 and two roundings of non-negative results, t >= (s_i -
  // |o_i| + |n_i|) (1 - u)^2; one more rounding of t (1 + 4u) keeps s_i' >=
  // S_i' since (1 - u)^3 (1 + 4u) > 1. Renewed exactly at refactorisations.
  for (int i = 0; i < n; ++i) {
    row_abs_(i) = (row_abs_(i) - std::abs(a_(i, pending_k_)) + std::abs(pending_column_(i))) * kOneUp;
  }
  a_.col(pending_k_) = pending_column_;
  a_frobenius_ = std::sqrt(std::max(0.0, a_frobenius_ * a_frobenius_ - old2 +
                                             pending_column_.squaredNorm()));
  ++updates_since_refactor_;
  if (!std::isfinite(log_bound_)) {
    factorize_with_log_det();  // a ratio without a bound: start log|det| afresh
  } else if (contraction_ > kRenewContraction) {
    refactor_preconditioner();
  }
}

void FastReference::reject() {
  require_ready("reject");
  if (!pending_) throw std::logic_error("FastReference::reject: no pending proposal");
  pending_ = false;
}

FastLogDet FastReference::log_det() const {
  require_ready("log_det");
  const Dd log_lu = dd::log_abs(det_.mantissa(), det_.exponent());
  const Dd total = dd::add(log_lu, log_correction_);
  FastLogDet out;
  out.value.log_abs = (long double)total.hi + (long double)total.lo;
  out.value.sign = det_.sign();  // det(I + F) > 0 while ||F|| < 1, which the bound requires
  // The Arb log (2^-120 relative) and the dd sum, then the long double rounding is the caller's.
  out.error_bound = up(log_bound_ + 0x1p-100 * std::abs(total.hi));
  // A double log|det| errs by up to about u (|log|det|| + kappa_1): tr(A^{-1} dA).
  out.trusted = out.error_bound <=
                kFastTrustMargin * kU * std::max({1.0, std::abs(total.hi), condition_1()});
  return out;
}

// X1 = X0 + C, C = fl(X0 R^), R^ = I - A X0 to about u^2 (split_residual, or
// Dot2 where splitting cannot be exact) rounded to double; X0 + C is exact as
// an unevaluated dd sum, and the bound is for that sum. With R = I - A X0
// (r = ||R||_1 <= r1 + dr, r1 = ||R^||_1), dR = R^ - R (||dR||_1 <= dr) and G
// the rounding of the product (|G| <= gamma_N |X0||R^|, Higham 3.5):
//   A^{-1} - X0 = A^{-1} R, so A^{-1} - X0 - X0 R = (A^{-1} - X0) R = A^{-1} R^2,
//   A^{-1} - X1 = A^{-1} R^2 - X0 dR - G.
// A X0 = I - R gives A^{-1} = X0 (I - R)^{-1}, ||A^{-1}|| <= ||X0|| / (1 - r), so
//   ||A^{-1} - X1|| <= ||X0|| (r^2 / (1 - r) + dr + gamma_N r1),
// and ||X1|| >= ||X0|| - ||C|| >= ||X0|| (1 - (1 + gamma_N) r1). G is not seen
// through A here: the residual route (I - A X1 = -dR + R R^ - A G, then
// ||A^{-1} - X1|| <= ||X1|| ||I - A X1|| / (1 - ||I - A X1||)) carries
// ||A|| ||G|| <= gamma_N kappa_1 r1, a worst case that exceeds the trust
// threshold u kappa_1 once N r1 is large (N = 4096, kappa_1 ~ 1e7). Both are
// rigorous; the smaller is taken. Where it is still above the trust threshold
// (r^2 itself, at large kappa_1), a second step from the exact X1 = X0 + C:
// R1 = I - A X1 = R - A C, R1^ = R^ + fl((I - A C)^ - I) (A C by the same
// error-free split; each of the two roundings at most u |result|), C2 =
// fl(Xh R1^) with Xh = fl(X0 + C), so |Xh - X1| <= u/(1 - u) |Xh| <= 2u |Xh|
// and C2 - X1 R1^ = rounding + (Xh - X1) R1^, within (gamma_N + 2u) |Xh||R1^|;
// the same forward bound with ||X1|| within 2u of ||Xh|| bounds X2 = X1 + C2,
// kept as the dd sum X0 + C + C2 and rounded once. About six DGEMMs more, only
// then. X0 is the preconditioner itself while no update has touched it since
// its LU (the same LAPACK calls on the same matrix).
namespace {

/// I - A X rounded to double with a bound of its error's 1-norm: split
/// products, or Dot2 where splitting cannot be exact.
SplitResidual identity_residual(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x) {
  if (std::optional<SplitResidual> split = split_residual(a, x)) return std::move(*split);
  const int n = int(a.rows());
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(n, n);
  Eigen::MatrixXd rl(n, n);
  SplitResidual out{Eigen::MatrixXd(n, n)};
  dd::residual_gemm(n, n, n, a.data(), n, dd::Shape::full, x.data(), n, dd::Shape::full,
                    identity.data(), n, out.r.data(), rl.data(), n);
  const double gamma2 = dot2_gamma2(double(n));
  out.error_1 = up(2 * kU * norm_1(out.r) + gamma2 * up(norm_1(a)) * up(norm_1(x)));
  out.error_inf = up(2 * kU * norm_inf(out.r) + gamma2 * up(norm_inf(a)) * up(norm_inf(x)));
  return out;
}

/// The forward bound of one step X + C, C = fl(Xh R^), relative to ||X + C||
/// (derivation above inverse()): r1 = ||R^||_1, dr >= ||R^ - R||_1, |G| <=
/// gamma |Xh||R^|, and X within x_slack of Xh in norm.
double forward_step_bound(double r1, double dr, double gamma, double x_slack) {
  // up()'s relative slack, applied downward to the positive denominators.
  const auto down = [](double v) { return v * (1 - 1e-8); };
  const double r = up(r1 + dr);
  const double x_floor = down(1 - x_slack - up((1 + gamma) * r1));
  if (r >= 1 || x_floor <= 0) return kInf;
  return up(up(up(up(r * r / down(1 - r)) + dr) * (1 + x_slack) + up(gamma * r1)) / x_floor);
}

}  // namespace

FastInverse FastReference::inverse() {
  require_ready("inverse");
  const int n = int(size());
  const double nn = double(n);
  Eigen::MatrixXd x0 = start_of_inverse();
  const double a1 = up(norm_1(a_)), x01 = up(norm_1(x0));
  SplitResidual start = identity_residual(a_, x0);
  if (!pending_) contraction_ = up(norm_inf(start.r) + start.error_inf);  // X0 is x_: measured
  const Eigen::MatrixXd& rh = start.r;
  const double dr = start.error_1;
  Eigen::MatrixXd correction(n, n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, x0.data(), n, rh.data(), n,
              0.0, correction.data(), n);
  FastInverse out;
  out.inverse = x0 + correction;  // X1 = X0 + correction exactly in dd; the hi part returned
  const double r1 = up(norm_1(rh));
  const double gamma_n = dd::gamma(nn);
  const double g = up(gamma_n * x01 * r1);
  const double residual = up(dr + up(r1 + dr) * r1 + a1 * g);
  const double residual_route = residual < 1 ? up(residual / (1 - residual)) : kInf;
  out.relative_bound = std::min(residual_route, forward_step_bound(r1, dr, gamma_n, 0.0));
  const double threshold = kFastTrustMargin * kU * a1 * x01;
  if (out.relative_bound > threshold) {
    // The second step, from the exact X1 = X0 + C: R1 = R - A C = R^ + ((I - A C)^ - I)
    // minus the two residuals' errors and two roundings (each at most u |result|).
    const SplitResidual ac = identity_residual(a_, correction);
    const Eigen::MatrixXd minus_ac = ac.r - Eigen::MatrixXd::Identity(n, n);
    const Eigen::MatrixXd r1h = rh + minus_ac;
    const double dr1 = up(dr + ac.error_1 + kU * (1 + kU) * (norm_1(minus_ac) + norm_1(r1h)));
    Eigen::MatrixXd correction2(n, n);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, out.inverse.data(), n,
                r1h.data(), n, 0.0, correction2.data(), n);
    // Xh = fl(X0 + C) is within u/(1 - u) <= 2u of X1 entrywise: x_slack 2u, and
    // (Xh - X1) R1^ joins the product's rounding, gamma_N + 2u.
    const double bound2 = forward_step_bound(up(norm_1(r1h)), dr1, up(gamma_n + 2 * kU), 2 * kU);
    if (bound2 < out.relative_bound) {
      out.relative_bound = bound2;
      for (Eigen::Index k = 0; k < out.inverse.size(); ++k) {  // X0 + C + C2 in dd, then rounded
        const Dd sum = dd::add(dd::two_sum(x0.data()[k], correction.data()[k]), correction2.data()[k]);
        out.inverse.data()[k] = sum.hi + sum.lo;
      }
    }
  }
  out.trusted = out.relative_bound <= threshold;
  // ||R^ - R||_1 bounds every entry's error; negation is exact.
  out.start_residual = -rh;
  out.start_residual_bound = dr;
  out.start = std::move(x0);
  return out;
}

// The preconditioner itself while one step from it suffices: its
// contraction r (observed) leaves r^2 / (1 - r), the step's leading term,
// below a tenth of the trust threshold u kappa_1 kFastTrustMargin. Else a
// fresh LU inverse, which becomes the preconditioner (its LU was paid for).
// With a proposal pending, x_ must stay as the proposal saw it.
Eigen::MatrixXd FastReference::start_of_inverse() {
  if (updates_since_refactor_ == 0) return x_;
  if (pending_) return lu_inverse(double_lu(a_));
  const double threshold = kFastTrustMargin * kU * norm_1(a_) * norm_1(x_);
  if (contraction_ * contraction_ > 0.1 * threshold) refactor_preconditioner();
  return x_;
}

double FastReference::condition_1() const {
  require_ready("condition_1");
  return norm_1(a_) * norm_1(x_);
}

}  // namespace slaterlab::reference
