#pragma once
// What a lockstep run produces: the records the runner emits and the HDF5
// store writes (schema version 1, documented in docs/results.md).
// Plain standard-layout structs: the store maps them field by field to HDF5
// compound types. Not-applicable floating metrics are NaN (e.g. the inverse
// residual of a QR strategy), never 0.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace slaterlab {

inline constexpr int kSchemaVersion = 1;

/// Root attributes of a results file.
struct RunMetadata {
  std::string tool_version;
  std::string git_commit;
  std::string created_utc;   // ISO 8601, e.g. 2026-11-21T10:00:00Z
  std::string host;
  std::string command_line;
  std::string config_toml;   // the full resolved experiment definition
};

/// The current time in created_utc's form (ISO 8601, seconds, UTC).
std::string utc_timestamp();

/// One experiment: a workload instance every strategy runs on in lockstep.
struct ExperimentInfo {
  std::string name;
  std::string workload;
  std::int64_t n = 0;
  std::int64_t moves = 0;
  std::int64_t checkpoint_every = 0;
  std::uint64_t seed = 0;
  std::string acceptance;   // "metropolis" or "forced"
  double acceptance_rate = 1.0;
  /// Workload parameters as (key, value-as-text), e.g. {"kappa", "1e8"}.
  std::vector<std::pair<std::string, std::string>> parameters;
};

/// Certified (Arb ball) enclosure of log|det A| for one matrix of the run.
struct CertifiedLogDet {
  bool certified = false;     // false: Arb could not certify at this precision
  double log_abs_mid = 0.0;   // midpoint of the ball for log|det|
  double log_abs_radius = 0.0;
  int sign = 0;               // certified sign, 0 if not certified
  std::int64_t precision_bits = 0;
  double mp_log_abs = 0.0;    // the mp reference's value for the same matrix
  bool mp_inside = false;     // mp value lies inside the ball
  std::string message;        // why certification failed, empty otherwise
};

/// A metric with nothing to measure (no update cycle, say).
inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

/// Which lockstep reference an experiment ran on (attributes "reference.*";
/// absent in files written before it existed, read as mp).
struct ReferenceEngineInfo {
  std::string engine = "mp";   // "mp", or "fast" (mp for results it does not trust)
  std::int64_t fallbacks = 0;  // fast: results taken from mp instead
};

/// Reference row per checkpoint (the mp lockstep reference).
struct ReferenceCheckpoint {
  std::int64_t move = 0;          // proposals made so far
  std::int64_t accepted = 0;      // accepted so far
  double log_det = 0.0;           // log|det A| (mp, rounded); -inf: A singular to working precision
  std::int32_t sign = 1;          // 0: A singular to working precision
  double condition_1 = 0.0;       // ||A||_1 ||A^-1||_1 from the mp inverse (+inf when singular)
  double ratio_condition_max = 0.0;  // max kappa_rho of the proposals since the last checkpoint
  double elapsed_s = 0.0;         // cumulative seconds spent in the reference
  std::int64_t cycles = 0;        // update cycles applied so far (added later: optional on read)
};

/// A named event a strategy counts (StrategyTraits::events): a column of its
/// checkpoint table and an attribute of its summary, stored after the fixed
/// ones whatever the strategy.
struct EventColumn {
  std::string name;         // lower case, digits, '_'; none of the fixed columns
  std::string description;  // one line, stored in column_descriptions
};

/// (name, count) of each event a strategy declares (StrategyInfo::events),
/// in its order.
using EventCounts = std::vector<std::pair<std::string, std::int64_t>>;

/// Per strategy, per checkpoint.
struct StrategyCheckpoint {
  std::int64_t move = 0;
  std::int64_t accepted = 0;
  double log_det_error = 0.0;       // |log|det|_s - log|det|_ref| (absolute; = relative error of |det|)
  double log_det_error_eps = 0.0;   // the same in units of the strategy's epsilon
  std::int32_t sign_agrees = 1;     // 1 if sign(det) matches the reference
  double ratio_error_max = 0.0;     // max |rho_s - rho_ref| / |rho_ref| since the last checkpoint
  double ratio_error_max_eps = 0.0;
  double ratio_error_rms = 0.0;
  double ratio_error_normalised_max = 0.0;  // max of ratio error / (N eps kappa_rho)
  std::int64_t flips = 0;           // decision flips since the last checkpoint
  double inverse_residual_max = 0.0;   // max_ij |(A Ainv - I)_ij|
  double inverse_residual_fro = 0.0;   // ||A Ainv - I||_F / sqrt(N)
  double inverse_divergence = 0.0;     // ||Ainv - Ainv_ref||_F / ||Ainv_ref||_F
  double qr_residual = 0.0;            // ||Q R - A P||_F / ||A||_F (QR strategies)
  double orthogonality_loss = 0.0;     // ||Q^T Q - I||_F (QR strategies)
  double condition_estimate = 0.0;     // ||A||_1 ||Ainv_s||_1 from the strategy's own inverse
  std::int64_t breakdowns = 0;         // cumulative
  std::int64_t recomputes = 0;
  double elapsed_s = 0.0;              // cumulative seconds inside the strategy's calls
  // Update cycles (added later: optional on read, so older files keep these defaults).
  double cycle_ratio_error_max = kNotMeasured;  // max relative cycle-ratio error since the last checkpoint
  double cycle_ratio_error_max_eps = kNotMeasured;
  std::int64_t cycle_breakdowns = 0;   // cycles the strategy reported as breakdowns (cumulative)
  std::int64_t singular_restarts = 0;  // resets from the exact matrix after the strategy found it singular
  // The typical proposal's error, which the few with tiny |rho| do not move (added later).
  double ratio_error_median = kNotMeasured;
  EventCounts events;                  // cumulative, stored as columns of their own
};

