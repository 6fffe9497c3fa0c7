#pragma once
// The outcome of slaterlab regress: one Comparison per judged quantity, and
// the report that collects them with its notes. Data, and structural() to
// make the comparisons of presence and comparability; the judging rules
// (regress.hpp) fill it in, the writers (regress_reports.hpp) print it.

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace slaterlab {

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

/// A structure comparison (ComparisonKind::structure) of `experiment` /
/// `strategy` (empty as in Comparison), named `metric`, passed or failed
/// with `detail`; no value, baseline or limit.
Comparison structural(const std::string& experiment, const std::string& strategy,
                      const std::string& metric, bool passed, std::string detail);

}  // namespace slaterlab
