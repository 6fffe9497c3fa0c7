#pragma once
// A study: the experiments (workload instances) and the strategies that run
// on each of them in lockstep, the reference settings and the checks. Read
// from TOML (docs/experiment-files.md), with `--set key=value` overrides,
// validated completely before anything runs.

#include <string>
#include <vector>

#include "verify/inputs/config_error.hpp"
#include "verify/inputs/study.hpp"

namespace slaterlab {

/// Parses and validates a study. `source` names the input in messages.
/// `overrides` are "dotted.key=value" strings applied before validation: a
/// key under [[experiment]] or [[strategy]] applies to every entry.
/// Guarantees, before any value is used: the text (and each override) is at
/// most 16 MiB and nested at most 64 levels (checked before toml++ parses
/// it); every integer lies in the range of the type it is stored in (and
/// its own range; move and sweep counts, and their products, at most 2^53);
/// every number is finite and in its range; every experiment, VMC run and
/// strategy name can name a group of the results file (group_name_problem).
/// Throws ConfigError naming the source, the entry and the key.
StudyConfig parse_study(const std::string& toml_text, const std::string& source,
                        const std::vector<std::string>& overrides = {});

/// Reads `path` and parses it. An empty path, a missing or unreadable file,
/// a directory or anything but a regular file (never opened: a FIFO would
/// block) and a file over 16 MiB are a ConfigError.
StudyConfig load_study(const std::string& path, const std::vector<std::string>& overrides = {});

/// The built-in default study (identical to experiments/default.toml).
const std::string& default_study_toml();

}  // namespace slaterlab
