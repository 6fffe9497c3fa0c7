#pragma once
// The randsvd generator's deterministic part: A = s U diag(sigma) V^T with
// Haar-random U, V (random_matrices.hpp, from this case's own draws) and moves whose columns keep A's conditioning along the
// sequence (the shape picked by RapidCheck in generators.cpp, the bulk values
// from one mt19937_64 seed). Deterministic: the same recipe gives the same
// case bit for bit.
//
// sigma_1 = 1, sigma_N = 1/kappa, the rest log-uniform between; s a power of
// two in [2^-8, 2^8] (1 when not `scaled`). New columns are drawn from the
// distribution of A's columns (s U diag(sigma) q, q a random unit vector:
// rho = O(1/sqrt(N))) or, 3 times in 10, are small steps a_k + 0.1 * that
// (rho near 1). Probe: columns 0 <- 1 (0 <- 0 when N = 1).

#include <Eigen/Core>

#include <cstdint>
#include <random>
#include <vector>

#include "verify/properties/case.hpp"

namespace slaterlab {

/// The randsvd generator's deterministic part: the case made from the shape
/// picked by RapidCheck and a seed for the bulk values (mt19937_64). With
/// `metropolis`, a move the pattern accepts is accepted only if
/// 1/3 <= |rho| <= 3 (rho from a double LU, only for the decision), so the
/// sequence keeps its conditioning as a Metropolis walk that rejects nodal
/// crossings does; `scaled` = false fixes the scale s to 1.
struct RandsvdRecipe {
  int n = 1;
  double log10_kappa = 0;
  std::vector<int> electrons;
  std::vector<int> accepts;  // 0 = reject, else accept
  std::uint64_t seed = 0;
  bool metropolis = false;
  bool scaled = true;
};
Case build_randsvd_case(const RandsvdRecipe& recipe);

}  // namespace slaterlab
