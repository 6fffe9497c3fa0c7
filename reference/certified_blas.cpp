// The rigorous bound of log det(I + F) (certified_blas.hpp). Notation: L', U'
// the rounded factors of sliced_lu.hpp, M = L' U', E = P A - M exactly
// (exact_lu_residual: hi + lo within `error`), F = M^{-1} E; R = getri's
// inverse of L' U' with P undone; g = gamma_N, g2 = gamma_{2N+2}^2 (Dot2 with
// N products and a start value), u = 2^-53.
//
// 1. ||M^{-1}||: K = I - R M with R M = fl(fl(R L') U') + G, |G| <= (2g + g^2)
//    |R||L'||U'|, and the computed non-negative fl(fl(|R||L'|)|U'|) >= (1 - g)^2
//    |R||L'||U'|. So kb = |I - fl(RM)| (1 + u) + (2g + g^2) fl(|R||L'||U'|) / (1 - g)^2
//    bounds |K| entrywise; alpha = ||kb||_inf < 1/2 and alpha1 = ||kb||_1 < 1/2 are
//    required. Then M^{-1} = (I - K)^{-1} R, ||M^{-1}||_inf <= ||R||_inf / (1 - alpha),
//    ||M^{-1}||_1 <= ||R||_1 / (1 - alpha1), ||M^{-1}||_2 <= their geometric mean, and
//    entrywise |M^{-1}|_ij <= |R|_ij + beta c_j, beta = alpha / (1 - alpha),
//    c_j = max_k |R|_kj (Rump, Acta Numerica 19, 2010, section 10).
// 2. Refinement: F^ = M^{-1} E.hi by two double solves (any F^ would do), and
//    F = F^ + G, G = M^{-1} H, H = E - M F^ exactly. H^ = E.hi - L'(U' F^) + E.lo
//    in Dot2 (W = U' F^ = Wh + Wl within g2 |U'||F^|, then E.hi - L' Wh, L' Wl in
//    double, three final roundings):
//      |H - H^| <= D + cH |L'||U'||F^|,
//      D = g2 |E.hi| + gamma_3 (|H1h| + |H1l| + |E.lo| + |T|) + error + eta,
//      cH = g2 (1 + w) + g u w,  w = (1 + g2) / (1 - u)  (|Wh| <= w |U'||F^|, |Wl| <= u |Wh|).
//    G^ = M^{-1} H^ by two solves: |M^{-1} H^ - G^| <= gs |M^{-1}||L'||U'||G^|,
//    gs = 2 g' + g'^2, g' = gamma_{N+2} (Higham, Thm 8.5; kernels that multiply by a
//    computed reciprocal of the pivot).
// 3. tr G lies within tr G^ (+- gamma_N sum |G^_ii|) and
//      sum_ij (|R|_ij + beta c_j) (D + cH |L'||U'||F^| + gs |L'||U'||G^|)_ji,
//    the |L'||U'||X| terms through fl(|R||L'||U'|) (trace) and
//    |L'|(|U'|(|X| 1)) (the beta c_j part), O(N^2) each.
// 4. log det(I + F) = tr F - tr F^2 / 2 + r3. tr F^2 = tr F^^2 + 2 tr(F^ G) + tr G^2,
//    |2 tr(F^ G) + tr G^2| <= 2 ||F^||_F ||G||_F + ||G||_F^2, ||G||_F <= ||M^{-1}||_2
//    ||H||_F, ||H||_F <= ||H^||_F + sqrt(N) ||H - H^||_inf; the double tr F^^2 errs by
//    gamma_{N^2} ||F^||_F^2. With rho <= f = ||F^||_inf + ||G||_inf < 1/2 (required),
//    |r3| <= sum |lambda|^3 / (3 (1 - rho)) <= f ||F||_F^2 / (3 (1 - f)) (Schur:
//    sum |lambda|^2 <= ||F||_F^2).
// Every computed bound of non-negative terms is rounded up (`up`); products of
// non-negative matrices are divided by (1 - g)^k, matrix-vector ones likewise;
// underflow adds at most 2^-1074 per plain rounding, covered by eta = 4 N 2^-1074
// per entry. TwoProd (Dot2) is error-free only without underflow: assumed.

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

