// The error bound of the fast reference's log|det| at a factorisation
// (log_det_bound.hpp). Notation: u = 2^-53, g_k = gamma_k, |X| entrywise;
// eh = E's high part; R ~ M^{-1} (first order, as in the whole fast
// reference).
//
// What both bounds share. E = eh + dE with |dE| <= DE := 2u |eh| + g_{2N}^2
// |L||U| (Dot2, dd_kernels.hpp; |P A| <= |L||U| + |E|, and g_{2N}^2 has a
// factor 4 over the g_N^2 of N products), F = M^{-1} E:
//   |tr(F - F^)| <= T,  ||F - F^||_F <= D,
//   |tr F^2 - tr F^^2| <= 2 ||F^||_F D + D^2, plus g_{N^2} ||F^||_F^2 for the
//   double sum of tr F^^2's N^2 products,
//   log det(I + F) - tr F + tr F^2 / 2 within N f^3 / (3 (1 - f)),
//   f = ||F^||_1 + sqrt(N) D >= ||F||_1 >= every |eigenvalue|,
// and 4 u^2 N for tr F^ summed in dd.
//
// A priori (Higham, Thm 8.5): (L + dL)(U + dU) F^ = eh with |dL| <= g_N |L|,
// |dU| <= g_N |U|, so M F^ = eh - (dL U + L dU + dL dU) F^ and
//   F - F^ = M^{-1} (dE + (dL U + L dU + dL dU) F^),
//   T = tr(|R| (DE + 2 g_N |L||U||F^|)) (g_N^2 folded into up()),
//   D = ||R||_F (||DE||_F + 2 g_N || |L||U||F^| ||_F).
//
// A posteriori: F - F^ = M^{-1} H exactly, H = E - M F^, and since M =
// P A - E, H = E - P A F^ + E F^. P A is split by rows, F^ by columns, once
// each (error_free_slices.hpp): P A = A1 + Ar, A1 on the grid 2^(e_i - b)
// with |P A|_ij < 2^e_i; F^ = F1 + Fr, F1 on 2^(c_j - b). With
// N 2^(2b) <= 2^53 every partial sum of P1 = A1 F1 is an integer of at most
// 53 bits times 2^(e_i + c_j - 2b): exact in any order, FMA or not, while
// that unit is a double (checked, with the shifts and sums in range). The
// rest, A1 Fr + Ar F^, is 2^-b smaller, and E F^ is second order; with
// D' = fl(Ar - eh) = Ar - eh + d (|d| <= u |D'|) two more DGEMMs form
// Q = fl(D' F^ + A1 Fr) = A1 Fr + D' F^ + q, |q| <= g_{2N} (|A1||Fr| + |D'||F^|)
// (2N products; each underflowing one adds at most 2^-1074). Then
//   S := eh - P1 - Q = eh - P A F^ + eh F^ - d F^ - q,
//   H = S + d F^ + q + dE (I + F^),
// S by a TwoSum cascade (h + l within c of it, dd::cascade_difference) and
// rounded, fl(h + l) within u of its result (2^-1074 where subnormal):
//   |H| <= dense + x1 fs^T + x2 frs^T,
//   dense = (1 + u) |fl(h + l)| + c + (2N + 2) 2^-1074 + DE,
// x1_i = (u + g_{2N}) max_k |D'_ik| + max_k DE_ik, fs_j = sum_k |F^_kj|,
// x2_i = g_{2N} max_k |A1_ik|, frs_j = sum_k |Fr_kj| (rank-one majorants:
// (|X||Y|)_ij <= max_k |X_ik| sum_k |Y_kj|, since these terms are 2^-b or u
// below the first). So T = tr(|R| H+) for that majorant H+, the rank-one
// parts as fs^T |R| x1 + frs^T |R| x2, and D = ||R||_F ||H+||_F with
// ||x y^T||_F = ||x|| ||y||. A triangular solve's residual |H| is in
// practice a few u |L||U||F^|, not the worst case's 2N u: where that term
// dominates, the bound shrinks by a large fraction of N
// (docs/fast-reference.md has the measurements).

#include "slaterlab/reference/log_det_bound.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "slaterlab/reference/error_free_slices.hpp"

