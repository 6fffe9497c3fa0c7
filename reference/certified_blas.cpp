// The rigorous bound of log det(I + F) (certified_blas.hpp). Notation of
// lu_residual.hpp; R = getri's inverse with P undone (R ~ M^{-1}); g = gamma_N.
//
// 1. ||M^{-1}||: K = I - R M with R M = fl(fl(R L) U) + G, |G| <= (2g + g^2)
//    |R||L||U| (two products of at most N terms each), and the computed
//    non-negative fl(fl(|R||L|)|U|) >= (1 - g)^2 |R||L||U|. So
//    alpha = || |I - fl(RM)| (1 + u) + (2g + g^2) fl(|R||L||U|) / (1 - g)^2 ||_inf
//    bounds ||K||_inf; alpha < 1/2 is required. Then M^{-1} = (I - K)^{-1} R,
//    ||M^{-1}||_inf <= ||R||_inf / (1 - alpha) and entrywise
//    |M^{-1}|_ij <= |R|_ij + alpha / (1 - alpha) max_k |R|_kj.
// 2. F - F^ = M^{-1} (E - M F^), E = P A - M exactly, and
//    |E - M F^| <= D = |El| + u |Eh + El| + gamma_{2N+1}^2 (|PA| + |L||U|)   (Dot2)
//                      + (2g' + g'^2) |L||U||F^|                        (the solves)
//    with g' = gamma_{N+2} (a solve that multiplies by a computed reciprocal
//    of the pivot), the |.| products again divided by (1 - g)^k.
// 3. |tr F - tr F^| <= sum_i (|M^{-1}| D)_ii by 1.; ||F - F^||_inf <= ||M^{-1}||_inf ||D||_inf.
// 4. log det(I + F) = tr F - tr F^2 / 2 + r3, |r3| <= N f^3 / (3 (1 - f)),
//    f >= ||F||_inf >= the spectral radius, f < 1/2 required;
//    |tr F^2 - tr F^^2| <= N (2 ||F^||_inf + d) d, d = ||F - F^||_inf; the
//    double tr F^^2 errs by gamma_{N^2} ||F^||_F^2, the dd tr F^ by 2 N u^2 sum |F^_ii|.
// Underflow adds at most 2^-1074 per plain rounding: covered by eta below.
// TwoProd (Dot2) is error-free only without underflow: assumed.

#include "slaterlab/reference/certified_blas.hpp"

#include <cblas.h>

#include <cmath>

#include "slaterlab/reference/lu_residual.hpp"

namespace slaterlab::reference::detail {
namespace {

/// fl(fl(B L) U) for the unit lower L and upper U of the LU.
Eigen::MatrixXd times_lu(Eigen::MatrixXd b, const Eigen::MatrixXd& l, const Eigen::MatrixXd& u) {
  const int n = int(b.rows());
  cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0, l.data(),
              n, b.data(), n);
  cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, n, n, 1.0,
              u.data(), n, b.data(), n);
  return b;
}

}  // namespace

BlasLogDetEnclosure blas_log_det_enclosure(const Eigen::MatrixXd& a) {
  const LuResidual r = lu_residual(a);
  const int n = int(a.rows());
  const double nn = double(n);
  const double g = dd::gamma(nn), g_solve = dd::gamma(nn + 2);
  const double eta = 0x1p-1074 * 4 * nn;  // underflow, per entry
  const auto shrink = [g](int k) { return 1.0 / std::pow(1 - g, k); };
  BlasLogDetEnclosure out;
  out.pivots = r.lu.lu.diagonal();
  out.sign = r.swap_sign;
  for (int i = 0; i < n; ++i) out.sign *= out.pivots(i) < 0 ? -1 : 1;
  out.correction = dd::add(r.trace, -0.5 * r.trace2);

  const Eigen::MatrixXd abs_r = r.minv.cwiseAbs();
  const Eigen::MatrixXd rm = times_lu(r.minv, r.l, r.lu.lu);
  const Eigen::MatrixXd rlu_abs = times_lu(abs_r, r.l.cwiseAbs(), r.lu.lu.cwiseAbs());
  const Eigen::MatrixXd k_bound =
      (Eigen::MatrixXd::Identity(n, n) - rm).cwiseAbs() * (1 + kU) +
      ((2 * g + g * g) * shrink(2)) * rlu_abs + Eigen::MatrixXd::Constant(n, n, eta);
  const double alpha = up(norm_inf(k_bound));
  if (!(alpha < 0.5)) {
    out.failure = "||I - R L U||_inf <= " + std::to_string(alpha) +
                  " is not below 1/2: the double LU is too inaccurate to bound (L U)^{-1}";
    return out;
  }
  const double beta = alpha / (1 - alpha);

  const Eigen::MatrixXd d =
      r.el.cwiseAbs() + kU * (r.eh + r.el).cwiseAbs() +
      dot2_gamma2(nn + 1) * (r.pa.cwiseAbs() + shrink(1) * r.lu_abs) +
      ((2 * g_solve + g_solve * g_solve) * shrink(2)) * r.luf_abs +
      Eigen::MatrixXd::Constant(n, n, eta);
  const Eigen::RowVectorXd colmax_r = abs_r.colwise().maxCoeff();
  const double trace_error =
      up(trace_of_abs_product(abs_r, d) + beta * colmax_r.dot(d.rowwise().sum()));
  const double df = up(up(norm_inf(r.minv)) / (1 - alpha) * up(norm_inf(d)));
  const double f = up(up(norm_inf(r.f)) + df);
  if (!(f < 0.5)) {
    out.failure = "||F||_inf <= " + std::to_string(f) + " is not below 1/2";
    return out;
  }
  const double dd_trace_error = 2 * nn * kU * kU * up(r.f.diagonal().cwiseAbs().sum());
  const double square_error = nn * (2 * up(norm_inf(r.f)) + df) * df +
                              dd::gamma(nn * nn) * up(r.f.squaredNorm());
  const double remainder = nn * f * f * f / (3 * (1 - f));
  out.radius = up(trace_error + dd_trace_error + 0.5 * square_error + remainder);
  return out;
}

}  // namespace slaterlab::reference::detail