/// H^ = E - L'(U' F^) in Dot2 (step 2) and D, its error but for cH |L'||U'||F^|.
struct Refinement {
  Eigen::MatrixXd h, d;
};

Refinement refinement_residual(const SlicedLu& f, const ExactResidual& e, const Eigen::MatrixXd& fh,
                               double g2, double eta) {
  const int n = int(fh.rows());
  const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(n, n);
  Eigen::MatrixXd wh(n, n), wl(n, n), h1h(n, n), h1l(n, n);
  dd::residual_gemm(n, n, n, f.u.data(), n, dd::Shape::upper, fh.data(), n, dd::Shape::full,
                    zero.data(), n, wh.data(), wl.data(), n);  // -W
  wh = -wh;
  Eigen::MatrixXd t = -wl;
  dd::residual_gemm(n, n, n, f.l.data(), n, dd::Shape::lower, wh.data(), n, dd::Shape::full,
                    e.hi.data(), n, h1h.data(), h1l.data(), n);
  cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0,
              f.l.data(), n, t.data(), n);
  Refinement r;
  r.h = h1h + (h1l + (e.lo - t));
  r.d = g2 * e.hi.cwiseAbs() +
        dd::gamma(3) * (h1h.cwiseAbs() + h1l.cwiseAbs() + e.lo.cwiseAbs() + t.cwiseAbs());
  r.d.array() += e.error * (1 + 1e-8) + eta;
  return r;
}

}  // namespace

BlasLogDetEnclosure blas_log_det_enclosure(const Eigen::MatrixXd& a) {
  const int n = int(a.rows());
  const double nn = double(n);
  const double g = dd::gamma(nn), g_solve = dd::gamma(nn + 2), g2 = dot2_gamma2(nn + 1);
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
  const Refinement h = refinement_residual(f, e, fh, g2, eta);
  Eigen::MatrixXd gh = h.h;
  solve_lu(lu.lu, gh);
  const double w = (1 + g2) / (1 - kU);
  const double c_h = g2 * (1 + w) + g * kU * w;
  // |L'||U'||X| 1 and sum_ij (|R|_ij + beta c_j) (|L'||U'||X|)_ji.
  const auto luf_rows = [&](const Eigen::MatrixXd& x) -> Eigen::VectorXd {
    return shrink(3) * (abs_l * (abs_u * x.cwiseAbs().rowwise().sum()));
  };
  const auto weighted_luf = [&](const Eigen::MatrixXd& x) {
    return shrink(2) * trace_of_abs_product(rlu_abs, x) + beta * colmax_r.dot(luf_rows(x));
  };
  const Eigen::VectorXd d_rows = h.d.rowwise().sum();
  const double trace_error =
      up(trace_of_abs_product(abs_r, h.d) + beta * colmax_r.dot(d_rows) + c_h * weighted_luf(fh) +
         gs * weighted_luf(gh) + g * gh.diagonal().cwiseAbs().sum());

  // Step 4.
  const double minv_inf = up(up(norm_inf(r)) / (1 - alpha));
  const double minv_2 = up(std::sqrt(minv_inf * up(up(norm_1(r)) / (1 - alpha1))));
  const double dh_inf = up(d_rows.maxCoeff() + c_h * luf_rows(fh).maxCoeff());
  const double g_inf = up(minv_inf * up(norm_inf(h.h) + dh_inf));
  const double g_fro = up(minv_2 * up(h.h.norm() + std::sqrt(nn) * dh_inf));
  const double f_inf = up(up(norm_inf(fh)) + g_inf);
  if (!(f_inf < 0.5)) {
    out.failure = "||F||_inf <= " + std::to_string(f_inf) + " is not below 1/2";
    return out;
  }
  const double fh_fro = up(fh.norm());
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
  out.radius = up(trace_error + dd_error + 0.5 * square_error + remainder);
  return out;
}

}  // namespace slaterlab::reference::detail
