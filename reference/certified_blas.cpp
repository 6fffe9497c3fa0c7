// The rigorous bound of log det(I + F) (certified_blas.hpp). Notation: L', U'
// the rounded factors of sliced_lu.hpp, M = L' U', E = P A - M exactly
// (exact_lu_residual: hi + lo within `error`), F = M^{-1} E; R = getri's
// inverse of L' U' with P undone; g = gamma_N, u = 2^-53.
//
// 1. ||M^{-1}||: K = I - R M with R M = fl(fl(R L') U') + G, |G| <= (2g + g^2)
//    |R||L'||U'|, and the computed non-negative fl(fl(|R||L'|)|U'|) >= (1 - g)^2
//    |R||L'||U'|. So kb = |I - fl(RM)| (1 + u) + (2g + g^2) fl(|R||L'||U'|) / (1 - g)^2
//    bounds |K| entrywise; alpha = ||kb||_inf < 1/2 and alpha1 = ||kb||_1 < 1/2 are
//    required. Then M^{-1} = (I - K)^{-1} R, ||M^{-1}||_inf <= ||R||_inf / (1 - alpha),
//    ||M^{-1}||_1 <= ||R||_1 / (1 - alpha1), ||M^{-1}||_2 <= their geometric mean, and
//    entrywise |M^{-1}|_ij <= |R|_ij + beta c_j, beta = alpha / (1 - alpha),
//    c_j = max_k |R|_kj (Rump, Acta Numerica 19, 2010, section 10).
// 2. Refinement: F^ = M^{-1} E.hi by two double solves, rounded to F' (any
//    double matrix would do), and F = F' + G, G = M^{-1} H, H = E - M F'
//    exactly; refinement_residual gives H^ with |H - H^| <= d + x y^T.
//    G^ = M^{-1} H^ by two solves: |M^{-1} H^ - G^| <= gs |M^{-1}||L'||U'||G^|,
//    gs = 2 g' + g'^2, g' = gamma_{N+2} (Higham, Thm 8.5; kernels that multiply by
//    a computed reciprocal of the pivot).
// 3. tr G lies within tr G^ (+- gamma_N sum |G^_ii|) and
//      sum_ij (|R|_ij + beta c_j) (d + x y^T + gs |L'||U'||G^|)_ji,
//    the last through fl(|R||L'||U'|) (trace) and |L'|(|U'|(|G^| 1)) (the beta
//    c_j part), O(N^2) each.
// 4. log det(I + F) = tr F - tr F^2 / 2 + r3. tr F^2 = tr F'^2 + 2 tr(F' G) + tr G^2,
//    |2 tr(F' G) + tr G^2| <= 2 ||F'||_F ||G||_F + ||G||_F^2, ||G||_F <= ||M^{-1}||_2
//    ||H||_F, ||H||_F <= ||H^||_F + sqrt(N) ||H - H^||_inf; the double tr F'^2 errs by
//    gamma_{N^2} ||F'||_F^2. With rho <= f = ||F'||_inf + ||G||_inf < 1/2 (required),
//    |r3| <= sum |lambda|^3 / (3 (1 - rho)) <= f ||F||_F^2 / (3 (1 - f)) (Schur:
//    sum |lambda|^2 <= ||F||_F^2).
// Every computed bound of non-negative terms is rounded up (`up`); products of
// non-negative matrices are divided by (1 - g)^k, matrix-vector ones likewise;
// underflow adds at most 2^-1074 per plain rounding, covered by eta = 4 N 2^-1074
// per entry, and per product in the O(N^2) sums of the bound (16 N^2 2^-1074 in
// all); Frobenius norms are taken of entries scaled by a power of two
// (frobenius_bound). No step assumes the absence of underflow.

#include "slaterlab/reference/certified_blas.hpp"

#include <cblas.h>

#include <cmath>

#include "slaterlab/reference/lu_residual.hpp"
#include "slaterlab/reference/sliced_lu.hpp"

namespace slaterlab::reference::detail {
namespace {

/// fl(fl(B L) U) for a unit lower L and an upper U.
Eigen::MatrixXd times_lu(Eigen::MatrixXd b, const Eigen::MatrixXd& l, const Eigen::MatrixXd& u) {
  const int n = int(b.rows());
  cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0, l.data(),
              n, b.data(), n);
  cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, n, n, 1.0,
              u.data(), n, b.data(), n);
  return b;
}

/// X := (L U)^{-1} X by two triangular solves on LAPACK's packed factors.
void solve_lu(const Eigen::MatrixXd& lu, Eigen::MatrixXd& x) {
  const int n = int(lu.rows());
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0, lu.data(),
              n, x.data(), n);
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, n, 1.0,
              lu.data(), n, x.data(), n);
}

}  // namespace

