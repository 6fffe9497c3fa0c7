#pragma once
// The one error type of a bad study definition (config.hpp).

#include <stdexcept>

namespace slaterlab {

/// Bad input in an experiment definition: the message names the file, the
/// key and the problem (and the closest valid key for an unknown one).
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace slaterlab
