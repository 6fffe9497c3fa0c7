#include "verify/report/table.hpp"

// Floating values are printed in compact scientific notation with two
// significant digits (3.1e-12, 2.0e0); counts as integers. A NaN (a metric
// that does not apply) prints as "—" in Markdown and LaTeX and as an empty
// field in CSV. A strategy without a summary (still running, or killed)
// prints "(incomplete)" in its first metric column and nothing else; a
// strategy whose summary says it failed has " (failed)" after its label.
//
// Formats: Markdown (pipes padded to align, numbers right-aligned), CSV
// (RFC 4180: CRLF line ends, fields with a comma, quote or line break quoted,
// quotes doubled) and LaTeX (a booktabs tabular, special characters escaped).

#include "verify/report/drift.hpp"
#include "verify/stats/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace slaterlab {

namespace {

constexpr std::string_view kMissing = "—";

struct Cell {
  std::string text;
  bool missing = false;  // NaN or no value: rendered per format
};
using Row = std::vector<Cell>;

/// One table: its headers, how many leading columns are text (left-aligned;
/// the others are numbers, right-aligned), and its rows.
struct TableData {
  std::vector<std::string_view> headers;
  std::size_t text_columns = 0;
  std::vector<Row> rows;
};

// clang-format off
const std::vector<std::string_view> kDeterminantHeaders = {
    "experiment", "strategy", "N",
    "worst log-det error", "final log-det error",
    "max ratio error", "max ratio error in eps",
    "inverse residual (max)", "divergence (final)",
    "flips", "breakdowns", "time (s)"};
const std::vector<std::string_view> kCycleHeaders = {
    "experiment", "strategy", "N", "cycles",
    "max cycle ratio error", "max cycle ratio error in eps",
    "cycle breakdowns", "singular restarts", "checkpoints with det = 0"};
const std::vector<std::string_view> kVmcHeaders = {
    "run", "orbitals", "scheme", "strategy", "N", "step", "acceptance",
    "E", "K", "V", "E exact", "z exact", "z ref", "detectable bias", "variance", "tau",
    "divergence sweep", "diverged"};
const std::vector<std::string_view> kOrbitalHeaders = {
    "orbitals", "N", "grid",
    "value max rel", "value max eps", "gradient max rel", "gradient max eps",
    "laplacian max rel", "laplacian max eps"};
const std::vector<std::string_view> kDriftHeaders = {
    "configuration", "strategy", "N", "repeats", "accepted moves",
    "max ratio error", "worst log-det error",
    "median ratio error drift per move", "log-det error drift per move",
    "target", "recompute every (median ratio)", "recompute every (log-det)"};
// clang-format on

Cell number(double value) {
  if (std::isnan(value)) return {"", true};
  return {compact_scientific(value), false};
}

Cell integer(std::int64_t value) { return {std::to_string(value), false}; }

Row table_row(const ExperimentInfo& experiment, const StrategyResult& strategy) {
  std::string label = strategy.info.label;
  if (strategy.summary && strategy.summary->failed) label += " (failed)";
  Row row{{experiment.name, false}, {std::move(label), false}, integer(experiment.n)};
  if (!strategy.summary) {
    row.push_back({"(incomplete)", false});
    row.resize(kDeterminantHeaders.size(), Cell{"", true});
    return row;
  }
  const StrategySummary& s = *strategy.summary;
  for (double value : {s.worst_log_det_error, s.final_log_det_error, s.max_ratio_error,
                       s.max_ratio_error_eps, s.max_inverse_residual, s.final_inverse_divergence})
    row.push_back(number(value));
  row.push_back(integer(s.flips));
  row.push_back(integer(s.breakdowns));
  row.push_back(number(s.elapsed_s));
  return row;
}

TableData determinant_table(const ResultsFile& results) {
  TableData table{kDeterminantHeaders, 2, {}};
  for (const auto& experiment : results.experiments)
    for (const auto& strategy : experiment.strategies)
      table.rows.push_back(table_row(experiment.info, strategy));
  return table;
}

/// Experiments with update cycles or matrices singular to the reference's
/// precision: how each strategy went through them.
TableData cycle_table(const ResultsFile& results) {
  TableData table{kCycleHeaders, 2, {}};
  for (const auto& experiment : results.experiments) {
    for (const auto& strategy : experiment.strategies) {
      if (!strategy.summary) continue;
      const StrategySummary& s = *strategy.summary;
      if (s.cycles == 0 && s.singular_checkpoints == 0 && s.singular_restarts == 0) continue;
      table.rows.push_back(Row{{experiment.info.name, false}, {strategy.info.label, false},
                               integer(experiment.info.n), integer(s.cycles),
                               number(s.max_cycle_ratio_error), number(s.max_cycle_ratio_error_eps),
                               integer(s.cycle_breakdowns), integer(s.singular_restarts),
                               integer(s.singular_checkpoints)});
    }
  }
  return table;
}

Cell fixed(double value, int decimals) {
  if (std::isnan(value)) return {"", true};
  return {fmt::format("{:.{}f}", value, decimals), false};
}

/// The kind of table of Uejima & Maezono's Table 9: energy with its error bar in compact
/// form, the exact value, and how far apart they are.
TableData vmc_table(const ResultsFile& results) {
  TableData table{kVmcHeaders, 4, {}};
  for (const auto& run : results.vmc) {
    const VmcRunInfo& i = run.info;
    const VmcRunSummary& s = run.summary;
    table.rows.push_back(Row{{i.name, false}, {i.orbitals, false}, {i.scheme, false},
                             {i.strategy, false}, integer(i.n), fixed(s.final_step, 3),
                             fixed(s.acceptance, 3),
                             {format_mean_error(s.energy, s.error), std::isnan(s.energy)},
                             {format_mean_error(s.kinetic, s.kinetic_error), std::isnan(s.kinetic)},
                             {format_mean_error(s.potential, s.potential_error),
                              std::isnan(s.potential)},
                             {fmt::format("{:.10g}", s.exact_energy), false}, fixed(s.z_exact, 2),
                             fixed(s.z_reference, 2), number(s.detectable_bias_exact),
                             number(s.variance), fixed(s.tau, 2),
                             fixed(s.divergence_sweep_median, 0), integer(s.walkers_diverged)});
  }
  return table;
}

TableData orbital_table(const ResultsFile& results) {
  TableData table{kOrbitalHeaders, 1, {}};
  for (const auto& o : results.orbitals) {
    table.rows.push_back(Row{{o.orbitals, false}, integer(o.n), integer(o.grid),
                             number(o.value_max_rel), number(o.value_max_eps),
                             number(o.gradient_max_rel), number(o.gradient_max_eps),
                             number(o.laplacian_max_rel), number(o.laplacian_max_eps)});
  }
  return table;
}

/// "3.1(4)e-9": the mean and its standard error at the mean's decade; the
/// mean alone with one repeat (NaN error).
Cell mean_error_cell(const MeanError& v) {
  if (std::isnan(v.mean)) return {"", true};
  if (std::isnan(v.error) || v.mean == 0.0 || !std::isfinite(v.mean)) return number(v.mean);
  const int decade = int(std::floor(std::log10(std::fabs(v.mean))));
  const double unit = std::pow(10.0, decade);
  return {fmt::format("{}e{}", format_mean_error(v.mean / unit, v.error / unit), decade), false};
}

Cell interval_cell(const RecomputeInterval& interval) {
  using Kind = RecomputeInterval::Kind;
  switch (interval.kind) {
    case Kind::measured: return {fmt::format("{:.0f}", interval.accepted), false};
    case Kind::extrapolated: return {"≈" + compact_scientific(interval.accepted), false};
    case Kind::none: return {"none", false};
    case Kind::no_drift: return {fmt::format("> {:.0f}", interval.accepted), false};
    case Kind::no_target: break;
  }
  return {"", true};
}

TableData drift_table(const ResultsFile& results, const DriftTargets& targets) {
  TableData table{kDriftHeaders, 2, {}};
  for (const DriftRow& r : drift_rows(results, targets)) {
    table.rows.push_back(Row{{r.configuration, false}, {r.strategy, false}, integer(r.n),
                             integer(r.repeats), fixed(r.accepted, 0),
                             mean_error_cell(r.max_ratio_error),
                             mean_error_cell(r.worst_log_det_error), mean_error_cell(r.ratio_drift),
                             mean_error_cell(r.log_det_drift), number(r.target),
                             interval_cell(r.ratio_interval), interval_cell(r.log_det_interval)});
  }
  return table;
}

Row header_row(const TableData& table) {
  Row row;
  for (auto header : table.headers) row.push_back({std::string(header), false});
  return row;
}

// Display width of UTF-8 text: code points, not bytes ("—" is one column).
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  const std::string fill(width - std::min(width, display_width(text)), ' ');
  return right ? fill + text : text + fill;
}

