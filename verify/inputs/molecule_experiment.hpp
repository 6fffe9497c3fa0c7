#pragma once
// The keys of an [[experiment]] with workload = "molecule" (internal to
// verify/inputs; config.cpp parses the keys every experiment shares; the
// keys: docs/experiment-files.md, the workload: docs/molecules.md).
// Errors: ConfigError naming the entry and the key, or the file's own
// one-line message.

#include <cstdint>
#include <string>

#include <toml++/toml.h>

#include "verify/inputs/workload.hpp"

namespace slaterlab {

/// Sets w.file (relative to the study file `source`, stored absolute),
/// w.spin, w.excitations (the key `cycles`) and the defaults of w.orbitals
/// ("double") and w.delta (kMoleculeStep), and returns the electrons of
/// that spin in the file: the experiment's N.
std::int64_t parse_molecule_experiment(const toml::table& t, WorkloadSpec& w,
                                       const std::string& source, const std::string& where);

/// "molecule-<file stem>-<spin>[-float][-cycles]".
std::string molecule_experiment_name(const WorkloadSpec& w);

/// The molecule's keys of the resolved study.
void insert_molecule_keys(const WorkloadSpec& w, toml::table& entry);

}  // namespace slaterlab
