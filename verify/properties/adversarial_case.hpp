#pragma once
// The adversarial generator's deterministic part: chains of near-collinear
// updates (the `adversarial` workload's pattern) from a shape picked by
// RapidCheck (generators.cpp) and one mt19937_64 seed for the values.
//
// A iid N(0,1); cycles of collapse (a'_{c_t} = a_{c_{t-1}} +
// eta ||a_{c_{t-1}}|| g/||g||, t = 1..chain, rho ~ eta), hold (fresh columns
// elsewhere while near-singular) and release (fresh columns back, rho ~
// 1/eta), on distinct consecutive columns from a random start; the sequence
// is cut at `length`. N = 1 has nothing to collapse onto: fresh columns only.
// Precondition: accepts holds at least `length` decisions.

#include <cstdint>
#include <vector>

#include "verify/properties/case.hpp"

namespace slaterlab {

struct AdversarialRecipe {
  int n = 1;
  double log10_inv_eta = 0;
  int length = 0;
  int chain = 1;
  int hold = 0;
  std::vector<int> accepts;
  std::uint64_t seed = 0;
};

Case build_adversarial_case(const AdversarialRecipe& r);

}  // namespace slaterlab