std::string markdown_text(const Cell& cell) {
  if (cell.missing) return std::string(kMissing);
  std::string out;
  for (char c : cell.text) {
    if (c == '|') out += '\\';  // a pipe inside a cell would split it
    out += c;
  }
  return out;
}

std::string format_markdown(const TableData& table) {
  const std::size_t kTextColumns = table.text_columns;
  std::vector<Row> cells{header_row(table)};
  cells.insert(cells.end(), table.rows.begin(), table.rows.end());
  std::vector<std::size_t> width(table.headers.size(), 0);
  for (auto& row : cells)
    for (std::size_t c = 0; c < row.size(); ++c) {
      row[c] = {markdown_text(row[c]), false};
      width[c] = std::max({width[c], display_width(row[c].text), std::size_t{3}});
    }
  auto line = [&](const Row& row) {
    std::string out = "|";
    for (std::size_t c = 0; c < row.size(); ++c) {
      out += ' ';
      out += pad(row[c].text, width[c], c >= kTextColumns);
      out += " |";
    }
    return out + '\n';
  };
  std::string out = line(cells.front());
  out += "|";
  for (std::size_t c = 0; c < width.size(); ++c) {
    const bool right = c >= kTextColumns;  // ":" marks right alignment
    out += ' ';
    out.append(width[c] - (right ? 1 : 0), '-');
    out += right ? ": |" : " |";
  }
  out += '\n';
  for (std::size_t r = 1; r < cells.size(); ++r) out += line(cells[r]);
  return out;
}

