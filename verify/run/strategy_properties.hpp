#pragma once
// The generic properties every determinant-update strategy must satisfy,
// checked against a long-double oracle with a derived error model, and the
// RapidCheck generators of the cases they are checked on; shared by the unit
// suite, `slaterlab fuzz` and the kept corpus (data/fuzz-corpus).
//
// - A Case is data only: an initial matrix and proposals with predetermined
//   decisions, so every strategy sees the same numbers.
// - check_case(property, strategy, options, case) returns the first
//   violation as a PropertyFailure carrying the figures, or nothing. A
//   strategy that throws fails (unless the property allows a
//   SingularMatrixError); an invalid configuration is std::invalid_argument.
// - Where the error model makes no claim nothing is asserted; CheckStats
//   says how much was compared.
// - gen_case(limits) picks N, the conditioning, the length, then the values,
//   in an order chosen for shrinking.
// The error model and the generators' order are in strategy_properties.cpp.

#include <rapidcheck.h>

#include <Eigen/Core>

#include <random>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab {

// ---- cases ------------------------------------------------------------------

/// One proposal: replace column `electron` by `column`; `accept` is the
/// predetermined decision.
struct CaseMove {
  Eigen::Index electron = 0;
  Eigen::VectorXd column;
  bool accept = false;
};

/// A property case: the initial matrix A (A(i, j) = phi_i(r_j)) and the move
/// sequence. probe_column / probe_source are used only by
/// NearSingularIsBreakdown: after the sequence it proposes, for column
/// probe_column, a copy (and a near-copy) of column probe_source
/// (probe_source == probe_column when N = 1).
///
/// A case with `cycles` is a sequence of update cycles instead: cycles[i]
/// consecutive moves form cycle i (together all the moves), applied as one
/// unit with apply_cycle() (every move's accept is true). Intermediate
/// matrices of a cycle may be exactly singular.
struct Case {
  Eigen::MatrixXd initial;
  std::vector<CaseMove> moves;
  Eigen::Index probe_column = 0;
  Eigen::Index probe_source = 0;
  std::vector<int> cycles;  // lengths of the update cycles; empty: single proposals

  Eigen::Index n() const { return initial.rows(); }
  std::size_t accepted() const;
  bool has_cycles() const { return !cycles.empty(); }
};

// ---- properties ---------------------------------------------------------------

enum class Property {
  ratios_match_oracle,
  log_det_and_residuals_match_oracle,
  reject_leaves_state_unchanged,
  near_singular_is_breakdown,
  cycle_ratio_matches_oracle,
};

/// Every per-case property, in the order check_all checks them.
const std::vector<Property>& all_properties();
/// "RatiosMatchOracle", "LogDetAndResidualsMatchOracle",
/// "RejectLeavesStateUnchanged", "NearSingularIsBreakdown",
/// "CycleRatioMatchesOracle" (the test names).
std::string_view to_string(Property p);
std::vector<std::string> property_names();
/// The property of that name; std::invalid_argument with the closest name
/// otherwise.
Property parse_property(std::string_view name);

/// Whether the property is checked on the case: CycleRatioMatchesOracle on
/// cases with update cycles, the others on cases of single proposals.
/// check_case() asserts nothing elsewhere (it counts the check as vacuous).
bool applies(Property p, const Case& c);

struct PropertyFailure {
  std::string property;  // to_string(Property)
  std::string message;   // what failed, with the figures
};

/// How much a check actually compared (accumulated: += over calls).
struct CheckStats {
  int ratios = 0;              // ratios computed
  int ratios_checked = 0;      // ... inside the first-order regime (compared)
  int log_dets_checked = 0;    // final log|det| compared
  int residuals_checked = 0;   // inverse residuals compared
  int breakdowns_checked = 0;  // near-singular probes run (precondition held)
  int vacuous = 0;             // checks whose precondition failed (nothing asserted)
  int cycles = 0;              // update cycles applied
  int cycles_checked = 0;      // ... whose ratio was compared (inside the error model)
};

