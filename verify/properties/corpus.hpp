#pragma once
// The kept corpus of counterexamples (data/fuzz-corpus/, README there): one
// replay file per case that once failed a property.
//
// A corpus entry is a replay file (docs/replay.md) with moves/accept, or for
// a case of update cycles moves/cycle (replay_schema_version 2), whose string
// root attributes name the strategy, its options, the property, the failure
// message, the seed and a status ("known-finding": a known, unfixed
// violation the suite expects to still fail; anything else: the property
// must hold).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/properties/case.hpp"

namespace slaterlab {

struct CorpusEntry {
  Case property_case;
  std::string strategy;        // factory name
  UpdaterOptions options;      // precision, recompute_every, breakdown, k, variant
  std::string label;           // the configuration's label (informational)
  std::string property;        // to_string(Property)
  std::string message;         // the failure when it was found
  std::string status = "new";  // "known-finding" | "fixed" | "new" | ...
  std::uint64_t seed = 0;
  std::string workload;   // CaseMode it was generated with (informational)
  std::string reproduce;  // the command that found it (informational)
};

/// Writes the entry as a replay file with its attributes (via a temporary
/// file in the same directory, renamed over `path`). Throws ReplayError on
/// I/O failure.
void write_corpus_entry(const std::filesystem::path& path, const CorpusEntry& entry);

/// Reads an entry; throws ReplayError for a bad replay file and
/// std::invalid_argument naming the file for a missing or malformed
/// attribute (strategy, precision, property and status are required) or a
/// file without moves/accept.
CorpusEntry read_corpus_entry(const std::filesystem::path& path);

/// The *.h5 files of a directory, sorted by name.
std::vector<std::filesystem::path> corpus_files(const std::filesystem::path& dir);

/// "<label>-<property>-<8 hex digits of the case's checksum>.h5".
std::string corpus_file_name(const std::string& label, const std::string& property, const Case& c);

}  // namespace slaterlab
