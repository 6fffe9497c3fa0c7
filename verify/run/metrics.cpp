#include "verify/run/metrics.hpp"

#include "slaterlab/reference/error_free_slices.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

// The split evaluation of R = P Q - C (Ozaki, Ogita, Oishi and Rump,
// "Error-free transformations of matrix multiplication by using fast
// routines of matrix multiplication and its applications", Numer.
// Algorithms 59, 2012). u = 2^-53, gamma_k = k u / (1 - k u), N the inner
// dimension, beta = floor((53 - ceil(log2 N)) / 2).
//
// 1. Split P = P1 + P2 row by row: with 2^(e_i - 1) <= max_j |p_ij| < 2^e_i,
//    P1 = fl(fl(p + s_i) - s_i), s_i = 1.5 * 2^(e_i + 52 - beta), rounds p to
//    the nearest multiple of 2^(e_i - beta) (the spacing of doubles at s_i;
//    p + s_i stays in s_i's binade, and the subtraction is exact), and
//    P2 = p - P1 is exact. So |P1_ij| <= 2^e_i is an integer multiple of
//    2^(e_i - beta) of at most beta + 1 bits, and
//    |P2_ij| <= 2^(e_i - beta - 1) <= 2^-beta max|P|. Q = Q1 + Q2 likewise,
//    column by column (exponents f_j).
// 2. T1 = P1 Q1 by DGEMM is exact: every product and every partial sum, in
//    any order, with or without FMA, is an integer multiple of
//    2^(e_i + f_j - 2 beta) of magnitude at most N 2^(2 beta) <= 2^53. This
//    needs the quantum 2^(e_i + f_j - 2 beta) >= 2^-1074 and
//    N 2^(e_i + f_j) below the overflow threshold; where it is not so the
//    long double evaluation is used instead.
// 3. T = fl(P2 Q + fl(P1 Q2)) by two DGEMMs (the second accumulating, beta = 1):
//    |T - (P1 Q2 + P2 Q)| <= gamma_N |P1||Q2| + gamma_{N+1} (|P2||Q| + |fl(P1 Q2)|)
//                         <= 2 gamma_{N+1} (1 + gamma_N) (|P1||Q2| + |P2||Q|),
//    and entry by entry (|P1||Q2|)_ij <= ||P1(i,:)||_1 max|Q2|,
//    (|P2||Q|)_ij <= max|P2| ||Q(:,j)||_1: that is the bound computed below.
//    With ||P1(i,:)||_1 <= 2 N max|P|, max|Q2| <= 2^-beta max|Q| (and the
//    same for the other term) it is at most
//    6 gamma_{N+1} (1 + gamma_N) 2^-beta N max|P| max|Q|.
// 4. R = (T1 - C) + T in long double (u_ld = 2^-64), entry by entry: two
//    roundings, at most u_ld (|T1 - C| + |R^|) each with |.| the computed values.
// What this bound is worth: for a dense matrix whose entries average a
// quarter of the largest, N max|P| max|Q| is about 16 (|P||Q|)_ij, so the
// bound is about 100 N 2^-beta u |P||Q|. The residual of an inverse
// computed in double (LU, updates) is at least about sqrt(N) u |A||X| per
// entry (N roundings of random sign): the bound is below 100 sqrt(N) 2^-beta
// of it, 1.5e-3 at N = 1024 (measured: 7e-5 to 2e-4, gaussian and randsvd
// up to kappa = 1e12, N = 512 to 2048). Only the rounding of A^-1 to double
// (u |A||X| / sqrt(N)) would be as small as the worst case of the bound.
// The actual errors, roundings of random sign, are sqrt(N) and more below
// it (Higham and Mary, SIAM J. Sci. Comput. 41, 2019): 1e-10 to 3e-9 of
// the residuals measured against a double-double oracle.

