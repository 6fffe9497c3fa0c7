#pragma once
// A study: the experiments (workload instances) and the strategies that run
// on each of them in lockstep, the reference settings and the checks. Read
// from TOML (docs/experiment-files.md), with `--set key=value` overrides,
// validated completely before anything runs.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "slaterlab/strategies/sampling/vmc.hpp"
#include "verify/inputs/workload.hpp"

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

/// One VMC run (docs/vmc.md): N fermions in a harmonic trap sampled
/// with a scheme, an orbital set and a determinant strategy.
struct VmcRunConfig {
  std::string name;
  Eigen::Index n = 0;
  double alpha = 1.0;                  // trial-orbital frequency
  double omega = 1.0;                  // trap frequency
  std::string orbitals = "analytic";   // analytic | bspline-double | bspline-float
  Eigen::Index grid = 0;               // B-spline points per dimension; 0 = the box rule's default
  std::string scheme = "pbp";          // pbp | qs | qs-batched
  double step = 1.0;                   // fixed step, or where tuning starts
  double target_acceptance = 0.0;      // > 0: tune the step in equilibration, then freeze it
  StrategyConfig strategy;             // the determinant strategy
  int walkers = 4;
  std::int64_t sweeps = 2000;          // measured sweeps per walker
  std::int64_t equilibration = 200;    // discarded sweeps per walker
  std::uint64_t seed = 0;
  /// Shadow each walker with an analytic-orbital, sm-double twin on the same
  /// random streams to find where the decisions part (path divergence).
  bool divergence = true;
};

struct ReferenceConfig {
  int digits = 50;            // Boost.Multiprecision decimal digits: 50 or 100
  int recompute_every = 0;    // mp refactorisation cadence (accepted moves), 0 = never
  long certified_bits = 128;  // Arb working precision
  bool certify = true;        // certified log-det of the initial and final matrices
  /// true: an mp ratio for every move (the mp inverse follows each accepted
  /// move by an mp Sherman-Morrison update, O(N^2) mp work per move).
  /// false: checkpoint-only references for large N (docs/compared.md, References): no mp work
  /// between checkpoints; each checkpoint takes a fresh mp LU of the exact
  /// current matrix (O(N^3) mp). Ratio errors, flips and kappa_rho are then
  /// not measured (NaN), and experiments must use forced acceptance.
  bool per_move = true;
  /// The lockstep reference: "mp", "fast" (FastReference, mp for every result
  /// it does not trust), or "auto": fast from N = 256 on (reference/lockstep_reference.hpp).
  std::string engine = "auto";
};

/// Pass/fail criteria of `slaterlab run` (exit code 1 when one fails).
struct ChecksConfig {
  /// Every checkpoint's sign(det) must agree with the reference.
  bool sign_agreement = true;
  /// Upper limit on the per-move ratio error in units of N eps kappa_rho
  /// (the backward-stable bound; docs/experiment-files.md, [checks]). Unset = no limit.
  std::optional<double> max_ratio_error_normalised;
  /// Every delayed strategy's max normalised ratio error and worst log-det
  /// error stay within its growth guard's factor 16 sqrt(K+1) of sm's at the
  /// same precision in the same experiment (docs/experiment-files.md, [checks]).
  bool delayed_within_guard_of_sm = false;
  /// A strategy that cannot continue (singular to its precision) fails the run.
  bool strategy_must_finish = false;
  /// Precisions the checks apply to (empty = all).
  std::vector<std::string> precisions;
  /// VMC: |E - E_exact| / error must stay below this for every run. Unset = no check.
  std::optional<double> max_z_exact;
};

struct StudyConfig {
  std::string name = "study";
  std::string description;
  std::uint64_t seed = 1;
  std::vector<ExperimentConfig> experiments;
  std::vector<StrategyConfig> strategies;
  std::vector<VmcRunConfig> vmc;
  ReferenceConfig reference;
  ChecksConfig checks;
  /// The fully resolved definition (lists expanded, defaults filled) as TOML.
  std::string resolved_toml;
};

/// The sampler's settings of a VMC run (scheme, trap, walkers, sweeps, step
/// and its tuner). Its validate() is part of the checks before any work.
VmcConfig sampler_config(const VmcRunConfig& v);

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
