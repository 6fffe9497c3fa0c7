#pragma once
// Tables from a results file: the determinant accuracy table (one row per
// experiment x strategy, built from the strategy summaries), the VMC energy
// table and the orbital accuracy table (TableKind).
//
// Columns: experiment, strategy, N, worst log-det error, final log-det error,
// max ratio error, max ratio error in eps, inverse residual (max), divergence
// (final), flips, breakdowns, time (s). Experiments with update cycles or
// with matrices singular to the reference's precision add a second table
// (TableKind::cycles, also printed after the determinant table when it has
// rows). Formats: Markdown, CSV (RFC 4180) and LaTeX (booktabs); number
// formatting, NaN and incomplete strategies: table.cpp.

#include <string>
#include <string_view>

#include "verify/report/drift.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab {

enum class TableFormat { markdown, csv, latex };

/// "md", "csv" or "latex"; anything else is std::invalid_argument naming the
/// bad value and the valid ones.
TableFormat parse_table_format(std::string_view text);

/// The name parse_table_format accepts for format.
std::string_view to_string(TableFormat format);

/// Compact scientific notation with two significant digits: 3.1e-12, -2.0e3,
/// 0, inf; NaN gives an empty string (the caller picks its marker).
std::string compact_scientific(double value);

/// Which table: the determinant strategies (one row per experiment x
/// strategy), the update cycles and singular matrices (see above), the VMC runs (of the kind of Uejima & Maezono's Table 9: energy with its error
/// bar in compact form, the exact energy, z against it and against the
/// reference run, the smallest detectable bias, variance, tau, acceptance
/// and where paths diverged), the orbital-set accuracies, the drift over
/// repeats (drift.hpp; it needs the checkpoint tables read), or every table
/// that has rows but the drift.
enum class TableKind { determinant, cycles, drift, vmc, orbitals, all };

/// "determinant", "cycles", "drift", "vmc", "orbitals" or "all"; else
/// std::invalid_argument.
TableKind parse_table_kind(std::string_view text);

/// The table(s) of `results`. With TableKind::all, each non-empty table in
/// turn, separated by an empty line (the determinant header alone when all
/// are empty).
std::string format_table(const ResultsFile& results, TableFormat format,
                         TableKind kind = TableKind::determinant,
                         const DriftTargets& targets = default_drift_targets());

}  // namespace slaterlab
