#include "verify/report/regress_reports.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace slaterlab {

namespace {

std::string xml_escape(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default:
        // Other control characters are not allowed in XML 1.0 at all.
        if (static_cast<unsigned char>(ch) < 0x20)
          out += "\xEF\xBF\xBD";  // U+FFFD
        else
          out += ch;
    }
  }
  return out;
}

std::string classname_part(std::string name) {
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

std::string md_cell(std::string text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|')
      out += "\\|";
    else if (ch == '\n')
      out += ' ';
    else
      out += ch;
  }
  return out.empty() ? "—" : out;
}

std::string md_number(const Comparison& c, double x) {
  if (c.kind == ComparisonKind::structure || c.kind == ComparisonKind::check) return "—";
  if (std::isnan(x)) return "n/a";
  if (c.kind == ComparisonKind::count) return fmt::format("{:g}", x);
  return fmt::format("{:.3g}", x);  // the judging rules' figures
}

const char* kind_name(ComparisonKind kind) {
  switch (kind) {
    case ComparisonKind::metric: return "regression";
    case ComparisonKind::count: return "regression";
    case ComparisonKind::statistical: return "statistical";
    case ComparisonKind::structure: return "regression";
    case ComparisonKind::check: return "check";
  }
  return "regression";
}

}  // namespace

std::string format_junit(const RegressReport& report, const std::string& name) {
  // Suites in order of first appearance.
  std::vector<std::string> suites;
  for (const auto& c : report.comparisons) {
    const std::string suite = c.experiment.empty() ? "baseline" : c.experiment;
    if (std::find(suites.begin(), suites.end(), suite) == suites.end()) suites.push_back(suite);
  }
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                     xml_escape(name), report.comparisons.size(), report.failures());
  for (const auto& suite : suites) {
    std::string cases;
    std::size_t tests = 0, failures = 0;
    for (const auto& c : report.comparisons) {
      if ((c.experiment.empty() ? "baseline" : c.experiment) != suite) continue;
      ++tests;
      std::string classname = classname_part(c.experiment.empty() ? "baseline" : c.experiment);
      if (!c.strategy.empty()) classname.append(".").append(classname_part(c.strategy));
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(classname),
                           xml_escape(c.metric));
      if (c.passed) {
        cases += "/>\n";
        continue;
      }
      ++failures;
      cases += fmt::format(
          ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
          xml_escape(c.detail), kind_name(c.kind), xml_escape(c.where() + ": " + c.detail));
    }
    xml += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
        "skipped=\"0\">\n",
        xml_escape(suite), tests, failures);
    xml += cases;
    xml += "  </testsuite>\n";
  }
  xml += "</testsuites>\n";
  return xml;
}

std::string format_regress_summary(const RegressReport& report, const std::string& title,
                                   const std::vector<std::string>& provenance) {
  std::string md = "# " + title + "\n\n";
  const std::size_t failures = report.failures(), total = report.comparisons.size();
  md += failures == 0 ? fmt::format("**PASS**: all {} comparisons held.\n\n", total)
                      : fmt::format("**FAIL**: {} of {} comparisons failed.\n\n", failures, total);
  for (const auto& line : provenance) md += "- " + line + "\n";
  if (!provenance.empty()) md += "\n";

  const auto table = [&](bool only_failures) {
    std::string t =
        "| experiment | strategy | metric | value | baseline | limit | status | detail |\n"
        "|---|---|---|--:|--:|--:|---|---|\n";
    for (const auto& c : report.comparisons) {
      if (only_failures && c.passed) continue;
      const std::string limit = c.kind == ComparisonKind::statistical
                                    ? fmt::format("z < {:g}", c.limit)
                                    : md_number(c, c.limit);
      t += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", md_cell(c.experiment),
                       md_cell(c.strategy), md_cell(c.metric), md_number(c, c.value),
                       md_number(c, c.baseline), limit, c.passed ? "pass" : "**FAIL**",
                       md_cell(c.detail));
    }
    return t;
  };
  if (failures > 0) md += "## Failures\n\n" + table(true) + "\n";
  md += "## All comparisons\n\n" + table(false);
  if (!report.notes.empty()) {
    md += "\n## Notes\n\n";
    for (const auto& note : report.notes) md += "- " + md_cell(note) + "\n";
  }
  return md;
}

}  // namespace slaterlab
