#include "verify/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace slaterlab {

namespace {

// clang-format off
constexpr std::array<std::string_view, 12> kHeaders = {
    "experiment", "strategy", "N",
    "worst log-det error", "final log-det error",
    "max ratio error", "max ratio error in eps",
    "inverse residual (max)", "divergence (final)",
    "flips", "breakdowns", "time (s)"};
// clang-format on
constexpr std::size_t kTextColumns = 2;  // experiment, strategy: left-aligned
constexpr std::string_view kMissing = "—";

struct Cell {
  std::string text;
  bool missing = false;  // NaN or no value: rendered per format
};
using Row = std::vector<Cell>;

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
    row.resize(kHeaders.size(), Cell{"", true});
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

std::vector<Row> table_rows(const ResultsFile& results) {
  std::vector<Row> rows;
  for (const auto& experiment : results.experiments)
    for (const auto& strategy : experiment.strategies)
      rows.push_back(table_row(experiment.info, strategy));
  return rows;
}

Row header_row() {
  Row row;
  for (auto header : kHeaders) row.push_back({std::string(header), false});
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

std::string format_markdown(const std::vector<Row>& rows) {
  std::vector<Row> cells{header_row()};
  cells.insert(cells.end(), rows.begin(), rows.end());
  std::array<std::size_t, kHeaders.size()> width{};
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

std::string format_csv(const std::vector<Row>& rows) {
  auto line = [](const Row& row) {
    std::string out;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out += ',';
      out += csv_field(row[c]);
    }
    return out + "\r\n";
  };
  std::string out = line(header_row());
  for (const auto& row : rows) out += line(row);
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

std::string format_latex(const std::vector<Row>& rows) {
  auto line = [](const Row& row) {
    std::string out;
    for (std::size_t c = 0; c < row.size(); ++c)
      out +=
          (c ? " & " : "") + (row[c].missing ? std::string(kMissing) : latex_escape(row[c].text));
    return out + " \\\\\n";
  };
  std::string out = "\\begin{tabular}{" + std::string(kTextColumns, 'l') +
                    std::string(kHeaders.size() - kTextColumns, 'r') + "}\n\\toprule\n";
  out += line(header_row()) + "\\midrule\n";
  for (const auto& row : rows) out += line(row);
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

std::string format_table(const ResultsFile& results, TableFormat format) {
  const auto rows = table_rows(results);
  switch (format) {
    case TableFormat::markdown: return format_markdown(rows);
    case TableFormat::csv: return format_csv(rows);
    case TableFormat::latex: return format_latex(rows);
  }
  throw std::invalid_argument("unknown table format");
}

}  // namespace slaterlab