namespace slaterlab {
namespace {

using MatrixL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
constexpr double kU = 0x1p-53;
constexpr long double kUnitRoundoffLongDouble = 0x1p-64L;
constexpr double kInf = std::numeric_limits<double>::infinity();

double gamma(double k) { return k * kU / (1 - k * kU); }

using reference::slices::ceil_log2;

/// The bits of each slice: 2 beta + ceil(log2 N) <= 53 (step 2).
int slice_bits(Eigen::Index n) { return (53 - ceil_log2(n)) / 2; }

/// m = hi + lo (step 1, reference/error_free_slices.hpp), each row (by_rows)
/// or column scaled by its own exponent, returned in `exponents`.
struct Split {
  Eigen::MatrixXd hi, lo;
  Eigen::VectorXi exponents;
};

Split split(const Eigen::MatrixXd& m, int beta, bool by_rows) {
  Split s;
  s.exponents = reference::slices::magnitude_exponents(m, by_rows);
  reference::slices::slice_matrix(m, s.exponents, by_rows, beta, {&s.hi}, s.lo);
  return s;
}

/// Step 2's conditions on the exponents.
bool product_exact(const Split& p, const Split& q, int beta, Eigen::Index n) {
  const int pmin = p.exponents.minCoeff(), pmax = p.exponents.maxCoeff();
  const int qmin = q.exponents.minCoeff(), qmax = q.exponents.maxCoeff();
  const int log2n = ceil_log2(n);
  // The shifts s = 1.5 * 2^(e + 52 - beta) must be finite too.
  return pmin + qmin - 2 * beta >= -1074 && pmax + qmax + log2n < 1020 &&
         pmax + 52 - beta < 1023 && qmax + 52 - beta < 1023;
}

void gemm(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double beta, Eigen::MatrixXd& c) {
  const int n = int(a.rows()), k = int(a.cols()), m = int(b.cols());
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, m, k, 1.0, a.data(), n, b.data(), k,
              beta, c.data(), n);
}

double max_row_norm_1(const Eigen::MatrixXd& m) { return m.cwiseAbs().rowwise().sum().maxCoeff(); }
double max_col_norm_1(const Eigen::MatrixXd& m) { return m.cwiseAbs().colwise().sum().maxCoeff(); }

/// Norms of R (step 4's sums, or the long double product's entries).
struct Norms {
  long double max_abs = 0, sum_squares = 0;
  void add(long double r) {
    max_abs = std::max(max_abs, std::abs(r));
    sum_squares += r * r;
  }
};

long double c_entry(const Eigen::MatrixXd* c, Eigen::Index i, Eigen::Index j) {
  return c ? (long double)(*c)(i, j) : (i == j ? 1.0L : 0.0L);
}

ProductResidual long_double_residual(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q,
                                     const Eigen::MatrixXd* c) {
  const MatrixL r = p.cast<long double>() * q.cast<long double>();
  Norms norms;
  for (Eigen::Index j = 0; j < r.cols(); ++j) {
    for (Eigen::Index i = 0; i < r.rows(); ++i) norms.add(r(i, j) - c_entry(c, i, j));
  }
  // gamma_N^ld |P||Q| for the product, then one rounding of the difference.
  const long double nn = (long double)p.cols();
  const long double gamma_ld = nn * kUnitRoundoffLongDouble / (1 - nn * kUnitRoundoffLongDouble);
  const long double bound = gamma_ld * max_row_norm_1(p) * q.cwiseAbs().maxCoeff() +
                            kUnitRoundoffLongDouble * norms.max_abs;
  return {double(norms.max_abs), double(std::sqrt(norms.sum_squares)), double(bound * 1.01L)};
}

/// Steps 1 to 4: visit(i, j, R_ij) for every entry, column by column.
/// Returns the bound of any entry's error, step 4's roundings included
/// (max_abs: the largest |R_ij| visited), or nullopt where the split is not
/// exact (step 2) and nothing was visited.
template <class Visit>
std::optional<long double> split_entries(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q,
                                         const Eigen::MatrixXd* c, const Visit& visit) {
  const Eigen::Index n = p.cols();
  const int beta = slice_bits(n);
  const Split ps = split(p, beta, true);
  const Split qs = split(q, beta, false);
  if (!product_exact(ps, qs, beta, n)) return std::nullopt;
  Eigen::MatrixXd t1(p.rows(), q.cols()), t(p.rows(), q.cols());
  gemm(ps.hi, qs.hi, 0.0, t1);
  gemm(ps.hi, qs.lo, 0.0, t);
  gemm(ps.lo, q, 1.0, t);
  long double max_before = 0, max_abs = 0;  // max |T1 - C|, max |R|
  for (Eigen::Index j = 0; j < t.cols(); ++j) {
    for (Eigen::Index i = 0; i < t.rows(); ++i) {
      const long double before = (long double)t1(i, j) - c_entry(c, i, j);
      const long double r = before + t(i, j);
      max_before = std::max(max_before, std::abs(before));
      max_abs = std::max(max_abs, std::abs(r));
      visit(i, j, r);
    }
  }
  const double nn = double(n);
  const double products = 2 * gamma(nn + 1) * (1 + gamma(nn)) *
                          (max_row_norm_1(ps.hi) * qs.lo.cwiseAbs().maxCoeff() +
                           ps.lo.cwiseAbs().maxCoeff() * max_col_norm_1(q));
  // 1.01: the roundings of the bound's own evaluation (sums of N terms).
  return ((long double)products + kUnitRoundoffLongDouble * (max_before + max_abs)) * 1.01L;
}

ProductResidual split_residual(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q,
                               const Eigen::MatrixXd* c) {
  Norms norms;
  const auto bound = split_entries(p, q, c, [&](Eigen::Index, Eigen::Index, long double r) { norms.add(r); });
  if (!bound) return long_double_residual(p, q, c);
  return {double(norms.max_abs), double(std::sqrt(norms.sum_squares)), double(*bound)};
}

}  // namespace

