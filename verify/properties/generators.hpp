#pragma once
// The RapidCheck generators of property cases: the picks of a case's shape
// in an order chosen for shrinking, handed to the deterministic builders
// (randsvd_case.hpp, adversarial_case.hpp, cycles_case.hpp).
//
// - gen_case(limits) picks N, the conditioning, the length, then the values
//   (order and what shrinks to what: generators.cpp), within `limits`
//   (case_limits.hpp).
// - pick_case() makes the same picks inside a running property.
// - Deterministic given RapidCheck's seed: the same seed draws the same cases.

#include <rapidcheck.h>

#include <iosfwd>

#include "verify/properties/case.hpp"
#include "verify/properties/case_limits.hpp"

namespace slaterlab {

/// A generated case with the knobs it was made with.
struct GeneratedCase {
  Case property_case;
  int recompute_every = 0;  // the cadence to run it with (UpdaterOptions)
  CaseMode mode = CaseMode::randsvd;
  double log10_kappa = 0;    // randsvd: of the initial matrix
  double log10_inv_eta = 0;  // adversarial
};
/// A summary (N, moves, accepts, conditioning, cadence), not the matrices.
std::ostream& operator<<(std::ostream& os, const GeneratedCase& g);

rc::Gen<GeneratedCase> gen_case(const CaseLimits& limits);
/// The same picks made directly in the calling property (only valid inside
/// one), in the same order: a property that picks its case this way draws
/// exactly what inline picks of its own would draw from a given seed.
GeneratedCase pick_case(const CaseLimits& limits);

}  // namespace slaterlab
