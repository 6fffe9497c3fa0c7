#pragma once
// `slaterlab regress`: accuracy regression against a baseline results file
// (nightly CI). The rules and their justification are in docs/regression.md
// (and, in full, at the top of regress.cpp). In short, for every experiment x
// strategy of the baseline: deterministic metrics are judged against
// max(factor * max(baseline, M), floor), M the metric's error model; counts
// may not exceed max(factor * baseline, 1); a strategy outside its error model
// in the baseline is reported, not judged; VMC energies must agree within
// z_threshold; a missing or redefined experiment, strategy, VMC run or orbital
// record, and a baseline of another schema version, are failures, named.
// Differences that are not failures are reported as notes.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "verify/report/comparison.hpp"
#include "verify/store/hdf5_store.hpp"
#include "verify/run/runner.hpp"

namespace slaterlab {

struct RegressLimits {
  double factor = 4.0;       // metrics may reach factor x max(model, baseline), counts x baseline
  double floor_eps = 8.0;    // absolute floor, in the strategy's eps (scaled, see above)
  double count_floor = 1.0;  // events a count may reach whatever its baseline
  double z_threshold = 3.0;  // statistical agreement
};

/// Compares every experiment x strategy, VMC run and orbital record of
/// `baseline` with `current` (both read with their checkpoints: the
/// reference's log|det| scales the log-det floor).
RegressReport compare_results(const ResultsFile& current, const ResultsFile& baseline,
                              const RegressLimits& limits = {});

/// The statistical comparison hook: an estimate (mean +- error, one standard
/// error) against the baseline's, passing when z < z_threshold (strict, as
/// statistics.hpp's agreement()). detail names z and both estimates.
Comparison compare_estimates(const std::string& experiment, const std::string& strategy,
                             const std::string& metric, double mean, double error,
                             double baseline_mean, double baseline_error, double z_threshold);

/// A baseline of another schema version cannot be read; this is the failure
/// that names it.
Comparison schema_mismatch(int baseline_version);

/// schema_version of a results file, read without the store (which refuses
/// other versions); nullopt when the attribute is missing. IoError when the
/// file cannot be opened.
std::optional<int> results_schema_version(const std::filesystem::path& path);

/// Writes `results` (read with checkpoints) to `path` through a ResultWriter,
/// so the file is replaced atomically (the store's .partial + rename):
/// experiments with their rows and certified values, VMC runs, orbital records.
void copy_results(const ResultsFile& results, const std::filesystem::path& path);

struct RegressArgs {
  std::string experiment;         // TOML study
  std::string baseline;           // baseline results file
  std::vector<std::string> sets;  // --set overrides
  std::string output;             // keep the new results here; empty: a temporary file
  std::string junit;              // JUnit XML report, if not empty
  std::string summary;            // Markdown summary, if not empty
  bool update_baseline = false;   // write the new results as the baseline
  bool quiet = false;             // no progress, table, notes or verdict line
  RegressLimits limits;
};

/// The whole `slaterlab regress` command; returns the exit code: 0 every
/// comparison held (or the baseline was updated), 1 a regression or a failed
/// check (each line "REGRESSION: where: detail" or "CHECK FAILED: ..." on
/// err), 130 interrupted. Bad input (study, missing or incomplete baseline,
/// unwritable outputs) throws ConfigError / IoError / std::invalid_argument
/// before any work, and nothing is written. `metadata` describes this run
/// (its config_toml is filled in here).
int regress_command(const RegressArgs& args, RunMetadata metadata, const RunOptions& options,
                    std::ostream& out, std::ostream& err);

}  // namespace slaterlab