ProductResidual product_residual(const Eigen::MatrixXd& p, const Eigen::MatrixXd& q,
                                 const Eigen::MatrixXd* c, Evaluation evaluation) {
  if (!p.allFinite() || !q.allFinite() || (c && !c->allFinite())) return {kInf, kInf, 0.0};
  return evaluation == Evaluation::long_double ? long_double_residual(p, q, c)
                                               : split_residual(p, q, c);
}

// The pivot's identity A X - I = (A Y - I) + A (X - Y), exact for any Y.
// R_Y = A Y - I by the split (bound b_Y), kept rounded to double
// (+ u max|R_Y|); D = fl(X - Y) with |D - (X - Y)| <= u |D|, so
// |A D - A (X - Y)| <= u |A||D|; fl(A D) by DGEMM errs by gamma_N |A||D|
// (Higham, 3.5); the sum R_Y + fl(A D) in long double by u_ld |R|. With
// (|A||D|)_ij <= ||A(i,:)||_1 max|D|, every entry errs by at most
//   b_Y + u max|R_Y| + (gamma_N + u)(1 + u) max_i ||A(i,:)||_1 max|D| + u_ld max|R|.
// For X and Y within double accuracy of A^-1, |A||D| is up to kappa |A D|:
// the third term is about N u kappa times the residual, small for
// kappa << 1 / (N u) and left to the split above that.
InverseResiduals::InverseResiduals(const Eigen::MatrixXd& a, const Eigen::MatrixXd& pivot)
    : a_(a), pivot_(pivot), pivot_residual_(a.rows(), a.cols()) {
  if (!a.allFinite() || !pivot.allFinite()) return;
  long double max_abs = 0;
  const auto bound = split_entries(a, pivot_, nullptr, [&](Eigen::Index i, Eigen::Index j, long double r) {
    pivot_residual_(i, j) = double(r);
    max_abs = std::max(max_abs, std::abs(r));
  });
  if (!bound) return;
  pivot_bound_ = double((*bound + kU * max_abs) * 1.01L);
  a_row_norm_ = max_row_norm_1(a);
  usable_ = true;
}

