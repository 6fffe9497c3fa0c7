// Error-free slices of the LU factors and the exact residual (sliced_lu.hpp).
//
// Why the products are exact: a slice of L is an integer of at most bL bits
// times the row's grid 2^(eL - s bL), a slice of U's column j an integer of at
// most bU bits times 2^(f_j - t bU). Each term of (L_s U_t)_ij is then an
// integer below 2^(bL + bU) times one common power of two, and any partial sum
// of at most N of them an integer below N 2^(bL + bU) <= 2^53 times it:
// representable, so every addition and FMA is exact, whatever the order.

#include "slaterlab/reference/sliced_lu.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "slaterlab/reference/dd_kernels.hpp"
#include "slaterlab/reference/error_free_slices.hpp"

namespace slaterlab::reference::detail {
namespace {

constexpr int kSlices = 3;

using slices::ceil_log2;
using slices::exponent_above;
using slices::rounding_shift;
using slices::slice;

/// Column j of m in kSlices slices on the grids of exponent e; the column
/// itself becomes its rounding to the last grid (a double: a multiple of that
/// grid no larger than 2^(e + 1)).
void slice_column(Eigen::MatrixXd& m, Eigen::Index j, int e, int bits,
                  std::array<Eigen::MatrixXd, kSlices>& slices) {
  const std::size_t n = std::size_t(m.rows());
  const std::vector<double> shift(n, rounding_shift(e, bits));
  std::array<double*, kSlices> out{};
  for (int s = 0; s < kSlices; ++s) out[std::size_t(s)] = slices[std::size_t(s)].col(j).data();
  std::vector<double> rest(n);
  slice(m.col(j).data(), n, shift.data(), bits, kSlices, out.data(), rest.data());
  for (std::size_t i = 0; i < n; ++i) m.col(j)(Eigen::Index(i)) -= rest[i];
}

}  // namespace

SlicedLu slice_lu(const Eigen::MatrixXd& lu) {
  const Eigen::Index n = lu.rows();
  SlicedLu f;
  f.l = lu.triangularView<Eigen::StrictlyLower>();
  f.l.diagonal().setOnes();
  f.u = lu.triangularView<Eigen::Upper>();
  for (auto* slices : {&f.l_slices, &f.u_slices}) {
    for (Eigen::MatrixXd& m : *slices) m.resize(n, n);  // every column is sliced below
  }
  const int budget = 53 - ceil_log2(n);  // bL + bU
  const int bl = budget / 2, bu = budget - bl;
  const int el = exponent_above(f.l.cwiseAbs().maxCoeff());  // 0: |L| <= 1 with partial pivoting
  for (Eigen::Index j = 0; j < n; ++j) slice_column(f.l, j, el, bl, f.l_slices);
  for (Eigen::Index j = 0; j < n; ++j) {
    const int fj = exponent_above(f.u.col(j).cwiseAbs().maxCoeff());
    // The finest unit of a product must be a double (>= 2^-1074), 1.5 * 2^52
    // grid and the largest partial sum must not overflow.
    if (el + fj - kSlices * budget < -1074 || fj > 960) {
      f.failure = "column " + std::to_string(j) + " of U (largest entry near 2^" +
                  std::to_string(fj) + ") is outside the range the exact residual covers";
      return f;
    }
    slice_column(f.u, j, fj, bu, f.u_slices);
    if (f.u(j, j) == 0.0) {
      f.failure = "pivot " + std::to_string(j + 1) + " rounds to zero on its column's grid";
      return f;
    }
  }
  return f;
}

ExactResidual exact_lu_residual(const Eigen::MatrixXd& pa, const SlicedLu& f) {
  const int n = int(pa.rows());
  ExactResidual e{Eigen::MatrixXd(n, n), Eigen::MatrixXd(n, n), 0.0};
  // Column panels: U_t's panel is zero below row j1, so L_s U_t there is a
  // triangular product on top and a plain one below (2 N^3 / 3 flops a pair
  // instead of N^3), and only the panel's products are held.
  constexpr int kPanel = 128, kPairs = kSlices * kSlices;
  std::array<Eigen::MatrixXd, kPairs> products;
  for (Eigen::MatrixXd& p : products) p.resize(n, std::min(kPanel, n));
  for (int j0 = 0; j0 < n; j0 += kPanel) {
    const int b = std::min(kPanel, n - j0), j1 = j0 + b;
    for (int pair = 0; pair < kPairs; ++pair) {
      const Eigen::MatrixXd& ls = f.l_slices[std::size_t(pair / kSlices)];
      const Eigen::MatrixXd& ut = f.u_slices[std::size_t(pair % kSlices)];
      double* p = products[std::size_t(pair)].data();
      for (int j = 0; j < b; ++j) {
        std::copy_n(ut.col(j0 + j).data(), j1, p + std::size_t(j) * std::size_t(n));
      }
      cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, j1, b, 1.0,
                  ls.data(), n, p, n);
      if (j1 < n) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n - j1, b, j1, 1.0, ls.data() + j1,
                    n, ut.col(j0).data(), n, 0.0, p + j1, n);
      }
    }
    for (int j = 0; j < b; ++j) {
      std::array<const double*, kPairs> columns{};
      for (int pair = 0; pair < kPairs; ++pair) {
        columns[std::size_t(pair)] = products[std::size_t(pair)].col(j).data();
      }
      e.error = std::max(e.error, dd::cascade_difference(n, kPairs, pa.col(j0 + j).data(),
                                                         columns.data(), e.hi.col(j0 + j).data(),
                                                         e.lo.col(j0 + j).data()));
    }
  }
  return e;
}

