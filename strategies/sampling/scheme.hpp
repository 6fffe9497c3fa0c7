#pragma once
// Metropolis sampling schemes of the VMC walker (Uejima & Maezono, Eqs.
// 10-11; docs/references.md). One sweep gives each of the N electrons one
// Gaussian trial move r_j' = r_j + step g_j, accepted with min(1, |rho|^2).
//  - pbp: particle by particle (Eq. 10): each rho against the determinant
//    as it stands. A valid Metropolis chain for |Psi|^2.
//  - qs: quasi-simultaneous (Eq. 11): all N trial positions at once, every
//    rho_j against the FIXED configuration of the previous sweep, accepted
//    independently; the accepted columns are applied together (ratio +
//    accept each, then flush). A different Markov chain, whose bias the
//    framework measures rather than assumes away.
//  - qs-batched: trial moves and orbital values in one batch, then
//    accept/reject electron by electron as pbp does: the pbp chain with the
//    random numbers drawn in another order (scheme.cpp).

#include <string>
#include <string_view>
#include <vector>

namespace slaterlab {

enum class Scheme { pbp, qs, qs_batched };

/// "pbp", "qs" or "qs-batched" (the spelling used in TOML, HDF5 and the CLI).
std::string_view to_string(Scheme scheme);

/// Parses a scheme name; throws std::invalid_argument naming the bad value
/// and listing the known names otherwise.
Scheme parse_scheme(std::string_view text);

/// Every scheme name, in enum order.
std::vector<std::string> known_schemes();

}  // namespace slaterlab
