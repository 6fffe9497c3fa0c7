#pragma once
// Support shared by the reference tests (mp_test, certified_test): the error
// vocabulary their tolerances are written in, and the random-matrix
// generators.
//
// Error vocabulary:
// - u(d) = mp_epsilon(d) / 2 is the unit roundoff of the d-digit type.
// - Every result is rounded once at the end (log|det| to long double, the
//   rest to double). Boost's conversion is at least faithful (error below
//   one ulp, and ulp(x) <= eps |x|), so two results whose exact values agree
//   far below an ulp differ by at most eps (|x| + |y|).
// - LU with partial pivoting is backward stable: the computed factors are
//   exact for A + E with |E| <= gamma_N |L||U| (Higham, Thm 9.3), i.e.
//   ||E||_1 <= kC N u ||A||_1, where kC = 16 covers the constant and the
//   growth factor rho_N, which for the small (N <= 12) random matrices
//   generated here stays far below its worst case 2^(N-1).

#include <rapidcheck.h>

#include <Eigen/Core>
#include <Eigen/QR>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "slaterlab/reference/mp.hpp"

namespace slaterlab::testing {

inline constexpr double kC = 16.0;
inline constexpr double kEpsD = std::numeric_limits<double>::epsilon();
inline constexpr long double kEpsLongDouble = std::numeric_limits<long double>::epsilon();
// The truth for the lockstep checks, and the inverse behind kappa_1: a fresh
// LU at 100 digits.
inline constexpr int kTruthDigits = 100;

inline double u(int digits) { return reference::mp_epsilon(digits) / 2; }

inline double norm_1(const Eigen::MatrixXd& m) { return m.cwiseAbs().colwise().sum().maxCoeff(); }

/// kappa_1(A) = ||A||_1 ||A^{-1}||_1, A^{-1} from a 100-digit LU: its relative
/// error (kC N 1e-100 kappa) is irrelevant for a quantity used in bounds.
inline double kappa_1(const Eigen::MatrixXd& a) {
  return norm_1(a) * norm_1(reference::mp_inverse(a, kTruthDigits));
}

/// |log|det(A + E)| - log|det A|| = |log|det(I + A^{-1} E)|| <= sum_i |log|1 + lambda_i||
/// over the N eigenvalues of A^{-1} E, each |lambda_i| <= ||A^{-1} E||_1 <= kC N u kappa_1;
/// |log|1 + z|| <= 2 |z| for |z| <= 1/2. Hence 2 kC N^2 u kappa_1.
inline long double lu_log_det_error(Eigen::Index n, int digits, double kappa) {
  return 2.0L * kC * n * n * u(digits) * kappa;
}

/// Each column of an LU-based inverse or solve is a backward-stable solve, so
/// its forward error is at most kC N u kappa_1 times ||x||_1 (first order).
inline double lu_solve_error(Eigen::Index n, int digits, double kappa) {
  return kC * n * u(digits) * kappa;
}

/// The largest gap between two faithful roundings to long double of values
/// that agree far below an ulp of x.
inline long double two_ld_ulps(long double x) { return 2.0L * kEpsLongDouble * std::fabs(x); }

// --- generators (call inside properties only) --------------------------------

// Entries are integers / 2^20: exact doubles in [-1, 1] that shrink toward 0.
inline constexpr int kGrid = 1 << 20;

inline Eigen::MatrixXd draw_matrix(Eigen::Index rows, Eigen::Index cols) {
  const auto v = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(rows * cols),
                                                      rc::gen::inRange(-kGrid, kGrid + 1));
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<double>(v[i]) / kGrid;
  return m;
}

inline Eigen::VectorXd draw_vector(Eigen::Index n) { return draw_matrix(n, 1).col(0); }

/// Q of the Householder QR of a drawn matrix: random orthogonal, with either
/// determinant sign. When entries shrink to 0 the reflectors vanish and Q -> I.
inline Eigen::MatrixXd draw_orthogonal(Eigen::Index n) {
  return Eigen::HouseholderQR<Eigen::MatrixXd>(draw_matrix(n, n)).householderQ();
}

/// A = U diag(s) V^T with s_i = 10^(-t i / (N - 1)), t drawn in
/// [0, max_log10_kappa]: 2-norm condition number 10^t (bounds use the kappa_1
/// measured on the rounded double matrix, not this nominal value).
inline Eigen::MatrixXd draw_conditioned(Eigen::Index n, double max_log10_kappa) {
  const double t = *rc::gen::inRange(0, 101) / 100.0 * max_log10_kappa;
  Eigen::VectorXd s(n);
  for (Eigen::Index i = 0; i < n; ++i) s(i) = n == 1 ? 1.0 : std::pow(10.0, -t * i / (n - 1));
  return draw_orthogonal(n) * s.asDiagonal() * draw_orthogonal(n).transpose();
}

/// A conditioned matrix with column j copied into column k != j: det = 0 exactly.
inline Eigen::MatrixXd draw_singular(Eigen::Index n) {
  Eigen::MatrixXd a = draw_conditioned(n, 6);
  const Eigen::Index j = *rc::gen::inRange<Eigen::Index>(0, n);
  const Eigen::Index k = (j + *rc::gen::inRange<Eigen::Index>(1, n)) % n;
  a.col(k) = a.col(j);
  return a;
}

// --- seeded generators (outside properties) ----------------------------------

inline Eigen::MatrixXd seeded_gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  return m;
}

/// U diag(s) V^T with Haar-like U, V and s_i = kappa^(-i / (N - 1)): 2-norm
/// condition number kappa before the rounding to double.
inline Eigen::MatrixXd seeded_randsvd(Eigen::Index n, double kappa, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Eigen::MatrixXd u =
      Eigen::HouseholderQR<Eigen::MatrixXd>(seeded_gaussian(n, n, rng)).householderQ();
  const Eigen::MatrixXd v =
      Eigen::HouseholderQR<Eigen::MatrixXd>(seeded_gaussian(n, n, rng)).householderQ();
  Eigen::VectorXd s(n);
  for (Eigen::Index i = 0; i < n; ++i) s(i) = std::pow(kappa, -double(i) / double(n - 1));
  return u * s.asDiagonal() * v.transpose();
}

}  // namespace slaterlab::testing
