#pragma once
// A [[strategy]] entry of a study (and the strategy keys of a [[vmc]] run):
// its factory name, precision and options, and for an external kernel the
// library (relative to the study file) and its options. Internal to
// verify/inputs; the keys are docs/experiment-files.md's.
// Errors: ConfigError naming the entry and the key.

#include <string>

#include <toml++/toml.h>

#include "verify/inputs/study.hpp"

namespace slaterlab {

/// Parses one expanded entry; `source` is the study file (a relative
/// library path is taken relative to its folder; "" for VMC runs, which
/// load no library).
StrategyConfig parse_strategy(const toml::table& t, const std::string& source,
                              const std::string& where);

}  // namespace slaterlab
