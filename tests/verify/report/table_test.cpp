// Accuracy tables: one row per experiment x strategy, values formatted from
// the summaries, in Markdown, CSV (RFC 4180) and LaTeX (booktabs).

#include "verify/report/table.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace slaterlab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kColumns = 12;

StrategySummary summary(double scale) {
  StrategySummary s;
  s.worst_log_det_error = 3.14e-12 * scale;
  s.final_log_det_error = 1.26e-13 * scale;
  s.max_ratio_error = 7.7e-11 * scale;
  s.max_ratio_error_eps = 7.7e-11 * scale / 0x1p-52;
  s.max_inverse_residual = 5.5e-10 * scale;
  s.final_inverse_divergence = 2.2e-9 * scale;
  s.flips = static_cast<std::int64_t>(scale);
  s.breakdowns = 2 * static_cast<std::int64_t>(scale);
  s.elapsed_s = 0.0123 * scale;
  return s;
}

StrategyResult strategy(const std::string& label, std::optional<StrategySummary> s) {
  StrategyResult result;
  result.info.label = label;
  result.summary = std::move(s);
  return result;
}

/// Two experiments x two strategies: one with NaN metrics (a QR strategy has
/// no inverse), one failed, one incomplete.
ResultsFile sample_results() {
  ResultsFile results;
  ExperimentResult a;
  a.info.name = "gauss_n64";
  a.info.n = 64;
  auto qr = summary(2.0);
  qr.max_inverse_residual = kNaN;
  qr.final_inverse_divergence = kNaN;
  a.strategies = {strategy("sm_double", summary(1.0)), strategy("qr_givens", qr)};
  ExperimentResult b;
  b.info.name = "adversarial, \"near\" singular";
  b.info.n = 128;
  auto failed = summary(3.0);
  failed.failed = true;
  failed.failure = "singular";
  b.strategies = {strategy("delayed_k8", failed), strategy("sm_float", std::nullopt)};
  results.experiments = {a, b};
  return results;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

/// Minimal RFC 4180 reader: records of fields, CRLF line ends, quoted fields
/// may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field)), field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      record.push_back(std::move(field)), field.clear();
      records.push_back(std::move(record)), record.clear();
      ++i;
    } else {
      field += c;
    }
  }
  EXPECT_TRUE(field.empty() && record.empty()) << "last record not terminated by CRLF";
  return records;
}

// ---- number formatting ---------------------------------------------------------

