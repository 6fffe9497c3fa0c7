// sliced_lu.hpp: the LU residual of the rounded factors and the refinement
// residual, checked against exact integer arithmetic (every double is an
// integer times 2^-1074, so sums of products of them are exact in cpp_int
// scaled by 2^2148), on matrices whose rows and columns span 2^-40 ... 2^40
// so that the slices' grids differ. The only tolerance is the bound each
// function returns.

#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_int.hpp>

#include <cmath>
#include <random>

#include "slaterlab/reference/lu_residual.hpp"
#include "slaterlab/reference/sliced_lu.hpp"

namespace slaterlab::reference::detail {
namespace {

using Int = boost::multiprecision::cpp_int;
constexpr int kScale = 1074;  // a double times 2^1074 is an integer

Int scaled(double x, int extra = 0) {
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m 2^e, m 2^53 an integer
  Int v = Int(std::int64_t(std::ldexp(m, 53)));
  const int shift = e - 53 + kScale + extra;
  return Int(v << shift);  // shift >= 0 for every normal double and zero
}

/// Whether |value - exact| <= bound, all scaled by 2^(2 kScale) (value and
/// bound doubles).
bool within(const Int& exact, double value, double bound) {
  const Int d = abs(exact - scaled(value, kScale));
  return d <= scaled(bound, kScale);
}

Eigen::MatrixXd wide_range_matrix(Eigen::Index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> exponent(-20, 20);
  Eigen::MatrixXd a(n, n);
  for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = normal(rng);
  for (Eigen::Index i = 0; i < n; ++i) a.row(i) *= std::ldexp(1.0, exponent(rng));
  for (Eigen::Index j = 0; j < n; ++j) a.col(j) *= std::ldexp(1.0, exponent(rng));
  return a;
}

struct Case {
  Eigen::MatrixXd pa;
  SlicedLu f;
  ExactResidual e;
  std::vector<std::vector<Int>> e_exact;  // E = P A - L' U', scaled by 2^(2 kScale)
};

Case make_case(Eigen::Index n, std::uint64_t seed) {
  Case c;
  const Eigen::MatrixXd a = wide_range_matrix(n, seed);
  const DoubleLu lu = double_lu(a);
  int sign = 1;
  c.pa = permuted_rows(a, lu.pivots, sign);
  c.f = slice_lu(lu.lu);
  c.e = exact_lu_residual(c.pa, c.f);
  c.e_exact.assign(std::size_t(n), std::vector<Int>(std::size_t(n)));
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) {
      Int s = scaled(c.pa(i, j), kScale);
      for (Eigen::Index k = 0; k < n; ++k) s -= scaled(c.f.l(i, k)) * scaled(c.f.u(k, j));
      c.e_exact[std::size_t(i)][std::size_t(j)] = s;
    }
  }
  return c;
}

TEST(SlicedLu, RoundedFactorsAreTheSlicesSumAndStayTriangular) {
  const Case c = make_case(40, 1);
  ASSERT_TRUE(c.f.failure.empty()) << c.f.failure;
  EXPECT_TRUE(c.f.l.isApprox(c.f.l_slices[0] + c.f.l_slices[1] + c.f.l_slices[2], 0.0));
  EXPECT_TRUE(c.f.u.isApprox(c.f.u_slices[0] + c.f.u_slices[1] + c.f.u_slices[2], 0.0));
  EXPECT_TRUE((c.f.l.diagonal().array() == 1.0).all());
  EXPECT_EQ(c.f.l.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().sum(), 0.0);
  EXPECT_EQ(c.f.u.triangularView<Eigen::StrictlyLower>().toDenseMatrix().cwiseAbs().sum(), 0.0);
}

TEST(SlicedLu, ResidualIsExactButForItsBound) {
  for (const std::uint64_t seed : {1, 2, 3}) {
    const Case c = make_case(40, seed);
    ASSERT_TRUE(c.f.failure.empty()) << c.f.failure;
    // The bound is of order u^3 |L'||U'|: far below the residual itself.
    for (Eigen::Index i = 0; i < c.pa.rows(); ++i) {
      for (Eigen::Index j = 0; j < c.pa.cols(); ++j) {
        const Int& exact = c.e_exact[std::size_t(i)][std::size_t(j)];
        ASSERT_TRUE(within(exact - scaled(c.e.hi(i, j), kScale), c.e.lo(i, j), c.e.error))
            << "seed " << seed << " entry " << i << "," << j;
      }
    }
  }
}

TEST(SlicedLu, RefinementResidualLiesWithinItsBound) {
  const Case c = make_case(40, 4);
  const Eigen::Index n = c.pa.rows();
  // F^ from the solves, as the certified log|det| forms it.
  Eigen::MatrixXd f = c.f.l.triangularView<Eigen::UnitLower>().solve(c.e.hi);
  f = c.f.u.triangularView<Eigen::Upper>().solve(f);
  RefinementResidual r = refinement_residual(c.pa, c.e, f);
  ASSERT_TRUE(r.failure.empty()) << r.failure;
  // H = E - L' U' F' exactly (F' = f now), scaled by 2^(3 kScale): compare
  // with h and its bound scaled alike.
  const std::size_t un = std::size_t(n);
  std::vector<std::vector<Int>> uf(un, std::vector<Int>(un));
  for (Eigen::Index k = 0; k < n; ++k) {
    for (Eigen::Index j = 0; j < n; ++j) {
      Int s = 0;
      for (Eigen::Index m = 0; m < n; ++m) s += scaled(c.f.u(k, m)) * scaled(f(m, j));
      uf[std::size_t(k)][std::size_t(j)] = s;
    }
  }
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) {
      Int h = c.e_exact[std::size_t(i)][std::size_t(j)] << kScale;
      for (Eigen::Index k = 0; k < n; ++k) h -= scaled(c.f.l(i, k)) * uf[std::size_t(k)][std::size_t(j)];
      const Int diff = abs(h - scaled(r.h(i, j), 2 * kScale));
      const double bound = r.d(i, j) + r.x(i) * r.y(j);
      ASSERT_LE(diff, scaled(bound, 2 * kScale)) << "entry " << i << "," << j;
    }
  }
  // Not vacuous: the bound is far below H itself.
  EXPECT_LT((r.d.array() + (r.x * r.y.transpose()).array()).maxCoeff(), 1e-6 * r.h.cwiseAbs().maxCoeff());
}

}  // namespace
}  // namespace slaterlab::reference::detail
