#pragma once
// Gauss-Hermite quadrature for the orbital tests: exact, up to rounding, for
// exp(-t^2) times a polynomial of degree <= 2K - 1.

#include <Eigen/Dense>

#include <cmath>
#include <numbers>
#include <vector>

namespace slaterlab {

/// Gauss-Hermite rule with K nodes t_q, returned with the scaled weights
/// W_q = w_q exp(t_q^2), so that sum_q W_q g(t_q) = int g(t) dt exactly whenever
/// g(t) = exp(-t^2) p(t) with deg p <= 2K - 1. Computed in long double:
/// Golub-Welsch nodes refined by Newton on h_K (h_K' = sqrt(2K) h_{K-1} - t h_K
/// at alpha = 1), and W_q = 1 / sum_{k<K} h_k(t_q)^2 (the Christoffel function),
/// which keeps full relative accuracy where the Golub-Welsch weights (tiny at
/// the outer nodes, then multiplied by exp(t^2)) do not.
inline void gauss_hermite(int k, Eigen::VectorXd& nodes, Eigen::VectorXd& scaled_weights) {
  using LongDouble = long double;
  using MatrixLongDouble = Eigen::Matrix<LongDouble, Eigen::Dynamic, Eigen::Dynamic>;
  MatrixLongDouble jacobi = MatrixLongDouble::Zero(k, k);
  for (int i = 1; i < k; ++i) jacobi(i, i - 1) = jacobi(i - 1, i) = std::sqrt(0.5L * i);
  Eigen::SelfAdjointEigenSolver<MatrixLongDouble> es(jacobi);
  // Normalised Hermite functions (alpha = 1) h_0..h_k at t, in long double.
  auto hermite = [k](LongDouble t) {
    std::vector<LongDouble> h(static_cast<std::size_t>(k) + 1);
    h[0] = std::pow(std::numbers::pi_v<LongDouble>, -0.25L) * std::exp(-0.5L * t * t);
    if (k >= 1) h[1] = std::sqrt(2.0L) * t * h[0];
    for (int n = 1; n < k; ++n)
      h[n + 1] = std::sqrt(2.0L / (n + 1)) * t * h[n] - std::sqrt(LongDouble(n) / (n + 1)) * h[n - 1];
    return h;
  };
  nodes.resize(k);
  scaled_weights.resize(k);
  for (int q = 0; q < k; ++q) {
    LongDouble t = es.eigenvalues()(q);
    for (int it = 0; it < 3; ++it) {
      const auto h = hermite(t);
      t -= h[k] / (std::sqrt(2.0L * k) * h[k - 1] - t * h[k]);
    }
    const auto h = hermite(t);
    LongDouble sum = 0;
    for (int n = 0; n < k; ++n) sum += h[n] * h[n];
    nodes(q) = static_cast<double>(t);
    scaled_weights(q) = static_cast<double>(1.0L / sum);
  }
}

}  // namespace slaterlab
