#include "slaterlab/strategies/orbitals/gaussian_overlap.hpp"

// Primitive overlaps. Two cartesian primitives x_A^i e^{-a|r-A|^2} and
// x_B^j e^{-b|r-B|^2} (per direction) overlap by
//   K prod_d E_d(i_d, j_d),  K = (pi/p)^{3/2} e^{-mu |A-B|^2},
// p = a + b, mu = ab/p, P = (aA + bB)/p, with E(0, 0) = 1 and (Obara-Saika)
//   E(i+1, j) = X_PA E(i, j) + (i E(i-1, j) + j E(i, j-1)) / (2p),
//   E(i, j+1) = X_PB E(i, j) + (i E(i-1, j) + j E(i, j-1)) / (2p).
// A shell pair's block is T_a (sum_kl w_k w_l S^cart_kl) T_b^T with the
// prepared T and w of gaussian_basis.cpp.
//
// Rounding. Running the same recurrence on |X_PA|, |X_PB|, |w| and |T| sums
// the absolute values of every term the real run adds (all its coefficients
// become nonnegative), so the real run's error is at most eps times that
// magnitude times the longest chain of roundings a term passes through: the
// exponential (its argument carries mu |A-B|^2 relative rounding), the
// prefactor (4), the recurrence (3 per step, i + j steps), the three
// directions' product (2), the weights (2), the sum over primitive pairs
// (n_a n_b) and the two transformations (cartesian counts), plus the
// relative rounding of each AO's normalisation (PreparedShell). R is that
// product, to first order in eps.

#include <algorithm>
#include <cmath>
#include <numbers>

namespace slaterlab {
namespace {

constexpr int kSide = kMaxAngularMomentum + 1;
using Table = double[kSide][kSide];

void recurrence(double xpa, double xpb, double half_over_p, int la, int lb, Table& e) {
  e[0][0] = 1.0;
  for (int i = 0; i < la; ++i)
    e[i + 1][0] = xpa * e[i][0] + (i > 0 ? i * e[i - 1][0] : 0.0) * half_over_p;
  for (int j = 0; j < lb; ++j)
    for (int i = 0; i <= la; ++i)
      e[i][j + 1] = xpb * e[i][j] +
                    ((i > 0 ? i * e[i - 1][j] : 0.0) + (j > 0 ? j * e[i][j - 1] : 0.0)) * half_over_p;
}

// The block of shells a and b; `absolute` gives the rounding magnitude R.
Eigen::MatrixXd shell_pair(const PreparedShell& a, const PreparedShell& b, bool absolute) {
  const auto powers_a = cartesian_powers(a.l);
  const auto powers_b = cartesian_powers(b.l);
  Eigen::MatrixXd cart = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(powers_a.size()),
                                               static_cast<Eigen::Index>(powers_b.size()));
  const Eigen::Vector3d ab = a.centre - b.centre;
  const double ab2 = ab.squaredNorm();
  const double pairs = static_cast<double>(a.exponents.size() * b.exponents.size());
  Table e[3];
  for (std::size_t k = 0; k < a.exponents.size(); ++k)
    for (std::size_t q = 0; q < b.exponents.size(); ++q) {
      const double alpha = a.exponents[k], beta = b.exponents[q];
      const double p = alpha + beta;
      const double mu = alpha * beta / p;
      double prefactor = a.weights[k] * b.weights[q] * std::pow(std::numbers::pi / p, 1.5) *
                         std::exp(-mu * ab2);
      for (int d = 0; d < 3; ++d) {
        const double centre_p = (alpha * a.centre(d) + beta * b.centre(d)) / p;
        double xpa = centre_p - a.centre(d), xpb = centre_p - b.centre(d);
        if (absolute) xpa = std::abs(xpa), xpb = std::abs(xpb);
        recurrence(xpa, xpb, 0.5 / p, a.l, b.l, e[d]);
      }
      if (absolute)
        prefactor = std::abs(prefactor) *
                    (mu * ab2 + 4.0 + 3.0 * (a.l + b.l) + 2.0 + 2.0 + pairs +
                     static_cast<double>(powers_a.size() + powers_b.size()) +
                     a.normalisation_rounding + b.normalisation_rounding);
      for (std::size_t m = 0; m < powers_a.size(); ++m)
        for (std::size_t n = 0; n < powers_b.size(); ++n)
          cart(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(n)) +=
              prefactor * e[0][powers_a[m][0]][powers_b[n][0]] * e[1][powers_a[m][1]][powers_b[n][1]] *
              e[2][powers_a[m][2]][powers_b[n][2]];
    }
  if (absolute) return a.angular.cwiseAbs() * cart * b.angular.cwiseAbs().transpose();
  return a.angular * cart * b.angular.transpose();
}

Eigen::MatrixXd assemble(const GaussianBasis& basis, bool absolute) {
  Eigen::MatrixXd s(basis.size(), basis.size());
  const auto& shells = basis.shells();
  for (std::size_t i = 0; i < shells.size(); ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      const Eigen::MatrixXd block = shell_pair(shells[i], shells[j], absolute);
      s.block(shells[i].first_ao, shells[j].first_ao, block.rows(), block.cols()) = block;
      s.block(shells[j].first_ao, shells[i].first_ao, block.cols(), block.rows()) = block.transpose();
    }
  return s;
}

}  // namespace

Eigen::MatrixXd gaussian_overlap(const GaussianBasis& basis) { return assemble(basis, false); }

Eigen::MatrixXd gaussian_overlap_rounding(const GaussianBasis& basis) { return assemble(basis, true); }

}  // namespace slaterlab
