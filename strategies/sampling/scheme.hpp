#pragma once
// Metropolis sampling schemes of the VMC walker (Uejima & Maezono, Eqs.
// 10-11; docs/references.md). In every scheme one sweep gives each of the N electrons exactly one
// Gaussian trial move r_j' = r_j + step g_j, g_j ~ N(0, I_3), accepted with
// probability min(1, |rho|^2).
//
//  - pbp: particle by particle (Eq. 10). Electron j = 0..N-1 in turn: draw
//    g_j, evaluate the orbitals at r_j' alone, rho = det(A')/det(A) against
//    the determinant as it stands (earlier moves of the sweep included),
//    accept or reject. A valid Metropolis chain for |Psi|^2.
//  - qs: quasi-simultaneous (Eq. 11). All N trial positions at once, their
//    orbitals in one batch; every rho_j is taken against the FIXED
//    configuration of the previous sweep; each accepted independently with
//    its own uniform; all accepted columns are then applied together as one
//    rank-m update (ratio + accept per accepted column in electron order,
//    then flush: a delayed strategy applies them en bloc). This is a
//    different Markov chain: its stationary law need not be |Psi|^2, and the
//    framework measures its bias rather than assuming there is none.
//  - qs-batched: the reading of the paper's section V.D: trial moves and
//    orbital values for all N electrons in one batch, then accept/reject
//    electron by electron against the determinant as it stands. Since
//    r_j' = r_j + step g_j and r_j has not moved earlier in the sweep, this
//    is the pbp chain with the random numbers drawn in a different order.

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
