#include "slaterlab/strategies/determinant/precision.hpp"

#include <stdexcept>

namespace slaterlab {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::single: return "float";
    case Precision::double_: return "double";
    case Precision::mixed: return "mixed";
  }
  return "?";
}

Precision parse_precision(std::string_view text) {
  if (text == "float") return Precision::single;
  if (text == "double") return Precision::double_;
  if (text == "mixed") return Precision::mixed;
  throw std::invalid_argument("unknown precision '" + std::string(text) +
                              "' (valid: float, double, mixed)");
}

}  // namespace slaterlab
