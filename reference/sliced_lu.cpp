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

namespace slaterlab::reference::detail {
namespace {

constexpr int kSlices = 3;

/// The smallest e with m <= 2^e, for m > 0.
int exponent_above(double m) {
  int e = 0;
  const double f = std::frexp(m, &e);
  return f == 0.5 ? e - 1 : e;
}

/// Splits x[0..m) into kSlices slices on the grids 2^(e - bits), 2^(e -
/// 2 bits), ...: each slice is the remainder rounded to its grid by adding
/// and subtracting 1.5 * 2^52 * grid (exact for |remainder| <= 2^bits grid,
/// round to nearest). `rounded` gets their sum, x rounded to the last grid
/// (a double: a multiple of that grid no larger than 2^(e + 1)).
void slice(const double* x, std::size_t m, int e, int bits,
           std::array<Eigen::MatrixXd, kSlices>& slices, std::size_t offset, double* rounded) {
  std::vector<double> rest(x, x + m);
  for (int s = 0; s < kSlices; ++s) {
    const double sigma = 1.5 * std::ldexp(1.0, 52 + e - (s + 1) * bits);
    double* out = slices[std::size_t(s)].data() + offset;
    for (std::size_t i = 0; i < m; ++i) {
      out[i] = (rest[i] + sigma) - sigma;  // IEEE order: no reassociation without -ffast-math
      rest[i] -= out[i];
    }
  }
  for (std::size_t i = 0; i < m; ++i) rounded[i] = x[i] - rest[i];
}

}  // namespace

SlicedLu slice_lu(const Eigen::MatrixXd& lu) {
  const Eigen::Index n = lu.rows();
  SlicedLu f;
  f.l = lu.triangularView<Eigen::StrictlyLower>();
  f.l.diagonal().setOnes();
  f.u = lu.triangularView<Eigen::Upper>();
  for (auto* slices : {&f.l_slices, &f.u_slices}) {
    for (Eigen::MatrixXd& m : *slices) m.setZero(n, n);
  }
  int log2n = 0;
  while ((Eigen::Index(1) << log2n) < n) ++log2n;
  const int budget = 53 - log2n;  // bL + bU
  const int bl = budget / 2, bu = budget - bl;
  const int el = exponent_above(f.l.cwiseAbs().maxCoeff());  // 0: |L| <= 1 with partial pivoting
  const std::size_t size = std::size_t(n) * std::size_t(n);
  slice(f.l.data(), size, el, bl, f.l_slices, 0, f.l.data());
  for (Eigen::Index j = 0; j < n; ++j) {
    const int fj = exponent_above(f.u.col(j).cwiseAbs().maxCoeff());
    // The finest unit of a product must be a double (>= 2^-1074), 1.5 * 2^52
    // grid and the largest partial sum must not overflow.
    if (el + fj - kSlices * budget < -1074 || fj > 960) {
      f.failure = "column " + std::to_string(j) + " of U (largest entry near 2^" +
                  std::to_string(fj) + ") is outside the range the exact residual covers";
      return f;
    }
    const std::size_t offset = std::size_t(j) * std::size_t(n);
    slice(f.u.col(j).data(), std::size_t(n), fj, bu, f.u_slices, offset, f.u.col(j).data());
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

}  // namespace slaterlab::reference::detail
