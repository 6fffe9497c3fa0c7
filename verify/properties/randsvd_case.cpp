// The randsvd generator's deterministic part (contract in randsvd_case.hpp).

#include "verify/properties/randsvd_case.hpp"

#include "verify/inputs/random_matrices.hpp"

#include <Eigen/Dense>

#include <cmath>

namespace slaterlab {

namespace {

/// n x n iid standard normals, column by column from a distribution of its
/// own (the draws every stored case was made with).
Eigen::MatrixXd gaussian_matrix(Eigen::Index n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd g(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) g(i, j) = normal(rng);
  return g;
}

}  // namespace

Case build_randsvd_case(const RandsvdRecipe& rec) {
  const int n = rec.n;
  std::mt19937_64 rng(rec.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal;
  const Eigen::MatrixXd gaussian_u = gaussian_matrix(n, rng);
  const Eigen::MatrixXd gaussian_v = gaussian_matrix(n, rng);
  Eigen::VectorXd sigma(n);
  for (int i = 0; i < n; ++i) {
    const double t = i == 0 ? 0.0 : i == n - 1 ? 1.0 : uniform(rng);
    sigma(i) = std::pow(10.0, -rec.log10_kappa * t);
  }
  const double scale = std::ldexp(1.0, int(std::floor(uniform(rng) * 17)) - 8) * rec.scaled +
                       (rec.scaled ? 0.0 : 1.0);
  RandsvdFactors factors = randsvd(gaussian_u, gaussian_v, sigma);
  // s is a power of two: s (U diag(sigma)) rounds exactly as (s U) diag(sigma).
  factors.u_sigma *= scale;
  const Eigen::MatrixXd& us = factors.u_sigma;

  Case c;
  c.initial = factors.matrix();
  Eigen::MatrixXd current = c.initial;
  for (std::size_t i = 0; i < rec.electrons.size(); ++i) {
    Eigen::VectorXd q(n);
    for (int r = 0; r < n; ++r) q(r) = normal(rng);
    q.normalize();
    CaseMove mv;
    mv.electron = rec.electrons[i];
    mv.column = us * q;
    if (uniform(rng) < 0.3) mv.column = current.col(mv.electron) + 0.1 * mv.column;
    mv.accept = rec.accepts[i] != 0;
    if (mv.accept && rec.metropolis) {
      const double rho = current.partialPivLu().solve(mv.column)(mv.electron);
      mv.accept = std::abs(rho) >= 1.0 / 3 && std::abs(rho) <= 3;
    }
    if (mv.accept) current.col(mv.electron) = mv.column;
    c.moves.push_back(std::move(mv));
  }
  c.probe_column = 0;
  c.probe_source = n > 1 ? 1 : 0;
  return c;
}

}  // namespace slaterlab