/// Static description of a strategy within an experiment.
struct StrategyInfo {
  std::string label;       // unique within the run, e.g. "sm-float"
  std::string name;        // factory name (sm, recompute, kernel, ...)
  std::string precision;   // "float" | "double" | "mixed"
  double epsilon = 0.0;
  std::int64_t recompute_every = 0;
  double breakdown = 0.0;
  std::int64_t k = 0;
  std::string variant;
  /// Text attributes of what was run, written only where present: an
  /// external kernel's library, library_sha256, kernel_name, kernel_version.
  std::vector<std::pair<std::string, std::string>> provenance;
  /// The events it counts: their columns in the checkpoint table (read
  /// back from it: every int64 column besides the fixed ones).
  std::vector<EventColumn> events;
};

/// Summary of a strategy over a whole experiment (root of the tables).
struct StrategySummary {
  double worst_log_det_error = 0.0;
  double final_log_det_error = 0.0;
  double max_ratio_error = 0.0;
  double max_ratio_error_eps = 0.0;
  double max_ratio_error_normalised = 0.0;
  double max_inverse_residual = 0.0;     // max over checkpoints of inverse_residual_max
  double final_inverse_divergence = 0.0;
  double max_inverse_divergence = 0.0;
  double max_qr_residual = 0.0;
  double max_orthogonality_loss = 0.0;
  std::int64_t sign_disagreements = 0;   // checkpoints whose sign disagreed
  std::int64_t flips = 0;
  std::int64_t breakdowns = 0;
  std::int64_t recomputes = 0;
  double elapsed_s = 0.0;
  double max_cycle_ratio_error = kNotMeasured;  // over the run's update cycles
  double max_cycle_ratio_error_eps = kNotMeasured;
  std::int64_t cycle_breakdowns = 0;
  std::int64_t singular_restarts = 0;
  std::int64_t cycles = 0;                // update cycles of the experiment
  std::int64_t singular_checkpoints = 0;  // checkpoints where the reference had det 0
  bool failed = false;                   // the strategy could not continue
  std::string failure;                   // why
  EventCounts events;                    // over the run (the last checkpoint's), attributes of their own
};

/// The count of the named event in `events`; 0 where it is absent (a
/// strategy that does not count it, a file from before it was counted).
std::int64_t event_count(const EventCounts& events, std::string_view name);

// ---- VMC runs (docs/vmc.md) ------------------------------------------

/// One VMC run: a sampling scheme with an orbital set and a determinant
/// strategy, several independent walkers.
struct VmcRunInfo {
  std::string name;
  std::string system = "harmonic-trap";  // "harmonic-trap", "electron-gas" or "molecule"
  std::int64_t n = 0;              // electrons (trap), electrons per spin (gas), spin-up (molecule)
  std::int64_t n_down = 0;         // molecule: spin-down electrons; 0 otherwise
  std::int64_t spins = 1;          // determinants sampled: 1, or 2 (unpolarised gas, molecule)
  std::string file;                // molecule: the wavefunction file; empty otherwise
  std::string source;              // molecule: what wrote it, as the file says (e.g. "trexio")
  double rs = 0.0;                 // gas: Wigner-Seitz radius; 0 for the trap
  double cell_length = 0.0;        // gas: side of the periodic cube; 0 for the trap
  std::int32_t interacting = 0;    // gas: 1 with the Ewald energy; 0 for the trap
  double alpha = 0.0;              // trial-orbital frequency
  double omega = 0.0;              // trap frequency
  std::string orbitals;            // "analytic", "bspline-double", "bspline-float"; "double", "float"
  std::int64_t grid = 0;           // B-spline points per dimension (0 for analytic)
  std::string scheme;              // "pbp", "qs", "qs-batched"
  std::string strategy;            // determinant strategy label, e.g. "sm-double"
  double step = 0.0;               // initial (tuned) or fixed trial step
  double target_acceptance = 0.0;  // step tuning target; 0 = fixed step
  std::int64_t walkers = 0;
  std::int64_t equilibration_sweeps = 0;
  std::int64_t sweeps = 0;         // measured sweeps per walker
  std::uint64_t seed = 0;
  std::string reference_run;       // run whose energy is the reference (independent streams); "" none
};