namespace slaterlab::reference::detail {
namespace {

/// The bound from T and D (shared part above).
double assembled_bound(const LuResidual& r, double trace_error, double df_f) {
  const double nn = double(r.f.rows());
  const double f_f = r.f.norm();
  const double fnorm = up(norm_1(r.f) + std::sqrt(nn) * df_f);
  const double square_error = up((2 * f_f + df_f) * df_f + dd::gamma(nn * nn) * f_f * f_f);
  const double remainder = fnorm < 0.5 ? nn * fnorm * fnorm * fnorm / (3 * (1 - fnorm)) : kInf;
  return up(trace_error + square_error + remainder + 4 * kU * kU * nn);
}

}  // namespace

double a_priori_log_det_bound(const LuResidual& r) {
  const double nn = double(r.f.rows());
  const double solve = 2 * dd::gamma(nn);
  const double trace_error = up(2 * kU * trace_of_abs_product(r.minv, r.eh) +
                                dot2_gamma2(nn) * trace_of_abs_product(r.minv, r.lu_abs) +
                                solve * trace_of_abs_product(r.minv, r.luf_abs));
  const double df_f = up(r.minv.norm() * (2 * kU * r.eh.norm() + dot2_gamma2(nn) * r.lu_abs.norm() +
                                          solve * r.luf_abs.norm()));
  return assembled_bound(r, trace_error, df_f);
}

std::optional<SolveResidualMajorant> solve_residual_majorant(const LuResidual& r) {
  const Eigen::MatrixXd& pa = r.pa;
  const Eigen::MatrixXd& f = r.f;
  const int n = int(pa.rows());
  const double nn = double(n);
  const int log_n = slices::ceil_log2(n);
  const int b = (53 - log_n) / 2;  // N 2^(2b) <= 2^53
  const Eigen::VectorXi e = slices::magnitude_exponents(pa, true);
  const Eigen::VectorXi c = slices::magnitude_exponents(f, false);
  // The unit of P1 a double, the rounding shifts 1.5 2^(52 + e - b) normal
  // and finite, and every sum of products (below 2N 2^(e + c + 1)) finite.
  const int e_min = e.minCoeff(), e_max = e.maxCoeff(), c_min = c.minCoeff(), c_max = c.maxCoeff();
  if (e_min + c_min - 2 * b < -1074 || std::min(e_min, c_min) + 52 - b < -1022 ||
      std::max(e_max, c_max) + 52 - b > 1022 || e_max + c_max + log_n + 3 > 1023) {
    return std::nullopt;
  }
  // Q = fl(D' F^) first, so that D' is gone before F^ is split: at most
  // five N x N matrices beside r.
  Eigen::MatrixXd a1, d, f1, fr, q(n, n);
  slices::slice_matrix(pa, e, true, b, {&a1}, d);  // d = Ar, exactly
  d -= r.eh;                                       // D' = fl(Ar - eh)
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, d.data(), n, f.data(), n,
              0.0, q.data(), n);
  const double gamma = dd::gamma(2 * nn), gamma2 = dot2_gamma2(nn);
  SolveResidualMajorant out;
  out.x[0] = (kU + gamma) * d.cwiseAbs().rowwise().maxCoeff() +
             2 * kU * r.eh.cwiseAbs().rowwise().maxCoeff() +
             gamma2 * r.lu_abs.rowwise().maxCoeff();
  out.y[0] = f.cwiseAbs().colwise().sum().transpose();
  d.resize(0, 0);
  slices::slice_matrix(f, c, false, b, {&f1}, fr);
  Eigen::MatrixXd& p1 = out.dense;
  p1.resize(n, n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a1.data(), n, f1.data(), n,
              0.0, p1.data(), n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a1.data(), n, fr.data(), n,
              1.0, q.data(), n);
  out.x[1] = gamma * a1.cwiseAbs().rowwise().maxCoeff();
  out.y[1] = fr.cwiseAbs().colwise().sum().transpose();
  a1.resize(0, 0);
  f1.resize(0, 0);
  fr.resize(0, 0);
  // S = eh - P1 - Q column by column; the majorant replaces P1's column once read.
  Eigen::VectorXd h(n), l(n);
  double cascade = 0.0;
  for (int j = 0; j < n; ++j) {
    const std::array<const double*, 2> terms{p1.col(j).data(), q.col(j).data()};
    cascade = std::max(cascade, dd::cascade_difference(n, 2, r.eh.col(j).data(), terms.data(),
                                                       h.data(), l.data()));
    p1.col(j) = (h + l).cwiseAbs() * (1 + kU) + 2 * kU * r.eh.col(j).cwiseAbs() +
                gamma2 * r.lu_abs.col(j);
  }
  out.dense.array() += up(cascade + (2 * nn + 2) * 0x1p-1074);
  return out;
}

std::optional<double> a_posteriori_log_det_bound(const LuResidual& r) {
  const std::optional<SolveResidualMajorant> h = solve_residual_majorant(r);
  if (!h) return std::nullopt;
  const Eigen::MatrixXd abs_r = r.minv.cwiseAbs();
  double trace_error = trace_of_abs_product(abs_r, h->dense);
  double h_f = h->dense.norm();
  for (std::size_t t = 0; t < h->x.size(); ++t) {
    trace_error += h->y[t].dot(abs_r * h->x[t]);  // sum_ij |R|_ij x_j y_i
    h_f += h->x[t].norm() * h->y[t].norm();
  }
  return assembled_bound(r, up(trace_error), up(r.minv.norm() * up(h_f)));
}

}  // namespace slaterlab::reference::detail