std::string csv_field(const Cell& cell) {
  if (cell.missing) return "";
  if (cell.text.find_first_of(",\"\r\n") == std::string::npos) return cell.text;
  std::string out = "\"";
  for (char c : cell.text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string format_csv(const TableData& table) {
  auto line = [](const Row& row) {
    std::string out;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out += ',';
      out += csv_field(row[c]);
    }
    return out + "\r\n";
  };
  std::string out = line(header_row(table));
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string latex_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '_': case '&': case '%': case '$': case '#': case '{': case '}':
        out += '\\';
        out += c;
        break;
      case '\\': out += "\\textbackslash{}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_latex(const TableData& table) {
  auto line = [](const Row& row) {
    std::string out;
    for (std::size_t c = 0; c < row.size(); ++c)
      out +=
          (c ? " & " : "") + (row[c].missing ? std::string(kMissing) : latex_escape(row[c].text));
    return out + " \\\\\n";
  };
  std::string out = "\\begin{tabular}{" + std::string(table.text_columns, 'l') +
                    std::string(table.headers.size() - table.text_columns, 'r') +
                    "}\n\\toprule\n";
  out += line(header_row(table)) + "\\midrule\n";
  for (const auto& row : table.rows) out += line(row);
  return out + "\\bottomrule\n\\end{tabular}\n";
}

}  // namespace

TableFormat parse_table_format(std::string_view text) {
  if (text == "md") return TableFormat::markdown;
  if (text == "csv") return TableFormat::csv;
  if (text == "latex") return TableFormat::latex;
  throw std::invalid_argument(
      fmt::format("unknown table format '{}' (valid: md, csv, latex)", text));
}

std::string_view to_string(TableFormat format) {
  switch (format) {
    case TableFormat::markdown: return "md";
    case TableFormat::csv: return "csv";
    case TableFormat::latex: return "latex";
  }
  return "?";
}

std::string compact_scientific(double value) {
  if (std::isnan(value)) return "";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0.0) return "0";
  // "{:.1e}" gives "3.1e-12" / "2.5e+03"; drop the '+' and exponent zeros.
  const std::string text = fmt::format("{:.1e}", value);
  const auto e = text.find('e');
  const std::string mantissa = text.substr(0, e);
  const int exponent = std::stoi(text.substr(e + 1));
  return fmt::format("{}e{}", mantissa, exponent);
}

namespace {

std::string format(const TableData& table, TableFormat format) {
  switch (format) {
    case TableFormat::markdown: return format_markdown(table);
    case TableFormat::csv: return format_csv(table);
    case TableFormat::latex: return format_latex(table);
  }
  throw std::invalid_argument("unknown table format");
}

}  // namespace

TableKind parse_table_kind(std::string_view text) {
  if (text == "determinant") return TableKind::determinant;
  if (text == "vmc") return TableKind::vmc;
  if (text == "orbitals") return TableKind::orbitals;
  if (text == "cycles") return TableKind::cycles;
  if (text == "drift") return TableKind::drift;
  if (text == "all") return TableKind::all;
  throw std::invalid_argument(fmt::format(
      "unknown table '{}' (valid: determinant, cycles, drift, vmc, orbitals, all)", text));
}

std::string format_table(const ResultsFile& results, TableFormat fmt_, TableKind kind,
                         const DriftTargets& targets) {
  const TableData cycles = cycle_table(results);
  switch (kind) {
    case TableKind::determinant: {
      // The cycle table follows only where there is something to show.
      std::string out = format(determinant_table(results), fmt_);
      if (!cycles.rows.empty()) {
        out += '\n';
        out += format(cycles, fmt_);
      }
      return out;
    }
    case TableKind::cycles: return format(cycles, fmt_);
    case TableKind::drift: return format(drift_table(results, targets), fmt_);
    case TableKind::vmc: return format(vmc_table(results), fmt_);
    case TableKind::orbitals: return format(orbital_table(results), fmt_);
    case TableKind::all: break;
  }
  std::string out;
  for (const TableData& table :
       {determinant_table(results), cycles, vmc_table(results), orbital_table(results)}) {
    if (table.rows.empty()) continue;
    if (!out.empty()) out += '\n';
    out += format(table, fmt_);
  }
  return out.empty() ? format(determinant_table(results), fmt_) : out;
}

}  // namespace slaterlab