RefinementResidual refinement_residual(const Eigen::MatrixXd& pa, const ExactResidual& e,
                                       Eigen::MatrixXd& f) {
  const Eigen::Index n = pa.rows();
  const std::size_t un = std::size_t(n);
  const int budget = 53 - ceil_log2(n), bits_a = budget / 2, bits_f = budget - bits_a;
  RefinementResidual out;
  // Grids: rows of P A no finer than 2^-500, columns of F no finer than
  // 2^(2 budget - 574), so that the finest unit of a product, 2^(r_i + c_j -
  // 2 budget), is at least 2^-1074; a coarser grid only leaves more in the
  // remainders. r_i, c_j and r_i + c_j <= 960 keep the rounding shifts and
  // every partial sum, below 2^(r_i + c_j + ceil(log2 N)), finite.
  const Eigen::VectorXd row_max = pa.cwiseAbs().rowwise().maxCoeff();
  const Eigen::RowVectorXd col_max = f.cwiseAbs().colwise().maxCoeff();
  const auto grid = [](double max, int floor) { return max > 0 ? std::max(exponent_above(max), floor) : floor; };
  std::vector<double> shift_a(un);
  int r_max = -500, c_max = 2 * budget - 574;
  for (std::size_t i = 0; i < un; ++i) {
    const int r = grid(row_max(Eigen::Index(i)), -500);
    r_max = std::max(r_max, r);
    shift_a[i] = rounding_shift(std::min(r, 960), bits_a);  // r > 960 is refused below
  }
  std::vector<int> c(un);
  for (std::size_t j = 0; j < un; ++j) {
    c[j] = grid(col_max(Eigen::Index(j)), 2 * budget - 574);
    c_max = std::max(c_max, c[j]);
  }
  if (r_max > 960 || c_max > 960 || r_max + c_max > 960) {
    out.failure = "A and F = (L U)^{-1} E have entries near 2^" + std::to_string(r_max) +
                  " and 2^" + std::to_string(c_max) + ", beyond the range of the refinement";
    return out;
  }

  Eigen::MatrixXd a1(n, n), a2(n, n), a_rest(n, n), f1(n, n), f2(n, n), f_rest(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    std::array<double*, 2> a_slices{a1.col(j).data(), a2.col(j).data()};
    slice(pa.col(j).data(), un, shift_a.data(), bits_a, 2, a_slices.data(), a_rest.col(j).data());
    const std::vector<double> shift_f(un, rounding_shift(c[std::size_t(j)], bits_f));
    std::array<double*, 2> f_slices{f1.col(j).data(), f2.col(j).data()};
    slice(f.col(j).data(), un, shift_f.data(), bits_f, 2, f_slices.data(), f_rest.col(j).data());
  }
  f -= f_rest;  // F' = F1 + F2, exactly
  const int in = int(n);
  const auto product = [in](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double sign) {
    Eigen::MatrixXd p(in, in);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, in, in, in, sign, a.data(), in,
                b.data(), in, 0.0, p.data(), in);
    return p;
  };
  // H = E.hi - (A1 F1 + A1 F2 + A2 F1 + A2 F2 + fl(D F') - E.lo) - E.lo F', D =
  // fl(A_rest - E.hi): the two products in double share one DGEMM.
  const Eigen::MatrixXd d = a_rest - e.hi;
  const std::array<Eigen::MatrixXd, 6> terms{product(a1, f1, 1), product(a1, f2, 1),
                                             product(a2, f1, 1), product(a2, f2, 1),
                                             product(d, f, 1),   -e.lo};
  Eigen::MatrixXd hh(n, n), hl(n, n);
  double cascade = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    std::array<const double*, terms.size()> columns{};
    for (std::size_t k = 0; k < terms.size(); ++k) columns[k] = terms[k].col(j).data();
    cascade = std::max(cascade, dd::cascade_difference(in, int(terms.size()), e.hi.col(j).data(),
                                                       columns.data(), hh.col(j).data(),
                                                       hl.col(j).data()));
  }
  out.h = hh + hl;
  const double g = dd::gamma(double(n));
  out.d = dd::kUnitRoundoff * out.h.cwiseAbs();
  out.d.array() += cascade + e.error + 0x1p-1074 * 4 * double(n);
  // D errs by u |A_rest - E.hi| <= u (|A_rest| + |E.hi|) (2^-1074 where it
  // underflows), fl(D F') by gamma_N |D||F'| with |D| <= (1 + u)(|A_rest| +
  // |E.hi|): (u + gamma_N (1 + u)) (|A_rest| + |E.hi|)|F'| in all; E.lo F' and
  // (E - E.hi - E.lo) F' are left out.
  const double gd = dd::kUnitRoundoff + g * (1 + dd::kUnitRoundoff);
  out.x = gd * (a_rest.cwiseAbs().rowwise().maxCoeff() + e.hi.cwiseAbs().rowwise().maxCoeff()) +
          e.lo.cwiseAbs().rowwise().maxCoeff() +
          Eigen::VectorXd::Constant(n, e.error + 0x1p-1074);
  out.y = f.cwiseAbs().colwise().sum().transpose() / (1 - g);
  return out;
}

}  // namespace slaterlab::reference::detail