/// The long-double oracle's view of a case: exact ratios, conditioning and
/// log-determinants along the sequence. Computed once per case and shared by
/// every strategy checked on it.
class CaseTrace;
std::shared_ptr<const CaseTrace> trace_case(const Case& c);

std::optional<PropertyFailure> check_case(Property property, const std::string& strategy,
                                          const UpdaterOptions& options, const Case& c,
                                          const CaseTrace& trace, CheckStats* stats = nullptr);
std::optional<PropertyFailure> check_case(Property property, const std::string& strategy,
                                          const UpdaterOptions& options, const Case& c,
                                          CheckStats* stats = nullptr);
/// The first failure over all_properties(), in that order.
std::optional<PropertyFailure> check_all(const std::string& strategy, const UpdaterOptions& options,
                                         const Case& c, const CaseTrace& trace,
                                         CheckStats* stats = nullptr);

// ---- strategy configurations ---------------------------------------------------

/// A strategy name with options, and the label the strategy gives itself.
struct PropertyConfig {
  std::string name;
  UpdaterOptions options;
  std::string label;
};
std::ostream& operator<<(std::ostream& os, const PropertyConfig& c);

/// Every (strategy, precision) the factory knows, and for strategies that
/// distinguish them the window sizes K = 16, 1, 3 and every variant name in
/// use; options a strategy ignores give the same label and are dropped, and
/// every name's default configuration comes first.
std::vector<PropertyConfig> property_configs();

// ---- generators --------------------------------------------------------------------

enum class CaseMode {
  /// A = s U diag(sigma) V^T, new columns from the same distribution or small
  /// steps (the unit suite's generator; kappa up to 10^max_log10_kappa).
  randsvd,
  /// Chains of near-collinear updates: a column is made a copy of another up
  /// to eta (relative), chained over several columns, held while other
  /// columns move, then released (the `adversarial` workload's pattern).
  adversarial,
  /// Update cycles as multi-determinant expansions apply them (the
  /// `excitation-cycles` workload's pattern) on a randsvd matrix: ranks 1 to
  /// max_rank on consecutive columns; a shift cycle inserts a fresh column
  /// and shifts the block by one, so that every intermediate matrix is
  /// exactly singular. Only CycleRatioMatchesOracle applies.
  cycles,
};
std::string_view to_string(CaseMode m);
std::vector<std::string> case_mode_names();
CaseMode parse_case_mode(std::string_view name);

struct CaseLimits {
  CaseMode mode = CaseMode::randsvd;
  int n_min = 1;
  int n_max = 16;
  double max_log10_kappa = 8;     // randsvd: log10 kappa in [0, this]
  double max_log10_inv_eta = 10;  // adversarial: log10(1/eta) in [0, this]
  int length_per_n = 3;           // sequence length in [0, length_per_n * N]
  bool all_accepted = false;
  bool recompute = true;  // pick a recompute cadence in [0, N]
  int max_rank = 4;       // cycles: the most columns one cycle replaces
};

/// The unit suite's limits for a storage precision: N <= 16, length <= 3N,
/// log10 kappa <= 8 in double and the same fraction of the digits otherwise
/// (8 log(eps_s) / log(eps_d) = 3.5 for float storage).
CaseLimits property_limits(Precision p);
/// NearSingularIsBreakdown's limits: small, well-conditioned prefixes (N <= 8,
/// length <= N, kappa <= 10), so that the breakdown threshold sits above the
/// strategy's noise floor and below the regular ratios.
CaseLimits breakdown_limits();
/// The fuzzer's limits: N <= max_n, length <= 4N, log10 kappa <= 12 and
/// log10(1/eta) <= 10 in double, the same fractions of the digits otherwise;
/// cycles: 1 to N cycles of rank <= 4.
CaseLimits fuzz_limits(Precision p, CaseMode mode, int max_n);
/// The unit suite's limits for cycles: N <= 12, 1 to N cycles of rank <= 4,
/// log10 kappa <= 6 in double (the same fraction of the digits otherwise).
CaseLimits cycle_limits(Precision p);
/// The properties checked on cases of a workload (applies()).
bool applies(Property p, CaseMode mode);

