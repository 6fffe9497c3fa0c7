#pragma once
// `slaterlab regress`: accuracy regression against a baseline results file
// (nightly CI). The rules and their justification are in docs/regression.md;
// in short, for every experiment x strategy of the baseline:
//
// - Deterministic metrics (errors, residuals, divergences) are judged
//   against their error model M, in the metric's unit:
//     limit = max(factor * max(baseline, M), floor),
//   factor 4 by default. M = (1 + m) N eps kappa, m the accepted updates the
//   strategy carries since a refactorisation (0 for LU recompute), eps the
//   baseline strategy's machine epsilon, kappa the largest kappa_1 of the
//   reference (log-det errors, divergences), kappa_1^2 (the residual A X - I),
//   kappa_rho (the ratio error) or 1 (QR residual, orthogonality); the
//   normalised ratio error is already in units of N eps kappa_rho: M = 1 + m.
//   An update cycle's ratio det(A_after) / det(A_before) is a quotient of two
//   determinants, each with the log-det model: M = 2 (1 + m) N eps kappa_1.
//   The kappas are the largest finite ones: a checkpoint or move onto a
//   matrix singular to the reference's precision measures nothing.
//   Another BLAS kernel realises other roundings: a log-det error is one
//   signed sum that may cancel, so its value on two machines can differ by
//   any factor while both stay far inside M; judged against M it is portable.
//   floor = floor_eps (8) eps, scaled to the metric's unit: times max(1,
//   max |log|det|_ref|) for log-det errors, floor_eps / N for the normalised
//   ratio error. A metric that does not apply (NaN) in the baseline must not
//   apply in the new run either, and vice versa. Baselines written before
//   update cycles have NaN cycle errors and zero cycle counts, which an
//   experiment without cycles reproduces.
// - Counts (sign disagreements, decision flips, breakdowns, splits, cycle
//   breakdowns, singular restarts, checkpoints with det 0) may not
//   exceed max(factor * baseline, 1): one event near a threshold may go
//   either way on another BLAS. A strategy that finished in the baseline must
//   finish.
// - A strategy outside its error model in the baseline (a matrix singular to
//   its precision, eps kappa_1 >= 1, or a metric above M) has lost the digits
//   the model accounts for: its errors, and the decisions, events and
//   failures they cause, are chaotic functions of every rounding. Its
//   comparisons are reported, not judged, with a note.
// - VMC runs (statistical): the energy must agree with the baseline's,
//   z = |a - b| / sqrt(sa^2 + sb^2) < z_threshold (compare_estimates); failed
//   walkers and breakdowns are counts as above. Orbital-accuracy records:
//   the max relative value, gradient and Laplacian errors are deterministic
//   metrics as above (eps of the orbital set's precision).
// - An experiment, strategy, VMC run or orbital record of the baseline
//   missing from the new run, one whose definition differs (for experiments:
//   workload, N, moves, checkpoint cadence, seed, acceptance, workload
//   parameters; for VMC runs: N, alpha, omega, orbitals, grid, scheme,
//   strategy, step, walkers, sweeps, seed: not comparable), and a baseline
//   of another schema version are failures, named. VMC runs are reported as
//   "vmc / <run>", orbital records as "orbitals / <label>".
// Differences that are not failures (a strategy's options changed under the
// same label, an experiment or strategy that is new) are reported as notes.

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "verify/store/hdf5_store.hpp"
#include "verify/run/runner.hpp"

namespace slaterlab {

struct RegressLimits {
  double factor = 4.0;       // metrics may reach factor x max(model, baseline), counts x baseline
  double floor_eps = 8.0;    // absolute floor, in the strategy's eps (scaled, see above)
  double count_floor = 1.0;  // events a count may reach whatever its baseline
  double z_threshold = 3.0;  // statistical agreement
};

enum class ComparisonKind {
  metric,       // deterministic floating metric against its limit
  count,        // event count against its limit
  statistical,  // estimate with error bar: z-test
  structure,    // presence, comparability, schema version, finishing
  check,        // a [checks] failure of the new run itself
};

/// One comparison: a JUnit test case and a row of the Markdown summary.
struct Comparison {
  std::string experiment;  // empty: about the files themselves
  std::string strategy;    // empty: about the whole experiment
  std::string metric;      // summary key, or "present", "definition", "schema_version", ...
  ComparisonKind kind = ComparisonKind::metric;
  double value = std::numeric_limits<double>::quiet_NaN();
  double baseline = std::numeric_limits<double>::quiet_NaN();
  double limit = std::numeric_limits<double>::quiet_NaN();  // or the z threshold
  bool passed = true;
  /// What was compared, e.g. "worst_log_det_error 3.2e-05 vs baseline
  /// 1.1e-06 (limit 4.4e-06)" or "missing from the new run".
  std::string detail;

  /// "experiment / strategy", "experiment", or "baseline" for file-level ones.
  std::string where() const;
};

struct RegressReport {
  std::vector<Comparison> comparisons;
  std::vector<std::string> notes;  // "experiment / strategy: what differs"
  std::size_t failures() const;
  bool passed() const { return failures() == 0; }
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

/// JUnit XML (the Ant/Jenkins form GitLab, GitHub actions and Jenkins read):
/// <testsuites> with one <testsuite> per experiment (file-level comparisons
/// in a suite named "baseline"), one <testcase> per comparison, named after
/// the metric, classname "<experiment>.<strategy>" (dots inside the names
/// become '_', so that dashboards splitting at dots show experiment and
/// strategy), and a <failure message="..."> carrying the figures.
std::string format_junit(const RegressReport& report, const std::string& name);

/// A Markdown summary: verdict, provenance lines, the failures, then every
/// comparison with its status, then the notes.
std::string format_regress_summary(const RegressReport& report, const std::string& title,
                                   const std::vector<std::string>& provenance);

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
