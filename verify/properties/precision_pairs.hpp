#pragma once
// Float against double: pairs of the same strategy and options in a lower
// precision and in double, and the sample a batch statistic is made of
// (derivation of the window: docs/properties.md, "Float against double").
//
// - precision_pairs(): every lower-precision configuration with its double
//   twin (property_configs() order).
// - precision_sample() traces the case (trace_case: std::invalid_argument
//   for an invalid case) and runs both configurations without recompute.

#include <iosfwd>

#include "verify/properties/case.hpp"
#include "verify/properties/configs.hpp"

namespace slaterlab {

/// (lower-precision, double) pairs of the same strategy and options.
struct PrecisionPair {
  PropertyConfig low;
  PropertyConfig high;
};
std::ostream& operator<<(std::ostream& os, const PrecisionPair& p);
std::vector<PrecisionPair> precision_pairs();

/// The maximum relative ratio errors of both configurations over the
/// well-conditioned proposals (1/3 <= |rho| <= 3) of a case, and their
/// quotient low / max(high, floor), floor = 1e3 eps_ld (the oracle's own
/// error is the floor of what can be measured).
struct PrecisionSample {
  double low = 0;
  double high = 0;
  double ratio = 0;
};
PrecisionSample precision_sample(const PrecisionPair& pair, const Case& c);
/// eps_low / eps_double: what the median sample ratio should be near.
double precision_target(const PrecisionPair& pair);
/// The median of a batch of 9 sample ratios must lie within
/// [target / kPrecisionWindow, target * kPrecisionWindow] (derivation in
/// docs/properties.md).
inline constexpr double kPrecisionWindow = 64;
inline constexpr int kPrecisionBatch = 9;

}  // namespace slaterlab
