#pragma once
// The cycles generator's deterministic part: update cycles as
// multi-determinant expansions apply them (the `excitation-cycles`
// workload's pattern) on a randsvd matrix, from shapes picked by RapidCheck
// (generators.cpp) and one seed.
//
// Fresh columns s U diag(sigma) q (q a random unit vector) keep the
// conditioning of the randsvd matrix along the sequence. A shift cycle
// writes a_{p+t} := a_{p+t-1} (the columns before the cycle) for t =
// 1..rank-1, then a_p := fresh, as an expansion writes an excitation that
// inserts an orbital: every intermediate matrix has two equal columns.

#include <cstdint>
#include <vector>

#include "verify/properties/case.hpp"

namespace slaterlab {

/// One update cycle's shape: `rank` consecutive columns from `position`
/// (modulo N); a shift cycle (rank >= 2) inserts a fresh column at
/// `position` and shifts the block by one (every intermediate matrix is then
/// exactly singular), a plain one gives each column a fresh one.
struct CycleShape {
  int rank = 1;
  bool shift = false;
  int position = 0;
};
/// The cycles generator's deterministic part: the randsvd matrix of
/// (n, log10_kappa, seed) (build_randsvd_case) and the cycles of `shapes`,
/// their fresh columns drawn from the distribution of its columns.
Case build_cycles_case(int n, double log10_kappa, std::uint64_t seed,
                       const std::vector<CycleShape>& shapes);

}  // namespace slaterlab
