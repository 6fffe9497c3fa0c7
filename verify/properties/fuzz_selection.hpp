#pragma once
// What a fuzz run checks: the configurations (property_configs() filtered by
// strategy name or label and precision, plus one per precision each external
// kernel declares), the properties, the workloads, and the configurations
// grouped by the generator limits they share.
//
// select_fuzz() throws std::invalid_argument, before any work, for an
// unknown strategy, precision, property or workload (with the closest name),
// a selection no configuration matches, a selection with no property that
// applies to a selected workload, and a kernel library that does not load.
// Groups come in a stable order whatever the selection: "double" first.

#include <cstddef>
#include <string>
#include <vector>

#include "verify/properties/case_limits.hpp"
#include "verify/properties/configs.hpp"
#include "verify/properties/fuzz_args.hpp"
#include "verify/properties/property.hpp"

namespace slaterlab {

/// Configurations that share generator limits (the storage precision's
/// epsilon): "double", and "float" for float and mixed storage.
struct FuzzGroup {
  std::string name;
  Precision limits_precision;
  std::vector<std::size_t> configs;  // indices into FuzzSelection::configs
};

struct FuzzSelection {
  std::vector<PropertyConfig> configs;
  std::vector<Property> properties;
  std::vector<CaseMode> modes;
  std::vector<FuzzGroup> groups;
};

FuzzSelection select_fuzz(const FuzzArgs& args);

}  // namespace slaterlab