BlasLogDetEnclosure blas_log_det_enclosure(const Eigen::MatrixXd& a) {
  const int n = int(a.rows());
  const double nn = double(n);
  const double g = dd::gamma(nn), g_solve = dd::gamma(nn + 2);
  const double gs = 2 * g_solve + g_solve * g_solve;
  const double eta = 0x1p-1074 * 4 * nn;  // underflow, per entry
  const auto shrink = [g](int k) { return 1.0 / std::pow(1 - g, k); };
  BlasLogDetEnclosure out;

  DoubleLu lu = double_lu(a);
  const SlicedLu f = slice_lu(lu.lu);
  if (!f.failure.empty()) {
    out.failure = f.failure;
    return out;
  }
  lu.lu = f.u;  // the rounded factors, packed as getri and the solves read them
  lu.lu.triangularView<Eigen::StrictlyLower>() = f.l;
  int swap_sign = 1;
  const Eigen::MatrixXd pa = permuted_rows(a, lu.pivots, swap_sign);
  out.pivots = f.u.diagonal();
  out.sign = swap_sign;
  for (int i = 0; i < n; ++i) out.sign *= out.pivots(i) < 0 ? -1 : 1;

  const ExactResidual e = exact_lu_residual(pa, f);
  Eigen::MatrixXd fh = e.hi;
  solve_lu(lu.lu, fh);

  // Step 1.
  const Eigen::MatrixXd r = unpermuted_inverse(lu_inverse(lu), lu.pivots);
  const Eigen::MatrixXd abs_r = r.cwiseAbs(), abs_l = f.l.cwiseAbs(), abs_u = f.u.cwiseAbs();
  const Eigen::MatrixXd rlu_abs = times_lu(abs_r, abs_l, abs_u);
  const Eigen::MatrixXd k_bound =
      (Eigen::MatrixXd::Identity(n, n) - times_lu(r, f.l, f.u)).cwiseAbs() * (1 + kU) +
      ((2 * g + g * g) * shrink(2)) * rlu_abs + Eigen::MatrixXd::Constant(n, n, eta);
  const double alpha = up(norm_inf(k_bound)), alpha1 = up(norm_1(k_bound));
  if (!(alpha < 0.5) || !(alpha1 < 0.5)) {
    out.failure = "||I - R L U|| <= " + std::to_string(std::max(alpha, alpha1)) +
                  " is not below 1/2: the double LU is too inaccurate to bound (L U)^{-1}";
    return out;
  }
  const double beta = alpha / (1 - alpha);
  const Eigen::RowVectorXd colmax_r = abs_r.colwise().maxCoeff();

  // Steps 2 and 3.
  const RefinementResidual h = refinement_residual(pa, e, fh);
  if (!h.failure.empty()) {
    out.failure = h.failure;
    return out;
  }
  Eigen::MatrixXd gh = h.h;
  solve_lu(lu.lu, gh);
  // sum_ij (|R|_ij + beta c_j) (|L'||U'||G^|)_ji, through fl(|R||L'||U'|) and
  // |L'|(|U'|(|G^| 1)).
  const Eigen::VectorXd lug_rows = shrink(3) * (abs_l * (abs_u * gh.cwiseAbs().rowwise().sum()));
  const double solve_error = shrink(2) * trace_of_abs_product(rlu_abs, gh) + beta * colmax_r.dot(lug_rows);
  // The same weights on |H - H^| <= d + x y^T.
  const Eigen::VectorXd d_rows = h.d.rowwise().sum();
  const double y_sum = h.y.sum();
  const double residual_error = trace_of_abs_product(abs_r, h.d) + beta * colmax_r.dot(d_rows) +
                                h.y.dot(abs_r * h.x) + beta * colmax_r.dot(h.x) * y_sum;
  const double trace_error =
      up(residual_error + gs * solve_error + g * gh.diagonal().cwiseAbs().sum());

  // Step 4.
  const double minv_inf = up(up(norm_inf(r)) / (1 - alpha));
  const double minv_2 = up(std::sqrt(minv_inf * up(up(norm_1(r)) / (1 - alpha1))));
  const double dh_inf = up((d_rows + h.x * y_sum).maxCoeff());
  const double g_inf = up(minv_inf * up(norm_inf(h.h) + dh_inf));
  const double g_fro = up(minv_2 * up(frobenius_bound(h.h) + std::sqrt(nn) * dh_inf));
  const double f_inf = up(up(norm_inf(fh)) + g_inf);
  if (!(f_inf < 0.5)) {
    out.failure = "||F||_inf <= " + std::to_string(f_inf) + " is not below 1/2";
    return out;
  }
  const double fh_fro = frobenius_bound(fh);
  const double f_fro = up(fh_fro + g_fro);
  dd::Dd trace;
  for (int i = 0; i < n; ++i) trace = dd::add(trace, fh(i, i));
  const double trace_g = gh.diagonal().sum();
  const double trace2 = fh.cwiseProduct(fh.transpose()).sum();
  out.correction = dd::add(dd::add(trace, trace_g), -0.5 * trace2);
  // dd sums: 2 N u^2 sum |F^_ii| for the trace, 4 u^2 |operands| for each add.
  const double dd_error = 2 * nn * kU * kU * up(fh.diagonal().cwiseAbs().sum()) +
                          8 * kU * kU * (std::abs(trace.hi) + std::abs(trace_g) + std::abs(trace2));
  const double square_error =
      dd::gamma(nn * nn) * fh_fro * fh_fro + 2 * fh_fro * g_fro + g_fro * g_fro;
  const double remainder = f_inf * f_fro * f_fro / (3 * (1 - f_inf));
  // Underflow in the O(N^2) sums of non-negative products above: 2^-1074 per
  // product, fewer than 16 N^2 of them.
  const double underflow = 16 * nn * nn * 0x1p-1074;
  out.radius = up(trace_error + dd_error + 0.5 * square_error + remainder + underflow);
  if (!std::isfinite(out.radius)) {
    out.failure = "the bound overflows: the matrix's scale is beyond what its norms cover";
  }
  return out;
}

}  // namespace slaterlab::reference::detail
