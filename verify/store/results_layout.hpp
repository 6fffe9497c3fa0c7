#pragma once
// The names of the results file's groups and attributes (schema version 1,
// docs/results.md), shared by its writer and its reader. Internal to
// verify/store.

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace slaterlab::store_detail {

inline constexpr const char* kExperiments = "experiments";
inline constexpr const char* kStrategies = "strategies";
inline constexpr const char* kReference = "reference";
inline constexpr const char* kConfig = "config";
inline constexpr const char* kVmc = "vmc";
inline constexpr const char* kOrbitals = "orbitals";
inline constexpr const char* kSchemaAttr = "schema_version";
inline constexpr const char* kParamPrefix = "param.";
inline constexpr const char* kAppendedPrefix = "appended.";
inline constexpr const char* kReferenceEnginePrefix = "reference.";
inline constexpr const char* kSummaryKeys = "summary_keys";  // written last: marks a finished strategy
inline constexpr const char* kSummaryUnits = "summary_units";
// StrategyInfo::provenance's keys, in the order they are written.
inline constexpr const char* kProvenanceKeys[] = {"library", "library_sha256", "kernel_name",
                                                  "kernel_version"};
// 1 once commit() closed the file and renamed it to its final name; 0 in a
// .partial, so that the file of a killed run is never taken as complete.
inline constexpr const char* kCommittedAttr = "committed";

inline std::string certified_prefix(std::string_view which) {
  return fmt::format("certified_{}.", which);
}

}  // namespace slaterlab::store_detail
