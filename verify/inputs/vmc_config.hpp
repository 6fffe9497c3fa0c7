#pragma once
// The [[vmc]] entries of a study (internal to verify/inputs; the run's
// contract is study.hpp's VmcRunConfig, its keys docs/experiment-files.md).
// Errors: ConfigError naming the entry and the key.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "verify/inputs/study.hpp"

namespace slaterlab {

/// Keys of a [[vmc]] entry, and those whose value may be a list.
extern const std::vector<std::string> kVmcKeys;
extern const std::set<std::string> kVmcListKeys;

/// One expanded [[vmc]] entry, validated; its seed, unless given, derives
/// from study_seed and its name; a relative 'file' is taken from the
/// directory of the study file `source`.
VmcRunConfig parse_vmc(const toml::table& t, std::uint64_t study_seed, const std::string& source,
                       const std::string& where);

/// The resolved form of a VMC run: every key its system uses, defaults filled.
toml::table resolved_vmc(const VmcRunConfig& v);

}  // namespace slaterlab