/// A generated case with the knobs it was made with.
struct GeneratedCase {
  Case kase;
  int recompute_every = 0;  // the cadence to run it with (UpdaterOptions)
  CaseMode mode = CaseMode::randsvd;
  double log10_kappa = 0;    // randsvd: of the initial matrix
  double log10_inv_eta = 0;  // adversarial
};
/// A summary (N, moves, accepts, conditioning, cadence), not the matrices.
std::ostream& operator<<(std::ostream& os, const GeneratedCase& g);

rc::Gen<GeneratedCase> gen_case(const CaseLimits& limits);
/// The same picks made directly in the calling property (only valid inside
/// one), in the same order: a property that picks its case this way draws
/// exactly what inline picks of its own would draw from a given seed.
GeneratedCase pick_case(const CaseLimits& limits);

/// The randsvd generator's deterministic part: the case made from the shape
/// picked by RapidCheck and a seed for the bulk values (mt19937_64). With
/// `metropolis`, a move the pattern accepts is accepted only if
/// 1/3 <= |rho| <= 3 (rho from a double LU, only for the decision), so the
/// sequence keeps its conditioning as a Metropolis walk that rejects nodal
/// crossings does; `scaled` = false fixes the scale s to 1.
struct RandsvdRecipe {
  int n = 1;
  double log10_kappa = 0;
  std::vector<int> electrons;
  std::vector<int> accepts;  // 0 = reject, else accept
  std::uint64_t seed = 0;
  bool metropolis = false;
  bool scaled = true;
};
Case build_randsvd_case(const RandsvdRecipe& recipe);

/// One update cycle's shape: `rank` consecutive columns from `position`
/// (modulo N); a shift cycle (rank >= 2) inserts a fresh column at
/// `position` and shifts the block by one (every intermediate matrix is then
/// exactly singular), a plain one gives each column a fresh one.
struct CycleShape {
  int rank = 1;
  bool shift = false;
  int position = 0;
};
/// The cycles generator's deterministic part: the randsvd matrix of
/// (n, log10_kappa, seed) (build_randsvd_case) and the cycles of `shapes`,
/// their fresh columns drawn from the distribution of its columns.
Case build_cycles_case(int n, double log10_kappa, std::uint64_t seed,
                       const std::vector<CycleShape>& shapes);

// ---- float against double ------------------------------------------------------

/// (lower-precision, double) pairs of the same strategy and options.
struct PrecisionPair {
  PropertyConfig low;
  PropertyConfig high;
};
std::ostream& operator<<(std::ostream& os, const PrecisionPair& p);
std::vector<PrecisionPair> precision_pairs();

/// The maximum relative ratio errors of both configurations over the
/// well-conditioned proposals (1/3 <= |rho| <= 3) of a case, and their
/// quotient low / max(high, floor), floor = 1e3 eps_ld (the oracle's own
/// error is the floor of what can be measured).
struct PrecisionSample {
  double low = 0;
  double high = 0;
  double ratio = 0;
};
PrecisionSample precision_sample(const PrecisionPair& pair, const Case& c);
/// eps_low / eps_double: what the median sample ratio should be near.
double precision_target(const PrecisionPair& pair);
/// The median of a batch of 9 sample ratios must lie within
/// [target / kPrecisionWindow, target * kPrecisionWindow] (derivation in
/// strategy_properties.cpp).
inline constexpr double kPrecisionWindow = 64;
inline constexpr int kPrecisionBatch = 9;

/// Haar-distributed orthogonal n x n matrix: Q of a Gaussian matrix's QR
/// with the sign fix Q diag(sign(R_ii)) (Mezzadri), drawn from `rng`.
Eigen::MatrixXd haar_orthogonal(Eigen::Index n, std::mt19937_64& rng);

}  // namespace slaterlab