// The pivot's residual from elsewhere (FastReference::inverse: A X_0 - I by
// its own split, with its bound); the rest as above.
InverseResiduals::InverseResiduals(const Eigen::MatrixXd& a, Eigen::MatrixXd pivot,
                                   Eigen::MatrixXd pivot_residual, double pivot_bound)
    : a_(a), pivot_(std::move(pivot)), pivot_residual_(std::move(pivot_residual)),
      pivot_bound_(pivot_bound) {
  usable_ = a.allFinite() && pivot_.allFinite() && pivot_residual_.allFinite() &&
            pivot_.rows() == a.rows() && pivot_.cols() == a.cols() &&
            pivot_residual_.rows() == a.rows() && pivot_residual_.cols() == a.cols() &&
            std::isfinite(pivot_bound_);
  if (usable_) a_row_norm_ = max_row_norm_1(a);
}

InverseResidual InverseResiduals::operator()(const Eigen::MatrixXd& x) const {
  if (!usable_ || !x.allFinite()) return inverse_residual(a_, x);
  const Eigen::MatrixXd d = x - pivot_;
  Eigen::MatrixXd ad(a_.rows(), d.cols());
  // X equal to the pivot (a double strategy right after the factorisation
  // the reference's own inverse came from) has A (X - Y) = 0 exactly.
  if ((d.array() == 0.0).all()) {
    ad.setZero();
  } else {
    gemm(a_, d, 0.0, ad);
  }
  Norms norms;
  for (Eigen::Index j = 0; j < ad.cols(); ++j) {
    for (Eigen::Index i = 0; i < ad.rows(); ++i) {
      norms.add((long double)pivot_residual_(i, j) + ad(i, j));
    }
  }
  const double n = double(a_.rows());
  const long double bound =
      (pivot_bound_ + (gamma(n) + kU) * (1 + kU) * a_row_norm_ * d.cwiseAbs().maxCoeff() +
       kUnitRoundoffLongDouble * norms.max_abs) * 1.01L;
  if (!(bound <= kPivotAccuracy * norms.max_abs)) return inverse_residual(a_, x);
  return {double(norms.max_abs), double(std::sqrt(norms.sum_squares / n)), double(bound),
          Evaluation::shared_pivot};
}

InverseResidual inverse_residual(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x,
                                 Evaluation evaluation) {
  const ProductResidual r = product_residual(a, x, nullptr, evaluation);
  return {r.max_abs, r.frobenius / std::sqrt(double(a.rows())), r.max_abs_bound, evaluation};
}

double relative_divergence(const Eigen::MatrixXd& x, const Eigen::MatrixXd& x_ref) {
  // One pass, no long double temporaries (three N x N copies at 16 bytes an entry).
  long double difference2 = 0.0L, reference2 = 0.0L;
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    const long double r = x_ref.data()[k];
    const long double e = (long double)x.data()[k] - r;
    difference2 += e * e;
    reference2 += r * r;
  }
  return double(std::sqrt(difference2) / std::sqrt(reference2));
}

double condition_1(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x) {
  return max_col_norm_1(a) * max_col_norm_1(x);
}

double qr_residual(const QrFactors& qr, const Eigen::MatrixXd& a, Evaluation evaluation) {
  Eigen::MatrixXd ap(a.rows(), a.cols());
  for (Eigen::Index j = 0; j < a.cols(); ++j) ap.col(j) = a.col(qr.column_of[j]);
  return product_residual(qr.q, qr.r, &ap, evaluation).frobenius / double(ap.cast<long double>().norm());
}

double orthogonality_loss(const Eigen::MatrixXd& q, Evaluation evaluation) {
  const Eigen::MatrixXd qt = q.transpose();
  return product_residual(qt, q, nullptr, evaluation).frobenius;
}

}  // namespace slaterlab
