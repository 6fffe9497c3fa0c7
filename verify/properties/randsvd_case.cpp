// The randsvd generator's deterministic part (contract in randsvd_case.hpp).

#include "verify/properties/randsvd_case.hpp"

#include <Eigen/Dense>

#include <cmath>

namespace slaterlab {

Eigen::MatrixXd haar_orthogonal(Eigen::Index n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd g(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) g(i, j) = normal(rng);
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
  Eigen::MatrixXd q = qr.householderQ();
  // Sign fix (Mezzadri): Q diag(sign(R_ii)) is Haar distributed.
  for (Eigen::Index i = 0; i < n; ++i)
    if (qr.matrixQR()(i, i) < 0) q.col(i) = -q.col(i);
  return q;
}

Case build_randsvd_case(const RandsvdRecipe& rec) {
  const int n = rec.n;
  std::mt19937_64 rng(rec.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal;
  const Eigen::MatrixXd u = haar_orthogonal(n, rng);
  const Eigen::MatrixXd v = haar_orthogonal(n, rng);
  Eigen::VectorXd sigma(n);
  for (int i = 0; i < n; ++i) {
    const double t = i == 0 ? 0.0 : i == n - 1 ? 1.0 : uniform(rng);
    sigma(i) = std::pow(10.0, -rec.log10_kappa * t);
  }
  const double scale = std::ldexp(1.0, int(std::floor(uniform(rng) * 17)) - 8) * rec.scaled +
                       (rec.scaled ? 0.0 : 1.0);
  const Eigen::MatrixXd us = scale * u * sigma.asDiagonal();

  Case c;
  c.initial = us * v.transpose();
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