TEST(CompactScientific, TwoSignificantDigitsWithoutExponentPadding) {
  EXPECT_EQ(compact_scientific(3.1e-12), "3.1e-12");
  EXPECT_EQ(compact_scientific(2500.0), "2.5e3");
  EXPECT_EQ(compact_scientific(1.0), "1.0e0");
  EXPECT_EQ(compact_scientific(-0.00042), "-4.2e-4");
  EXPECT_EQ(compact_scientific(0.0), "0");
  EXPECT_EQ(compact_scientific(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(compact_scientific(kNaN), "");
}

RC_GTEST_PROP(CompactScientific, ParsesBackWithinHalfAUnitOfTheSecondDigit, ()) {
  const double mantissa = *rc::gen::inRange(-9999, 10000) / 1000.0;
  const int exponent = *rc::gen::inRange(-300, 300);
  const double value = mantissa * std::pow(10.0, exponent);
  RC_PRE(value != 0.0 && std::isfinite(value));
  const std::string text = compact_scientific(value);
  RC_ASSERT(text.find("e+") == std::string::npos);
  RC_ASSERT(text.find("e0") == std::string::npos || text.ends_with("e0"));
  const double back = std::strtod(text.c_str(), nullptr);
  RC_ASSERT(std::abs(back - value) <= 0.05 * std::abs(value) * (1 + 1e-12));
}

// ---- formats -------------------------------------------------------------------

TEST(TableFormat, ParsesKnownNamesAndRejectsOthers) {
  EXPECT_EQ(parse_table_format("md"), TableFormat::markdown);
  EXPECT_EQ(parse_table_format("csv"), TableFormat::csv);
  EXPECT_EQ(parse_table_format("latex"), TableFormat::latex);
  for (auto format : {TableFormat::markdown, TableFormat::csv, TableFormat::latex})
    EXPECT_EQ(parse_table_format(to_string(format)), format);
  try {
    parse_table_format("xlsx");
    FAIL() << "unknown format accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_TRUE(contains(error.what(), "'xlsx'")) << error.what();
    EXPECT_TRUE(contains(error.what(), "md, csv, latex")) << error.what();
  }
}

TEST(Table, MarkdownHasAlignedRowPerExperimentAndStrategy) {
  const auto results = sample_results();
  const auto table = lines(format_table(results, TableFormat::markdown));
  ASSERT_EQ(table.size(), 2u + 4u);  // header, separator, 2 x 2 rows
  auto width = [](const std::string& s) {
    std::size_t n = 0;
    for (char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (const auto& line : table) {
    EXPECT_EQ(line.front(), '|');
    EXPECT_EQ(width(line), width(table[0])) << line;  // pipes line up
  }
  const auto& sm = table[2];
  EXPECT_TRUE(contains(sm, "gauss_n64"));
  EXPECT_TRUE(contains(sm, "sm_double"));
  EXPECT_TRUE(contains(sm, " 64 "));
  const auto s = summary(1.0);
  for (double value : {s.worst_log_det_error, s.final_log_det_error, s.max_ratio_error,
                       s.max_ratio_error_eps, s.max_inverse_residual, s.final_inverse_divergence,
                       s.elapsed_s})
    EXPECT_TRUE(contains(sm, " " + compact_scientific(value) + " ")) << value << " in " << sm;
  EXPECT_TRUE(contains(table[3], "—"));  // NaN metrics of the QR strategy
  EXPECT_FALSE(contains(sm, "—"));
  EXPECT_TRUE(contains(table[4], "delayed_k8 (failed)"));
  EXPECT_TRUE(contains(table[5], "sm_float"));
  EXPECT_TRUE(contains(table[5], "(incomplete)"));
}

TEST(Table, CsvParsesBackToOneRecordPerRowWithAllFields) {
  const auto results = sample_results();
  const auto records = parse_csv(format_table(results, TableFormat::csv));
  ASSERT_EQ(records.size(), 1u + 4u);
  for (const auto& record : records) EXPECT_EQ(record.size(), kColumns);
  EXPECT_EQ(records[0][0], "experiment");
  EXPECT_EQ(records[0][11], "time (s)");

  std::size_t r = 1;
  for (const auto& experiment : results.experiments)
    for (const auto& strategy : experiment.strategies) {
      const auto& record = records[r++];
      EXPECT_EQ(record[0], experiment.info.name);  // quoting survives commas and quotes
      EXPECT_TRUE(record[1].starts_with(strategy.info.label));
      EXPECT_EQ(record[2], std::to_string(experiment.info.n));
      if (!strategy.summary) {
        EXPECT_EQ(record[3], "(incomplete)");
        continue;
      }
      const auto& s = *strategy.summary;
      const double expected[] = {s.worst_log_det_error, s.final_log_det_error, s.max_ratio_error,
                                 s.max_ratio_error_eps, s.max_inverse_residual,
                                 s.final_inverse_divergence};
      for (std::size_t c = 0; c < std::size(expected); ++c)
        EXPECT_EQ(record[3 + c], compact_scientific(expected[c]));  // NaN -> empty
      EXPECT_EQ(record[9], std::to_string(s.flips));
      EXPECT_EQ(record[10], std::to_string(s.breakdowns));
      EXPECT_EQ(record[11], compact_scientific(s.elapsed_s));
    }
  EXPECT_EQ(records[2][7], "");  // the QR strategy's inverse residual is NaN
}

TEST(Table, LatexIsBooktabsWithEscapedText) {
  const auto results = sample_results();
  const auto text = format_table(results, TableFormat::latex);
  EXPECT_TRUE(contains(text, "\\begin{tabular}{ll" + std::string(kColumns - 2, 'r') + "}"));
  EXPECT_TRUE(contains(text, "\\toprule"));
  EXPECT_TRUE(contains(text, "\\midrule"));
  EXPECT_TRUE(contains(text, "\\bottomrule"));
  EXPECT_TRUE(contains(text, "\\end{tabular}"));
  EXPECT_TRUE(contains(text, "gauss\\_n64 & sm\\_double & 64 & " +
                                 compact_scientific(summary(1.0).worst_log_det_error)));
  EXPECT_FALSE(contains(text, "gauss_n64"));  // no unescaped underscore
  std::size_t rows = 0;
  for (const auto& line : lines(text)) {
    if (!line.ends_with("\\\\")) continue;
    ++rows;
    std::size_t ampersands = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      ampersands += line[i] == '&' && (i == 0 || line[i - 1] != '\\');
    EXPECT_EQ(ampersands, kColumns - 1) << line;
  }
  EXPECT_EQ(rows, 1u + 4u);
  EXPECT_TRUE(contains(text, "& —"));
}

TEST(Table, EmptyResultsGiveHeaderOnly) {
  const ResultsFile empty;
  EXPECT_EQ(lines(format_table(empty, TableFormat::markdown)).size(), 2u);
  EXPECT_EQ(parse_csv(format_table(empty, TableFormat::csv)).size(), 1u);
}

// End to end: a file written by the store gives one row per pair.
TEST(Table, RowsFromAWrittenFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("slaterlab-table-" + std::to_string(::getpid()) + ".h5");
  {
    auto writer = ResultWriter::create(path, RunMetadata{"v", "c", "t", "h", "cmd", "toml"});
    for (const std::string name : {"e1", "e2"}) {
      ExperimentInfo info;
      info.name = name;
      info.n = 8;
      const auto e = writer.begin_experiment(info);
      for (double scale : {1.0, 4.0}) {
        StrategyInfo s;
        s.label = "s" + std::to_string(static_cast<int>(scale));
        writer.finish_strategy(writer.begin_strategy(e, s), summary(scale));
      }
    }
    writer.commit();
  }
  const auto results = read_results(path, ReadOptions{.checkpoints = false});
  std::filesystem::remove(path);
  const auto records = parse_csv(format_table(results, TableFormat::csv));
  ASSERT_EQ(records.size(), 1u + 4u);
  EXPECT_EQ(records[4][0], "e2");
  EXPECT_EQ(records[4][1], "s4");
  EXPECT_EQ(records[4][3], compact_scientific(summary(4.0).worst_log_det_error));
}

}  // namespace
}  // namespace slaterlab
