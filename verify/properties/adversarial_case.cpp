// The adversarial generator's deterministic part (contract in
// adversarial_case.hpp).

#include "verify/properties/adversarial_case.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace slaterlab {
namespace {

Eigen::VectorXd normal_vector(Eigen::Index n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = normal(rng);
  return v;
}

}  // namespace

Case build_adversarial_case(const AdversarialRecipe& r) {
  std::mt19937_64 rng(r.seed);
  const Eigen::Index n = r.n;
  const double eta = std::pow(10.0, -r.log10_inv_eta);
  Case c;
  c.initial.resize(n, n);
  for (Eigen::Index j = 0; j < n; ++j) c.initial.col(j) = normal_vector(n, rng);
  Eigen::MatrixXd current = c.initial;
  auto push = [&](Eigen::Index k, Eigen::VectorXd column) {
    const std::size_t i = c.moves.size();
    CaseMove mv{k, std::move(column), r.accepts[i] != 0};
    if (mv.accept) current.col(k) = mv.column;
    c.moves.push_back(std::move(mv));
  };
  const auto length = std::size_t(r.length);
  const Eigen::Index chain = std::min<Eigen::Index>(r.chain, n - 1);
  while (c.moves.size() < length) {
    if (chain == 0) {  // N = 1: nothing to collapse onto
      push(0, normal_vector(n, rng));
      continue;
    }
    const Eigen::Index start = std::uniform_int_distribution<Eigen::Index>(0, n - 1)(rng);
    auto col = [&](Eigen::Index t) { return (start + t) % n; };
    for (Eigen::Index t = 1; t <= chain && c.moves.size() < length; ++t) {
      const Eigen::VectorXd base = current.col(col(t - 1));
      const Eigen::VectorXd g = normal_vector(n, rng);
      push(col(t), base + eta * base.norm() * g / g.norm());
    }
    const Eigen::Index others = n - chain - 1;
    for (int h = 0; h < r.hold && others > 0 && c.moves.size() < length; ++h) {
      const Eigen::Index o = std::uniform_int_distribution<Eigen::Index>(0, others - 1)(rng);
      push(col(chain + 1 + o), normal_vector(n, rng));
    }
    for (Eigen::Index t = chain; t >= 1 && c.moves.size() < length; --t) {
      push(col(t), normal_vector(n, rng));
    }
  }
  return c;
}

}  // namespace slaterlab
