#pragma once
// Precision vocabulary shared by every determinant strategy.

#include <limits>
#include <string>
#include <string_view>

namespace slaterlab {

/// How a strategy stores and computes.
///  - single: storage and arithmetic in float.
///  - double_: storage and arithmetic in double.
///  - mixed: storage in float; the inversions (initial and periodic recompute)
///    are done in double and rounded to float, so only the update arithmetic
///    runs in float. Accumulations that a strategy documents as "in double"
///    (e.g. dot products of the look-ahead) also run in double.
enum class Precision { single, double_, mixed };

/// "float", "double" or "mixed" (the spelling used in TOML and HDF5).
std::string_view to_string(Precision p);

/// Parses "float" | "double" | "mixed"; throws std::invalid_argument naming
/// the bad value otherwise.
Precision parse_precision(std::string_view text);

/// Unit roundoff of the storage type (the epsilon errors are reported in).
inline double storage_epsilon(Precision p) {
  return p == Precision::double_ ? std::numeric_limits<double>::epsilon()
                                 : std::numeric_limits<float>::epsilon();
}

}  // namespace slaterlab
