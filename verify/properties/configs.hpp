#pragma once
// The strategy configurations the properties run over: every (strategy,
// precision) the factory knows, so that a newly registered strategy is
// covered without touching a test.
//
// - property_configs() is deterministic (the factory's order): every name's
//   default configuration first, then the window sizes K = 16, 1, 3 and the
//   variants where a strategy distinguishes them. A configuration a strategy
//   refuses (std::invalid_argument from make_updater) is left out; options a
//   strategy ignores give the same label and are dropped.
// - External kernels have no configuration without their library (the fuzz
//   engine adds one per precision a loaded kernel declares).

#include <iosfwd>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab {

/// A strategy name with options, and the label the strategy gives itself.
struct PropertyConfig {
  std::string name;
  UpdaterOptions options;
  std::string label;
};
std::ostream& operator<<(std::ostream& os, const PropertyConfig& c);

/// Every (strategy, precision) the factory knows, and for strategies that
/// distinguish them the window sizes K = 16, 1, 3 and every variant name in
/// use; options a strategy ignores give the same label and are dropped, and
/// every name's default configuration comes first.
std::vector<PropertyConfig> property_configs();

}  // namespace slaterlab
