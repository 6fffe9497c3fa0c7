#pragma once
// A study: the experiments (workload instances) and the strategies that run
// on each of them in lockstep, the reference settings and the checks. Read
// from TOML (README "Experiment files"), with `--set key=value` overrides,
// validated completely before anything runs.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "strategies/determinant/updater_options.hpp"
#include "verify/workload.hpp"

namespace slaterlab {

/// Bad input in an experiment definition: the message names the file, the
/// key and the problem (and the closest valid key for an unknown one).
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct StrategyConfig {
  std::string label;   // unique, e.g. "sm-float" or "delayed-16-double"
  std::string name;    // factory name
  UpdaterOptions options;
};

struct ExperimentConfig {
  std::string name;
  WorkloadSpec workload;
  std::int64_t moves = 0;
  std::int64_t checkpoint_every = 0;
  std::string acceptance = "metropolis";  // "metropolis" | "forced"
  double acceptance_rate = 1.0;           // used by "forced"
};

struct ReferenceConfig {
  int digits = 50;            // Boost.Multiprecision decimal digits: 50 or 100
  int recompute_every = 0;    // mp refactorisation cadence (accepted moves), 0 = never
  long certified_bits = 128;  // Arb working precision
  bool certify = true;        // certified log-det of the initial and final matrices
};

/// Pass/fail criteria of `slaterlab run` (exit code 1 when one fails).
struct ChecksConfig {
  /// Every checkpoint's sign(det) must agree with the reference.
  bool sign_agreement = true;
  /// Upper limit on the per-move ratio error in units of N eps kappa_rho
  /// (the backward-stable bound; README "Checks"). Unset = no limit.
  std::optional<double> max_ratio_error_normalised;
  /// A strategy that cannot continue (singular to its precision) fails the run.
  bool strategy_must_finish = false;
  /// Precisions the checks apply to (empty = all).
  std::vector<std::string> precisions;
};

struct StudyConfig {
  std::string name = "study";
  std::string description;
  std::uint64_t seed = 1;
  std::vector<ExperimentConfig> experiments;
  std::vector<StrategyConfig> strategies;
  ReferenceConfig reference;
  ChecksConfig checks;
  /// The fully resolved definition (lists expanded, defaults filled) as TOML.
  std::string resolved_toml;
};

/// Parses and validates a study. `source` names the input in messages.
/// `overrides` are "dotted.key=value" strings applied before validation: a
/// key under [[experiment]] or [[strategy]] applies to every entry.
/// Throws ConfigError.
StudyConfig parse_study(const std::string& toml_text, const std::string& source,
                        const std::vector<std::string>& overrides = {});

/// Reads `path` and parses it; a missing or unreadable file is a ConfigError.
StudyConfig load_study(const std::string& path, const std::vector<std::string>& overrides = {});

/// The built-in default study (identical to experiments/default.toml).
const std::string& default_study_toml();

}  // namespace slaterlab
