// The cycles generator's deterministic part (contract in cycles_case.hpp).

#include "verify/properties/cycles_case.hpp"

#include <Eigen/Dense>

#include <random>

#include "verify/properties/randsvd_case.hpp"

namespace slaterlab {

Case build_cycles_case(int n, double log10_kappa, std::uint64_t seed,
                       const std::vector<CycleShape>& shapes) {
  RandsvdRecipe r;
  r.n = n;
  r.log10_kappa = log10_kappa;
  r.seed = seed;
  Case c = build_randsvd_case(r);  // the matrix alone (no moves)
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);  // a stream apart from the matrix's
  std::normal_distribution<double> normal;
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(c.initial, Eigen::ComputeFullU);
  const Eigen::MatrixXd us = svd.matrixU() * svd.singularValues().asDiagonal();
  const auto fresh = [&] {
    Eigen::VectorXd q(n);
    for (int i = 0; i < n; ++i) q(i) = normal(rng);
    return Eigen::VectorXd(us * q.normalized());
  };
  Eigen::MatrixXd current = c.initial;
  for (const CycleShape& shape : shapes) {
    const auto col = [&](int t) { return Eigen::Index((shape.position + t) % n); };
    const Eigen::MatrixXd before = current;
    const auto push = [&](Eigen::Index k, Eigen::VectorXd column) {
      current.col(k) = column;
      c.moves.push_back({k, std::move(column), true});
    };
    if (shape.shift && shape.rank >= 2) {
      for (int t = 1; t < shape.rank; ++t) push(col(t), before.col(col(t - 1)));
      push(col(0), fresh());
    } else {
      for (int t = 0; t < shape.rank; ++t) push(col(t), fresh());
    }
    c.cycles.push_back(shape.rank);
  }
  return c;
}

}  // namespace slaterlab
