#pragma once
// The workloads a case is generated from and the limits of its generation:
// sizes, conditioning and lengths per use (unit suite, breakdown probes,
// cycles, fuzzer), scaled with the storage precision's digits so that float
// strategies see the same fraction of their precision as double ones.
//
// - parse_case_mode() throws std::invalid_argument with the closest name for
//   an unknown workload.
// - applies(p, mode): CycleRatioMatchesOracle on the cycles workload alone,
//   the other properties on randsvd and adversarial.

#include <string>
#include <string_view>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/properties/property.hpp"

namespace slaterlab {

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

}  // namespace slaterlab