/// A VMC run's result over all walkers (blocked statistics).
struct VmcRunSummary {
  double exact_energy = 0.0;       // E(alpha) (trap) or E_HF (gas), analytic
  double exact_kinetic = 0.0;      // its kinetic part, analytic
  double kinetic = 0.0;            // mean kinetic part of the local energy
  double kinetic_error = 0.0;      // its standard error
  double potential = 0.0;          // mean potential part (E_L - K)
  double potential_error = 0.0;    // its standard error
  double energy = 0.0;             // mean local energy over walkers
  double error = 0.0;              // its standard error (blocked per walker, combined)
  double variance = 0.0;           // variance of the local energy
  double tau = 0.0;                // integrated autocorrelation time (sweeps; 1/2 = uncorrelated)
  double effective_samples = 0.0;
  std::int64_t samples = 0;        // local-energy samples over all walkers
  double walker_scatter_p = 0.0;   // p-value of the walker means' chi^2 (consistency of walkers)
  double acceptance = 0.0;
  double final_step = 0.0;         // mean frozen step over walkers
  double z_exact = 0.0;            // |E - E_exact| / error
  double detectable_bias_exact = 0.0;      // 3 error: the smallest bias the run could detect
  double z_reference = 0.0;        // against reference_run (NaN without one)
  double detectable_bias_reference = 0.0;  // 3 sqrt(err^2 + err_ref^2)
  std::int64_t walkers_diverged = 0;       // walkers whose path left the lockstep reference
  double divergence_sweep_median = 0.0;    // median first divergent sweep (NaN if none diverged or no reference)
  std::int64_t divergence_sweep_min = -1;  // earliest divergent sweep, -1 if none
  double max_energy_difference = 0.0;      // max |E_L - E_L,ref| while in lockstep
  std::int64_t breakdowns = 0;     // determinant breakdowns over walkers
  std::int64_t failed_walkers = 0; // walkers whose strategy gave up
  double elapsed_s = 0.0;
};

/// Per walker of a VMC run.
struct VmcWalkerRow {
  std::int64_t walker = 0;
  std::int64_t stream = 0;
  double energy = 0.0;
  double error = 0.0;
  double tau = 0.0;
  double acceptance = 0.0;
  double step = 0.0;
  std::int64_t divergence_sweep = -1;   // first sweep whose decisions differ from the reference; -1 never
  std::int64_t divergence_move = -1;
  double expected_flips = 0.0;          // sum of flip probabilities while in lockstep
  double max_ratio_difference = 0.0;    // max relative ratio difference while in lockstep
  double max_energy_difference = 0.0;
  std::int64_t breakdowns = 0;
  std::int64_t recomputes = 0;
  std::int32_t failed = 0;
};

/// One level of the blocking analysis of a run (walkers combined level by level).
struct BlockingRow {
  std::int64_t level = 0;
  std::int64_t block_size = 0;     // sweeps per block
  std::int64_t blocks = 0;         // blocks per walker
  double error = 0.0;              // standard error of the mean at this level (walkers combined)
  double error_uncertainty = 0.0;
  std::int32_t chosen = 0;         // 1 at the level the automatic rule chose
};

/// Accuracy of an approximate orbital set against the analytic orbitals.
struct OrbitalAccuracyRecord {
  std::string label;               // e.g. "bspline-float-n20-alpha0.8-grid48"
  std::string orbitals;            // "bspline-double" | "bspline-float"
  std::int64_t n = 0;
  double alpha = 0.0;
  std::int64_t grid = 0;
  std::int64_t samples = 0;
  double epsilon = 0.0;
  double value_max_abs = 0.0, value_rms_abs = 0.0, value_max_rel = 0.0, value_max_eps = 0.0;
  double gradient_max_abs = 0.0, gradient_rms_abs = 0.0, gradient_max_rel = 0.0, gradient_max_eps = 0.0;
  double laplacian_max_abs = 0.0, laplacian_rms_abs = 0.0, laplacian_max_rel = 0.0, laplacian_max_eps = 0.0;
};

}  // namespace slaterlab
