#include "slaterlab/strategies/sampling/scheme.hpp"

//  - qs-batched: the reading of the paper's section V.D: trial moves and
//    orbital values for all N electrons in one batch, then accept/reject
//    electron by electron against the determinant as it stands. Since
//    r_j' = r_j + step g_j and r_j has not moved earlier in the sweep, this
//    is the pbp chain with the random numbers drawn in a different order.

#include <stdexcept>

namespace slaterlab {

std::string_view to_string(Scheme scheme) {
  switch (scheme) {
    case Scheme::pbp: return "pbp";
    case Scheme::qs: return "qs";
    case Scheme::qs_batched: return "qs-batched";
  }
  throw std::invalid_argument("unknown sampling scheme enumerator");
}

Scheme parse_scheme(std::string_view text) {
  for (Scheme s : {Scheme::pbp, Scheme::qs, Scheme::qs_batched})
    if (to_string(s) == text) return s;
  throw std::invalid_argument("unknown sampling scheme '" + std::string(text) +
                              "' (known: pbp, qs, qs-batched)");
}

std::vector<std::string> known_schemes() {
  std::vector<std::string> names;
  for (Scheme s : {Scheme::pbp, Scheme::qs, Scheme::qs_batched}) names.emplace_back(to_string(s));
  return names;
}

}  // namespace slaterlab
