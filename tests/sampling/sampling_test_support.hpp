#pragma once
// Shared utilities of the sampling tests: random streams, batch means and the
// a posteriori rounding bound of the local energy.

#include <Eigen/Core>
#include <Eigen/LU>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "slaterlab/reference/harmonic_trap.hpp"
#include "slaterlab/strategies/determinant/determinant_updater.hpp"
#include "slaterlab/strategies/sampling/random_source.hpp"
#include "slaterlab/strategies/sampling/vmc.hpp"
#include "verify/inputs/rng.hpp"

namespace slaterlab::testing {

inline RandomFactory rng_factory(std::uint64_t seed) {
  return [seed](std::uint64_t stream) { return make_random_source(Rng::stream(seed, stream)); };
}

inline std::unique_ptr<RandomSource> rng_stream(std::uint64_t seed, std::uint64_t stream) {
  return make_random_source(Rng::stream(seed, stream));
}

/// Mean and standard error by batch means. Each series is cut into `batches`
/// equal consecutive batches (a remainder at the end is dropped). For batch
/// length b much longer than the integrated autocorrelation time tau, batch
/// means are nearly independent with variance sigma^2 2 tau / b, so their
/// sample variance s^2 estimates it without knowing tau and the grand mean of
/// B batch means has standard error s / sqrt(B). Series of independent
/// walkers pool their batches. With B batches the error estimate has B - 1
/// degrees of freedom: |mean - exact| < 4 error fails by chance with
/// probability P(|t_{B-1}| > 4), about 1e-4 for B = 80.
struct MeanError {
  double mean = 0.0;
  double error = 0.0;
  int batches = 0;
};

inline MeanError batch_means(const std::vector<std::vector<double>>& series, int batches) {
  std::vector<double> means;
  for (const auto& s : series) {
    const std::size_t b = s.size() / std::size_t(batches);
    for (int k = 0; k < batches; ++k) {
      double sum = 0.0;
      for (std::size_t t = 0; t < b; ++t) sum += s[std::size_t(k) * b + t];
      means.push_back(sum / double(b));
    }
  }
  MeanError r;
  r.batches = static_cast<int>(means.size());
  for (double m : means) r.mean += m;
  r.mean /= double(means.size());
  double ss = 0.0;
  for (double m : means) ss += (m - r.mean) * (m - r.mean);
  r.error = std::sqrt(ss / double(means.size() - 1) / double(means.size()));
  return r;
}

/// gamma_n = n u / (1 - n u), u = 2^-53 (Higham's bound for n roundings).
inline double gamma(double n) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  return n * u / (1.0 - n * u);
}

/// The inverse a strategy maintains, in double (for QR strategies formed
/// from the factors: A^{-1} = P R^{-1} Q^T, P e_j = e_{column_of[j]}).
inline Eigen::MatrixXd maintained_inverse(const DeterminantUpdater& updater) {
  const MaintainedState state = updater.maintained();
  if (state.inverse) return *state.inverse;
  const QrFactors& qr = *state.qr;
  const Eigen::Index n = qr.r.rows();
  Eigen::MatrixXd rinv_qt = qr.q.transpose();
  qr.r.triangularView<Eigen::Upper>().solveInPlace(rinv_qt);
  Eigen::MatrixXd x(n, n);
  for (Eigen::Index j = 0; j < n; ++j) x.row(qr.column_of[std::size_t(j)]) = rinv_qt.row(j);
  return x;
}

/// A posteriori bound on |E_L(computed) - E_L(exact)| for the determinant of
/// HO orbitals of frequency alpha in the trap omega.
///
/// Exact identity: each computed orbital value A(i, j) comes with a computed
/// Laplacian L(i, j) = -2 (e_i - v_j) A(i, j) + dL(i, j), e_i = alpha (n_i + 3/2),
/// v_j = alpha^2 |r_j|^2 / 2, where dL is the rounding of the Laplacian
/// formula sum_d (alpha^2 x_d^2 - alpha (2 n_d + 1)) h h h, at most
/// c_L u m(i, j) with m(i, j) = (alpha^2 |r_j|^2 + alpha (2 n_i + 3)) |A(i, j)|
/// (c_L = 16 covers the ~8 roundings of the formula). With X the strategy's
/// inverse,
///   -1/2 sum_{ij} X(j,i) L(i,j) = sum_i e_i (A X)(i,i) - sum_j v_j (X A)(j,j) - 1/2 sum X dL,
/// so the computed kinetic energy differs from the exact sum_i e_i - sum_j v_j by
///   sum_i |e_i| |(A X - I)_ii| + sum_j v_j |(X A - I)_jj|      (inverse residual)
/// + gamma_N (sum_i |e_i| (|A||X|)_ii + sum_j v_j (|X||A|)_jj)  (computing that residual here)
/// + (c_L u / 2 + gamma_{2N}) sum_{ij} |X(j,i)| m(i,j)          (Laplacian rounding, the trace sum)
/// and the potential and the closed form add gamma_{N+4} of their magnitudes.
/// Residuals here are the strategy's own error (float storage shows as a
/// float-sized residual); everything else is double rounding.
inline double local_energy_bound(const Eigen::MatrixXd& a, const Eigen::MatrixXd& x,
                                 const Eigen::Matrix3Xd& r, double alpha, double omega) {
  const Eigen::Index n = a.rows();
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const Eigen::MatrixXd ax = a * x - Eigen::MatrixXd::Identity(n, n);
  const Eigen::MatrixXd xa = x * a - Eigen::MatrixXd::Identity(n, n);
  const Eigen::MatrixXd abs_ax = a.cwiseAbs() * x.cwiseAbs();
  const Eigen::MatrixXd abs_xa = x.cwiseAbs() * a.cwiseAbs();
  double bound = 0.0, lap = 0.0, potential = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double e = alpha * (reference::trap_shell_of(i) + 1.5);
    bound += e * (std::abs(ax(i, i)) + gamma(double(n)) * abs_ax(i, i));
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    const double r2 = r.col(j).squaredNorm();
    const double v = 0.5 * alpha * alpha * r2;
    bound += v * (std::abs(xa(j, j)) + gamma(double(n)) * abs_xa(j, j));
    potential += 0.5 * omega * omega * r2;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double m = (alpha * alpha * r2 + alpha * (2 * reference::trap_shell_of(i) + 3)) *
                       std::abs(a(i, j));
      lap += std::abs(x(j, i)) * m;
    }
  }
  const double s = reference::trap_energy_sum(n);
  return bound + (16 * u / 2 + gamma(2.0 * double(n))) * lap +
         gamma(double(n) + 4) * (potential + alpha * s + 0.5 * alpha * alpha * r.squaredNorm());
}

/// sum_j |r_j|^2.
inline double sum_r2(const Eigen::Matrix3Xd& r) { return r.squaredNorm(); }

}  // namespace slaterlab::testing
