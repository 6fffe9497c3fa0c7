// Tests of `slaterlab regress`: the comparison rules on synthetic results
// (limits, floors, NaN, counts, structure), the JUnit and Markdown reports,
// and end-to-end runs: a deliberately perturbed strategy registered only here
// must be caught, an identical run must pass, the baseline is written only
// with --update-baseline, and the command line reports and exits as
// documented (0 / 1 / 2).
#include "verify/report/regress.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "tests/verify/forwarding_updater.hpp"
#include "tests/verify/scratch_test.hpp"

#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/inputs/config.hpp"
#include "verify/report/regress_reports.hpp"

#include <Eigen/LU>

namespace slaterlab {
namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kEps = std::numeric_limits<double>::epsilon();

// ---- synthetic results ----------------------------------------------------------

StrategyResult strategy(const std::string& label, bool qr = false) {
  StrategyResult s;
  s.info = {label, qr ? "qr-givens" : "sm", "double", kEps, 0, 1e-12, 16, "", {}, {}};
  StrategySummary m;
  m.worst_log_det_error = 3e-14;
  m.final_log_det_error = 1e-14;
  m.max_ratio_error = 2e-13;
  m.max_ratio_error_eps = 2e-13 / kEps;
  m.max_ratio_error_normalised = 0.05;
  m.max_inverse_residual = qr ? kNaN : 1e-13;
  m.max_inverse_divergence = qr ? kNaN : 5e-14;
  m.final_inverse_divergence = qr ? kNaN : 4e-14;
  m.max_qr_residual = qr ? 1e-15 : kNaN;
  m.max_orthogonality_loss = qr ? 2e-15 : kNaN;
  m.flips = 3;
  s.summary = m;
  return s;
}

ResultsFile synthetic() {
  ResultsFile f;
  f.schema_version = kSchemaVersion;
  ExperimentResult e;
  e.info = {"gaussian-n32",
            "gaussian",
            32,
            64,
            32,
            7,
            "metropolis",
            1.0,
            {{"kind", "gaussian"}, {"n", "32"}, {"seed", "7"}, {"electron_order", "sweep"}}};
  // |log|det| up to 100: the log-det floor is 8 eps * 100.
  e.reference = {ReferenceCheckpoint{0, 0, -40.0, 1, 10.0, 0.0, 0.0},
                 ReferenceCheckpoint{32, 20, -100.0, 1, 10.0, 5.0, 0.0}};
  e.strategies = {strategy("sm-double"), strategy("qr-givens-double", true)};
  f.experiments.push_back(e);
  return f;
}

/// Comparisons per strategy without judged events (sm, recompute, qr):
/// 10 metrics (the cycle-ratio error among them), 6 counts (cycle
/// breakdowns, singular restarts and checkpoints among them), "finished".
constexpr std::size_t kPerStrategy = 17;

const Comparison* find(const RegressReport& r, const std::string& strategy,
                       const std::string& metric) {
  for (const auto& c : r.comparisons) {
    if (c.strategy == strategy && c.metric == metric) return &c;
  }
  return nullptr;
}

TEST(RegressCompare, IdenticalResultsPass) {
  const ResultsFile f = synthetic();
  const RegressReport r = compare_results(f, f);
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.comparisons.size(), 2 * kPerStrategy);
  EXPECT_TRUE(r.notes.empty());
}

// Named events are counts where their strategy declares them judged
// (splitting's splits: limit max(factor x baseline, 1)) and are not compared
// otherwise (delayed's flushes); an event a summary lacks counts 0.
TEST(RegressCompare, JudgedEventsAreCountsAndOtherEventsAreNotCompared) {
  ResultsFile base = synthetic();
  StrategyResult split = strategy("splitting-double");
  split.info.name = "splitting";
  split.summary->events = {{"splits", 2}};
  StrategyResult delayed = strategy("delayed-16-double");
  delayed.info.name = "delayed";
  delayed.summary->events = {{"flushes", 4}};
  base.experiments[0].strategies = {split, delayed};
  ResultsFile now = base;
  now.experiments[0].strategies[0].summary->events = {{"splits", 9}};
  now.experiments[0].strategies[1].summary->events = {{"flushes", 400}};
  RegressReport r = compare_results(now, base);
  const Comparison* splits = find(r, "splitting-double", "splits");
  ASSERT_NE(splits, nullptr);
  EXPECT_FALSE(splits->passed);
  EXPECT_EQ(splits->limit, 8);
  EXPECT_EQ(find(r, "delayed-16-double", "flushes"), nullptr);
  EXPECT_EQ(r.failures(), 1u);

  base.experiments[0].strategies[0].summary->events.clear();
  now.experiments[0].strategies[0].summary->events = {{"splits", 1}};
  r = compare_results(now, base);
  splits = find(r, "splitting-double", "splits");
  ASSERT_NE(splits, nullptr);
  EXPECT_TRUE(splits->passed);
  EXPECT_EQ(splits->baseline, 0);
  EXPECT_EQ(splits->limit, 1);
}

// The synthetic cell: sm (an update strategy) carries m = 20 accepted
// updates, N = 32, kappa_1 <= 10 and kappa_rho <= 5 in the reference, so
// its models are (1 + m) N eps kappa.
constexpr double kGrowthNEps = 21 * 32 * kEps;
constexpr double kRatioModel = kGrowthNEps * 5;   // max_ratio_error
constexpr double kLogDetModel = kGrowthNEps * 10;  // log-det errors, divergences

TEST(RegressCompare, MetricMayReachTheFactorTimesItsModelButNotExceedIt) {
  const ResultsFile base = synthetic();  // max_ratio_error 2e-13, inside its model
  ResultsFile now = base;
  StrategySummary& s = *now.experiments[0].strategies[0].summary;
  s.max_ratio_error = 4 * kRatioModel;  // exactly factor x model: allowed
  EXPECT_TRUE(compare_results(now, base).passed());

  s.max_ratio_error = 4.01 * kRatioModel;
  const RegressReport r = compare_results(now, base);
  ASSERT_EQ(r.failures(), 1u);
  const Comparison* c = find(r, "sm-double", "max_ratio_error");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed);
  EXPECT_DOUBLE_EQ(c->limit, 4 * kRatioModel);
  EXPECT_EQ(c->where(), "gaussian-n32 / sm-double");
  EXPECT_EQ(c->detail, "max_ratio_error 2.99e-12 vs baseline 2e-13 (model 7.46e-13, limit 2.98e-12)");

  // A larger --factor lets it through.
  EXPECT_TRUE(compare_results(now, base, {.factor = 5.0}).passed());
}

// Another BLAS kernel commits other roundings: a log-det error (one signed
// sum, which may cancel to almost nothing) or the maximum of a few of them
// moves by a decade or more while both stay ~1e-3 of the model. Judged
// against the model, that is no regression.
TEST(RegressCompare, TenfoldChangeFarInsideTheModelPasses) {
  ResultsFile base = synthetic();
  StrategySummary& b = *base.experiments[0].strategies[0].summary;
  b.worst_log_det_error = b.final_log_det_error = 1e-3 * kLogDetModel;
  b.max_inverse_divergence = b.final_inverse_divergence = 1e-3 * kLogDetModel;
  b.max_ratio_error = 1e-3 * kRatioModel;
  ResultsFile now = base;
  StrategySummary& s = *now.experiments[0].strategies[0].summary;
  s.worst_log_det_error = s.final_log_det_error = 1.2e-2 * kLogDetModel;
  s.max_inverse_divergence = s.final_inverse_divergence = 1.2e-2 * kLogDetModel;
  s.max_ratio_error = 1.2e-2 * kRatioModel;
  EXPECT_TRUE(compare_results(now, base).passed());
}

// The rule for a cell inside its model: whatever the baseline below the
// model, a new value passes up to factor x model and fails above it.
RC_GTEST_PROP(RegressCompare, InsideTheModelOnlyTheModelDecides, ()) {
  const double baseline = kLogDetModel * std::pow(10.0, -*rc::gen::inRange(0, 600) / 100.0);
  const double ratio = std::pow(10.0, *rc::gen::inRange(-300, 300) / 100.0);  // new / 4 model
  ResultsFile base = synthetic();
  base.experiments[0].strategies[0].summary->final_log_det_error = baseline;
  ResultsFile now = base;
  now.experiments[0].strategies[0].summary->final_log_det_error = ratio * 4 * kLogDetModel;
  RC_ASSERT(compare_results(now, base).passed() == (ratio <= 1.0));
}

TEST(RegressCompare, FloorOfAFewEpsScaledByTheMetricsUnit) {
  // LU recompute (no updates carried) on a well-conditioned matrix: kappa_1
  // 1, so the model N eps is below the floor 8 eps * max |log|det|| (100).
  ResultsFile base = synthetic();
  auto& e = base.experiments[0];
  for (auto& r : e.reference) r.condition_1 = 1.0;
  e.strategies[0].info.name = "recompute";
  StrategySummary& b = *e.strategies[0].summary;
  b.worst_log_det_error = b.final_log_det_error = b.max_ratio_error = 0.0;
  b.max_inverse_residual = b.max_inverse_divergence = b.final_inverse_divergence = 0.0;
  ResultsFile now = base;
  StrategySummary& s = *now.experiments[0].strategies[0].summary;
  s.worst_log_det_error = 790 * kEps;
  EXPECT_TRUE(compare_results(now, base).passed());
  s.worst_log_det_error = 810 * kEps;
  EXPECT_FALSE(find(compare_results(now, base), "sm-double", "worst_log_det_error")->passed);
}

TEST(RegressCompare, ACellOutsideItsModelIsReportedNotJudged) {
  // Singular to the strategy's precision (eps kappa_1 >= 1): no digit is
  // promised, and errors, counts and finishing are chaotic there.
  ResultsFile base = synthetic();
  base.experiments[0].reference[1].condition_1 = 1.0 / kEps;
  ResultsFile now = base;
  StrategySummary& s = *now.experiments[0].strategies[0].summary;
  s.max_ratio_error = 1e3;
  s.flips = 100;
  s.failed = true;
  RegressReport r = compare_results(now, base);
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.comparisons.size(), 2 * kPerStrategy);  // still reported
  EXPECT_NE(find(r, "sm-double", "flips")->detail.find("not judged"), std::string::npos);
  ASSERT_EQ(r.notes.size(), 2u);  // both strategies of the cell
  EXPECT_NE(r.notes[0].find("gaussian-n32 / sm-double: outside its error model"),
            std::string::npos) << r.notes[0];

  // A baseline metric beyond its model: the same.
  base = synthetic();
  base.experiments[0].strategies[0].summary->max_ratio_error = 2 * kRatioModel;
  now = base;
  now.experiments[0].strategies[0].summary->max_ratio_error = 1e3;
  r = compare_results(now, base);
  EXPECT_TRUE(r.passed());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("max_ratio_error 1.49e-12 exceeds its model 7.46e-13"),
            std::string::npos) << r.notes[0];
}

TEST(RegressCompare, NotApplicableMustStayNotApplicable) {
  const ResultsFile base = synthetic();
  ResultsFile now = base;
  // QR metrics are NaN for sm in both: a pass.
  EXPECT_TRUE(find(compare_results(now, base), "sm-double", "max_qr_residual")->passed);
  now.experiments[0].strategies[0].summary->max_inverse_residual = kNaN;
  const RegressReport r = compare_results(now, base);
  const Comparison* c = find(r, "sm-double", "max_inverse_residual");
  EXPECT_FALSE(c->passed);
  EXPECT_NE(c->detail.find("applies in only one"), std::string::npos) << c->detail;
}

TEST(RegressCompare, CountsMayGrowByTheFactorAndOneEventFromZero) {
  const ResultsFile base = synthetic();  // flips 3, breakdowns 0
  ResultsFile now = base;
  StrategySummary& s = *now.experiments[0].strategies[0].summary;
  s.flips = 12;
  s.breakdowns = 1;
  EXPECT_TRUE(compare_results(now, base).passed());
  s.flips = 13;
  s.breakdowns = 2;
  const RegressReport r = compare_results(now, base);
  EXPECT_EQ(r.failures(), 2u);
  EXPECT_EQ(find(r, "sm-double", "flips")->detail, "flips 13 vs baseline 3 (limit 12)");
  EXPECT_EQ(find(r, "sm-double", "breakdowns")->detail, "breakdowns 2 vs baseline 0 (limit 1)");
}

TEST(RegressCompare, MissingExperimentOrStrategyIsNamed) {
  const ResultsFile base = synthetic();
  ResultsFile now = base;
  now.experiments[0].strategies.pop_back();
  RegressReport r = compare_results(now, base);
  ASSERT_EQ(r.failures(), 1u);
  const Comparison* c = find(r, "qr-givens-double", "present");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->where() + ": " + c->detail,
            "gaussian-n32 / qr-givens-double: missing from the new run");

  now.experiments.clear();
  r = compare_results(now, base);
  ASSERT_EQ(r.failures(), 1u);
  EXPECT_EQ(r.comparisons[0].where() + ": " + r.comparisons[0].detail,
            "gaussian-n32: missing from the new run");
}

TEST(RegressCompare, DifferentDefinitionIsNotComparable) {
  const ResultsFile base = synthetic();
  ResultsFile now = base;
  now.experiments[0].info.n = 64;
  now.experiments[0].info.seed = 8;
  now.experiments[0].info.parameters.push_back({"delta", "0.1"});
  const RegressReport r = compare_results(now, base);
  ASSERT_EQ(r.comparisons.size(), 1u);  // the strategies are not compared at all
  EXPECT_FALSE(r.comparisons[0].passed);
  EXPECT_EQ(r.comparisons[0].metric, "definition");
  EXPECT_EQ(r.comparisons[0].detail,
            "not comparable with the baseline: n 64 (baseline 32), seed 8 (baseline 7), "
            "param.delta 0.1 (baseline (absent))");
}

TEST(RegressCompare, ChangedOptionsAndNewEntriesAreNotesNotFailures) {
  const ResultsFile base = synthetic();
  ResultsFile now = base;
  now.experiments[0].strategies[0].info.precision = "float";
  now.experiments[0].strategies.push_back(strategy("extra"));
  const RegressReport r = compare_results(now, base);
  EXPECT_TRUE(r.passed());
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0], "gaussian-n32 / sm-double: precision float (baseline double)");
  EXPECT_EQ(r.notes[1], "gaussian-n32 / extra: not in the baseline (not compared)");
}

TEST(RegressCompare, AStrategyThatNoLongerFinishesFails) {
  const ResultsFile base = synthetic();
  ResultsFile now = base;
  now.experiments[0].strategies[0].summary->failed = true;
  now.experiments[0].strategies[0].summary->failure = "singular to float";
  const RegressReport r = compare_results(now, base);
  const Comparison* c = find(r, "sm-double", "finished");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed);
  EXPECT_NE(c->detail.find("singular to float"), std::string::npos);
}

TEST(RegressCompare, EstimatesAgreeBelowTheZThreshold) {
  // z = |1.0 - 1.2| / sqrt(0.1^2 + 0.1^2) = 1.41 < 3; z = 0.5 / 0.1414 = 3.54 > 3.
  const Comparison ok = compare_estimates("e", "s", "energy", 1.0, 0.1, 1.2, 0.1, 3.0);
  EXPECT_TRUE(ok.passed);
  EXPECT_EQ(ok.kind, ComparisonKind::statistical);
  EXPECT_NE(ok.detail.find("z = 1.41"), std::string::npos) << ok.detail;
  const Comparison bad = compare_estimates("e", "s", "energy", 1.0, 0.1, 1.5, 0.1, 3.0);
  EXPECT_FALSE(bad.passed);
  EXPECT_NE(bad.detail.find("z = 3.54"), std::string::npos) << bad.detail;
}

VmcRun vmc_run(const std::string& name, double energy, double error) {
  VmcRun run;
  run.info.name = name;
  run.info.n = 4;
  run.info.alpha = 0.8;
  run.info.omega = 1.0;
  run.info.orbitals = "analytic";
  run.info.scheme = "pbp";
  run.info.strategy = "sm-double";
  run.info.walkers = 2;
  run.info.sweeps = 1000;
  run.summary.exact_energy = 9.225;
  run.summary.energy = energy;
  run.summary.error = error;
  return run;
}

TEST(RegressCompare, VmcEnergyMustAgreeWithinTheZThreshold) {
  ResultsFile base = synthetic();
  base.vmc = {vmc_run("pbp-n4", 9.23, 0.01)};
  ResultsFile now = base;
  RegressReport r = compare_results(now, base);
  EXPECT_TRUE(r.passed());
  EXPECT_EQ(r.comparisons.size(), 2 * kPerStrategy + 3);  // energy, failed walkers, breakdowns
  // sigma = 0.01 sqrt(2): a shift of 0.04 is z = 2.83 < 3, of 0.05 z = 3.54.
  now.vmc[0].summary.energy = 9.27;
  EXPECT_TRUE(compare_results(now, base).passed());
  now.vmc[0].summary.energy = 9.28;
  r = compare_results(now, base);
  ASSERT_EQ(r.failures(), 1u);
  const Comparison* c = find(r, "pbp-n4", "energy");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->where(), "vmc / pbp-n4");
  EXPECT_EQ(c->kind, ComparisonKind::statistical);
  EXPECT_NE(c->detail.find("z = 3.54"), std::string::npos) << c->detail;

  now = base;
  now.vmc[0].summary.failed_walkers = 2;
  EXPECT_FALSE(find(compare_results(now, base), "pbp-n4", "failed_walkers")->passed);
  now = base;
  now.vmc[0].info.alpha = 0.9;
  r = compare_results(now, base);
  ASSERT_EQ(r.failures(), 1u);
  EXPECT_EQ(find(r, "pbp-n4", "definition")->detail,
            "not comparable with the baseline: alpha 0.9 (baseline 0.8)");
  now.vmc.clear();
  r = compare_results(now, base);
  ASSERT_EQ(r.failures(), 1u);
  EXPECT_EQ(find(r, "pbp-n4", "present")->where(), "vmc / pbp-n4");
}

TEST(RegressCompare, OrbitalAccuracyIsComparedLikeTheLockstepMetrics) {
  ResultsFile base = synthetic();
  OrbitalAccuracyRecord o;
  o.label = "bspline-float-n4";
  o.orbitals = "bspline-float";
  o.n = 4;
  o.epsilon = 1.0 / (1 << 23);
  o.value_max_rel = 1e-4;
  o.gradient_max_rel = 0.0;  // floor: 8 float eps
  o.laplacian_max_rel = 2e-3;
  base.orbitals = {o};
  ResultsFile now = base;
  now.orbitals[0].value_max_rel = 4e-4;
  now.orbitals[0].gradient_max_rel = 7.9 * o.epsilon;
  EXPECT_TRUE(compare_results(now, base).passed());
  now.orbitals[0].laplacian_max_rel = 8.1e-3;
  const RegressReport r = compare_results(now, base);
  ASSERT_EQ(r.failures(), 1u);
  EXPECT_EQ(find(r, "bspline-float-n4", "laplacian_max_rel")->where(),
            "orbitals / bspline-float-n4");
}

// ---- a small XML checker: well-formedness and the elements JUnit readers use ----

struct Xml {
  std::string error;  // empty when well formed
  std::map<std::string, int> elements;
  std::vector<std::map<std::string, std::string>> attributes;  // in document order
  std::vector<std::string> names;                              // aligned with attributes
  int count(const std::string& name) const {
    const auto it = elements.find(name);
    return it == elements.end() ? 0 : it->second;
  }
};

std::string decode(const std::string& text, std::string& error) {
  static const std::map<std::string, std::string> entities = {
      {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') error = "raw '<' in text or attribute";
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    const auto end = text.find(';', i);
    if (end == std::string::npos) {
      error = "unterminated entity";
      return out;
    }
    const std::string name = text.substr(i + 1, end - i - 1);
    if (entities.count(name))
      out += entities.at(name);
    else if (name.size() > 1 && name[0] == '#')
      out += char(std::stoi(name.substr(1)));
    else
      error = "unknown entity &" + name + ";";
    i = end;
  }
  return out;
}

Xml parse_xml(const std::string& doc) {
  Xml xml;
  std::vector<std::string> open;
  std::size_t i = 0;
  if (doc.rfind("<?xml", 0) == 0) i = doc.find("?>") + 2;
  int roots = 0;
  while (i < doc.size() && xml.error.empty()) {
    const auto lt = doc.find('<', i);
    decode(doc.substr(i, (lt == std::string::npos ? doc.size() : lt) - i), xml.error);
    if (lt == std::string::npos) break;
    const auto gt = doc.find('>', lt);
    if (gt == std::string::npos) {
      xml.error = "unterminated tag";
      break;
    }
    std::string tag = doc.substr(lt + 1, gt - lt - 1);
    i = gt + 1;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1))
        xml.error = "mismatched </" + tag + ">";
      else
        open.pop_back();
      continue;
    }
    const bool empty = tag.back() == '/';
    if (empty) tag.pop_back();
    std::istringstream in(tag);
    std::string name;
    in >> name;
    if (open.empty() && ++roots > 1) xml.error = "more than one root element";
    std::map<std::string, std::string> attrs;
    std::string rest;
    std::getline(in, rest, '\0');
    std::size_t p = 0;
    while (xml.error.empty()) {
      p = rest.find_first_not_of(" \n", p);
      if (p == std::string::npos) break;
      const auto eq = rest.find("=\"", p);
      const auto close = eq == std::string::npos ? eq : rest.find('"', eq + 2);
      if (close == std::string::npos) {
        xml.error = "bad attribute in <" + name + ">";
        break;
      }
      const std::string key = rest.substr(p, eq - p);
      if (attrs.count(key)) xml.error = "duplicate attribute " + key;
      attrs[key] = decode(rest.substr(eq + 2, close - eq - 2), xml.error);
      p = close + 1;
    }
    ++xml.elements[name];
    xml.names.push_back(name);
    xml.attributes.push_back(attrs);
    if (!empty) open.push_back(name);
  }
  if (xml.error.empty() && !open.empty()) xml.error = "unclosed <" + open.back() + ">";
  return xml;
}

TEST(RegressReports, JunitIsWellFormedAndCountsEveryComparison) {
  const ResultsFile base = synthetic();
  ResultsFile now = base;
  now.experiments[0].strategies[0].summary->max_ratio_error = 1e-9;
  ResultsFile odd = base;  // a label with every character XML escapes
  odd.experiments[0].strategies[1].info.label = now.experiments[0].strategies[1].info.label =
      "q<&\"'>";
  RegressReport r = compare_results(now, odd);
  r.comparisons.insert(r.comparisons.begin(), schema_mismatch(2));
  const Xml xml = parse_xml(format_junit(r, "nightly & co"));
  ASSERT_EQ(xml.error, "");
  EXPECT_EQ(xml.count("testsuites"), 1);
  EXPECT_EQ(xml.count("testsuite"), 2);  // "baseline" and the experiment
  EXPECT_EQ(std::size_t(xml.count("testcase")), r.comparisons.size());
  EXPECT_EQ(std::size_t(xml.count("failure")), r.failures());
  EXPECT_EQ(xml.attributes[0].at("name"), "nightly & co");
  EXPECT_EQ(xml.attributes[0].at("tests"), std::to_string(r.comparisons.size()));
  EXPECT_EQ(xml.attributes[0].at("failures"), std::to_string(r.failures()));
  bool ratio_failure = false, escaped_label = false;
  for (std::size_t i = 0; i < xml.names.size(); ++i) {
    if (xml.names[i] == "failure" && xml.attributes[i].at("message") ==
                                         "max_ratio_error 1e-09 vs baseline 2e-13 (model 7.46e-13, "
                                         "limit 2.98e-12)") {
      ratio_failure = xml.names[i - 1] == "testcase" &&
                      xml.attributes[i - 1].at("classname") == "gaussian-n32.sm-double" &&
                      xml.attributes[i - 1].at("name") == "max_ratio_error";
    }
    if (xml.names[i] == "testcase" && xml.attributes[i].at("classname") == "gaussian-n32.q<&\"'>") {
      escaped_label = true;
    }
  }
  EXPECT_TRUE(ratio_failure);
  EXPECT_TRUE(escaped_label);
}

TEST(RegressReports, MarkdownListsEveryComparisonWithItsStatus) {
  const ResultsFile base = synthetic();
  ResultsFile now = base;
  now.experiments[0].strategies[0].summary->flips = 100;
  const RegressReport r = compare_results(now, base);
  const std::string md = format_regress_summary(r, "nightly", {"baseline: b.h5"});
  EXPECT_NE(md.find("**FAIL**: 1 of 34 comparisons failed."), std::string::npos) << md;
  EXPECT_NE(md.find("- baseline: b.h5"), std::string::npos);
  EXPECT_NE(md.find("| gaussian-n32 | sm-double | flips | 100 | 3 | 12 | **FAIL** |"),
            std::string::npos)
      << md;
  // A failure table, then all comparisons: each row of the latter once.
  std::size_t rows = 0;
  for (std::size_t p = md.find("## All comparisons");
       (p = md.find("\n| gaussian-n32", p)) != std::string::npos; ++p) {
    ++rows;
  }
  EXPECT_EQ(rows, r.comparisons.size());
  EXPECT_NE(format_regress_summary(compare_results(base, base), "n", {})
                .find("**PASS**: all 34 comparisons held."),
            std::string::npos);
}

// ---- end to end -----------------------------------------------------------------

/// Sherman-Morrison fed a column scaled by (1 + 1e-9): every ratio is off by
/// exactly that factor and the inverse belongs to a slightly wrong matrix,
/// a regression of about 1e6 eps in double that the comparison must catch.
class PerturbedUpdate final : public testing::ForwardingUpdater {
 public:
  static constexpr double kPerturbation = 1e-9;
  explicit PerturbedUpdate(const UpdaterOptions& options)
      : ForwardingUpdater(make_updater("sm", options)) {}
  std::string label() const override { return "sm-perturbed-" + ForwardingUpdater::label(); }
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& column) override {
    return inner().ratio(k, column * (1.0 + kPerturbation));
  }
};

/// Sherman-Morrison with the wrong sign in its rank-1 (Woodbury) correction,
///   Ainv' = Ainv + (Ainv a_k' - e_k)(e_k^T Ainv) / rho,
/// an algorithmic slip: the inverse, and every later ratio, is O(1) wrong.
class WrongSignWoodbury final : public DeterminantUpdater {
 public:
  Eigen::Index size() const override { return ainv_.rows(); }
  std::string label() const override { return "sm-wrong-sign-double"; }
  Precision precision() const override { return Precision::double_; }
  void reset(const Eigen::MatrixXd& a) override {
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(a);
    ainv_ = lu.inverse();
    const double det = lu.determinant();
    log_det_ = {std::log(std::abs(det)), det < 0 ? -1 : 1};
  }
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& column) override {
    k_ = k;
    x_ = ainv_ * column;  // its k-th entry is rho
    return {x_(k), false};
  }
  void accept() override {
    const double rho = x_(k_);
    x_(k_) -= 1.0;
    const Eigen::RowVectorXd row = ainv_.row(k_);
    ainv_ += x_ * row / rho;  // the slip: '+' where Sherman-Morrison has '-'
    log_det_.log_abs += std::log(std::abs(rho));
    if (rho < 0) log_det_.sign = -log_det_.sign;
  }
  void reject() override {}
  void flush() override {}
  LogDet log_det() const override { return log_det_; }
  MaintainedState maintained() const override { return {ainv_, std::nullopt}; }
  UpdaterCounters counters() const override { return {}; }

 private:
  Eigen::MatrixXd ainv_;
  Eigen::VectorXd x_;
  Eigen::Index k_ = 0;
  LogDet log_det_;
};

/// Splitting whose update cycles report a ratio 1e-9 too large (relative):
/// about 1e6 eps in double, far outside the cycle error model of these
/// well-conditioned cycles, and nothing else changed.
class PerturbedCycle final : public testing::ForwardingUpdater {
 public:
  static constexpr double kPerturbation = 1e-9;
  explicit PerturbedCycle(const UpdaterOptions& options)
      : ForwardingUpdater(make_updater("splitting", options)) {}
  CycleRatio apply_cycle(const std::vector<ColumnUpdate>& updates) override {
    CycleRatio r = inner().apply_cycle(updates);
    r.value *= 1.0 + kPerturbation;
    return r;
  }
};

const bool kRegistered = [] {
  StrategyTraits completes;
  completes.cycles = StrategyTraits::Cycles::whole;
  completes.events = strategy_traits("splitting").events;  // it splits as splitting does
  register_strategy("splitting-cycle-perturbed", {Precision::double_},
                    [](const UpdaterOptions& o) { return std::make_unique<PerturbedCycle>(o); },
                    completes);
  register_strategy("sm-perturbed", {Precision::single, Precision::double_, Precision::mixed},
                    [](const UpdaterOptions& o) { return std::make_unique<PerturbedUpdate>(o); });
  register_strategy("sm-wrong-sign", {Precision::double_},
                    [](const UpdaterOptions&) { return std::make_unique<WrongSignWoodbury>(); });
  return true;
}();

/// A study small enough for a fraction of a second: the "subject" strategy
/// is `subject`, the "control" one is plain LU recompute.
std::string study(const std::string& subject, bool with_control = true) {
  std::string s = R"(
[study]
name = "tiny"
seed = 11
[reference]
certify = false
[[experiment]]
workload = ["gaussian", "small-step"]
n = 12
moves = 36
checkpoint_every = 12
[[strategy]]
name = ")" + subject +
                  R"("
label = "subject"
precision = "double"
)";
  if (with_control) s += "[[strategy]]\nname = \"recompute\"\nlabel = \"control\"\n";
  return s;
}

/// A study of update cycles through exactly singular intermediate matrices
/// (half of them shift cycles), as small: `subject` against LU recompute.
std::string cycle_study(const std::string& subject) {
  return R"(
[study]
name = "tiny-cycles"
seed = 12
[reference]
certify = false
[checks]
sign_agreement = false
[[experiment]]
workload = "excitation-cycles"
n = 12
rank = 3
shift = 0.5
moves = 48
checkpoint_every = 12
[[strategy]]
name = ")" + subject + R"("
label = "subject"
precision = "double"
[[strategy]]
name = "recompute"
label = "control"
)";
}

/// A name as JUnit classnames carry it (dots become underscores).
std::string classname(std::string name) {
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

class RegressRun : public slaterlab::testing::ScratchTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kRegistered);
    ScratchTest::SetUp();
  }

  /// regress_command as main() runs it: bad input (an exception) is exit 2.
  int regress(RegressArgs args, std::string* err_text = nullptr) {
    std::ostringstream out, err;
    int code = 2;
    try {
      code = regress_command(
          args, RunMetadata{"test", "test", "2026-11-21T00:00:00Z", "host", "regress", ""}, {}, out,
          err);
    } catch (const std::invalid_argument& e) {
      err << "slaterlab: error: " << e.what() << "\n";
    } catch (const IoError& e) {
      err << "slaterlab: error: " << e.what() << "\n";
    }
    if (err_text) *err_text = err.str();
    return code;
  }

  RegressArgs args(const std::string& experiment) const {
    RegressArgs a;
    a.experiment = experiment;
    a.baseline = path("baseline.h5");
    return a;
  }

  void make_baseline(const std::string& subject = "sm") {
    RegressArgs a = args(write("base.toml", study(subject)));
    a.update_baseline = true;
    std::string err;
    ASSERT_EQ(regress(a, &err), 0) << err;
    ASSERT_NE(err.find("created baseline"), std::string::npos) << err;
    ASSERT_TRUE(fs::exists(a.baseline));
  }

};

TEST_F(RegressRun, IdenticalRunPassesAndLeavesNoTemporaryFile) {
  make_baseline();
  RegressArgs a = args(write("s.toml", study("sm")));
  a.junit = path("report.xml");
  a.summary = path("summary.md");
  const std::string before = slurp(a.baseline);
  std::string err;
  ASSERT_EQ(regress(a, &err), 0) << err;
  EXPECT_EQ(err.find("REGRESSION"), std::string::npos) << err;
  EXPECT_NE(err.find("comparisons against"), std::string::npos) << err;
  EXPECT_EQ(slurp(a.baseline), before);  // never written without --update-baseline

  // 2 experiments x 2 strategies x kPerStrategy comparisons, all passing.
  const Xml xml = parse_xml(slurp(a.junit));
  ASSERT_EQ(xml.error, "");
  EXPECT_EQ(xml.count("testsuite"), 2);
  EXPECT_EQ(xml.count("testcase"), 2 * 2 * int(kPerStrategy));
  EXPECT_EQ(xml.count("failure"), 0);
  EXPECT_NE(slurp(a.summary).find("**PASS**: all 68 comparisons held."), std::string::npos);

  const std::string prefix = "slaterlab-regress-" + std::to_string(::getpid()) + "-";
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path())) {
    EXPECT_NE(entry.path().filename().string().rfind(prefix, 0), 0u) << entry.path();
  }
}

TEST_F(RegressRun, PlantedRegressionIsCaughtAndNamed) {
  make_baseline();
  RegressArgs a = args(write("s.toml", study("sm-perturbed")));
  a.junit = path("report.xml");
  a.output = path("new.h5");
  std::string err;
  ASSERT_EQ(regress(a, &err), 1) << err;
  EXPECT_NE(err.find("REGRESSION: gaussian-n12 / subject: max_ratio_error 1e-09 vs baseline "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("REGRESSION: small-step-n12 / subject: max_inverse_divergence"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("/ control:"), std::string::npos) << "the control must pass:\n" << err;
  EXPECT_TRUE(fs::exists(a.output));  // -o keeps the evidence
  const Xml xml = parse_xml(slurp(a.junit));
  ASSERT_EQ(xml.error, "");
  EXPECT_GE(xml.count("failure"), 2);
}

TEST_F(RegressRun, WrongSignInTheWoodburyCorrectionIsCaughtAndNamed) {
  make_baseline();
  std::string err;
  ASSERT_EQ(regress(args(write("s.toml", study("sm-wrong-sign"))), &err), 1) << err;
  for (const char* experiment : {"gaussian-n12", "small-step-n12"}) {
    EXPECT_NE(err.find(std::string("REGRESSION: ") + experiment + " / subject: max_ratio_error "),
              std::string::npos)
        << err;
  }
  EXPECT_EQ(err.find("/ control:"), std::string::npos) << "the control must pass:\n" << err;
}

// Update cycles: the cycle-ratio error and the cycle counts are compared as
// the other metrics; the same study passes, a perturbed cycle ratio is
// caught and named.
TEST_F(RegressRun, PerturbedCycleRatioIsCaughtAndTheSameStudyPasses) {
  RegressArgs base = args(write("base.toml", cycle_study("splitting")));
  base.update_baseline = true;
  std::string err;
  ASSERT_EQ(regress(base, &err), 0) << err;

  RegressArgs same = args(write("same.toml", cycle_study("splitting")));
  same.junit = path("same.xml");
  ASSERT_EQ(regress(same, &err), 0) << err;
  const std::string xml = slurp(same.junit);
  for (const char* metric : {"max_cycle_ratio_error", "cycle_breakdowns", "singular_restarts",
                             "singular_checkpoints"}) {
    EXPECT_NE(xml.find(std::string("name=\"") + metric + "\""), std::string::npos) << metric;
  }
  const ResultsFile baseline = read_results(base.baseline);
  const StrategySummary& s = *baseline.experiments.at(0).strategies.at(0).summary;
  EXPECT_GT(s.cycles, 0);
  EXPECT_FALSE(std::isnan(s.max_cycle_ratio_error));  // measured, so judged

  ASSERT_EQ(regress(args(write("perturbed.toml", cycle_study("splitting-cycle-perturbed"))), &err),
            1)
      << err;
  EXPECT_NE(err.find("REGRESSION: excitation-cycles-n12 / subject: max_cycle_ratio_error 1e-09"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("/ control:"), std::string::npos) << "the control must pass:\n" << err;
}

// A baseline written before update cycles (no cycle fields: NaN errors, zero
// counts) still passes against a run of an experiment without cycles.
TEST(RegressCompare, BaselineWithoutCycleFieldsPasses) {
  const ResultsFile now = synthetic();
  ResultsFile old = now;
  for (auto& s : old.experiments[0].strategies) {
    s.summary->max_cycle_ratio_error = s.summary->max_cycle_ratio_error_eps = kNaN;
    s.summary->cycle_breakdowns = s.summary->singular_restarts = 0;
    s.summary->singular_checkpoints = s.summary->cycles = 0;
  }
  EXPECT_TRUE(compare_results(now, old).passed());
  // ... and a cycle error that appears where the baseline has none is named.
  ResultsFile cycles = now;
  cycles.experiments[0].strategies[0].summary->max_cycle_ratio_error = 1e-15;
  const RegressReport r = compare_results(cycles, old);
  const Comparison* c = find(r, "sm-double", "max_cycle_ratio_error");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->passed);
  EXPECT_NE(c->detail.find("applies in only one of them"), std::string::npos) << c->detail;
}

TEST_F(RegressRun, MissingStrategyIsAFailureNamingIt) {
  make_baseline();
  std::string err;
  EXPECT_EQ(regress(args(write("s.toml", study("sm", false))), &err), 1);
  EXPECT_NE(err.find("REGRESSION: gaussian-n12 / control: missing from the new run"),
            std::string::npos)
      << err;
}

TEST_F(RegressRun, DifferentExperimentDefinitionIsNotComparable) {
  make_baseline();
  RegressArgs a = args(write("s.toml", study("sm")));
  a.sets = {"experiment.moves=24"};
  std::string err;
  EXPECT_EQ(regress(a, &err), 1);
  EXPECT_NE(err.find("REGRESSION: gaussian-n12: not comparable with the baseline: moves 24 "
                     "(baseline 36)"),
            std::string::npos)
      << err;
}

TEST_F(RegressRun, SchemaVersionMismatchIsAFailure) {
  make_baseline();
  {  // Rewrite the baseline's schema_version as a future slaterlab would.
    const hid_t file = H5Fopen(path("baseline.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hid_t attr = H5Aopen(file, "schema_version", H5P_DEFAULT);
    const std::int32_t two = 2;
    EXPECT_GE(H5Awrite(attr, H5T_NATIVE_INT32, &two), 0);
    H5Aclose(attr);
    H5Fclose(file);
  }
  RegressArgs a = args(write("s.toml", study("sm")));
  a.junit = path("report.xml");
  std::string err;
  EXPECT_EQ(regress(a, &err), 1);
  EXPECT_NE(
      err.find("REGRESSION: baseline: the baseline has schema_version 2, this build writes 1"),
      std::string::npos)
      << err;
  const Xml xml = parse_xml(slurp(a.junit));
  ASSERT_EQ(xml.error, "");
  EXPECT_EQ(xml.count("failure"), 1);

  // --update-baseline replaces it, and the next comparison passes.
  a.update_baseline = true;
  ASSERT_EQ(regress(a, &err), 0) << err;
  EXPECT_NE(err.find("replaced baseline"), std::string::npos) << err;
  a.update_baseline = false;
  EXPECT_EQ(regress(a, &err), 0) << err;
}

TEST_F(RegressRun, UpdateBaselineAcceptsTheNewResults) {
  make_baseline();
  RegressArgs a = args(write("s.toml", study("sm-perturbed")));
  a.update_baseline = true;
  std::string err;
  ASSERT_EQ(regress(a, &err), 0) << err;
  EXPECT_NE(err.find("replaced baseline " + a.baseline + " (written 2026-11-21T00:00:00Z"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("comparisons had failed against it"), std::string::npos) << err;
  const ResultsFile written = read_results(a.baseline);
  ASSERT_TRUE(written.complete());
  EXPECT_EQ(written.experiments.size(), 2u);
  EXPECT_EQ(written.experiments[0].strategies[0].info.name, "sm-perturbed");
  EXPECT_FALSE(fs::exists(a.baseline + ".partial"));

  a.update_baseline = false;
  EXPECT_EQ(regress(a, &err), 0) << err;  // the perturbed run is now the standard
  // The unperturbed update is more accurate: no regression, and a note.
  EXPECT_EQ(regress(args(write("sm.toml", study("sm"))), &err), 0) << err;
  EXPECT_NE(err.find("note: gaussian-n12 / subject: name sm (baseline sm-perturbed)"),
            std::string::npos)
      << err;
}

TEST_F(RegressRun, VmcRunsAreComparedAndKeptInTheBaseline) {
  const std::string toml = write("vmc.toml", study("sm") + R"(
[[vmc]]
n = 4
alpha = 0.8
walkers = 2
sweeps = 200
equilibration = 20
)");
  RegressArgs a = args(toml);
  a.update_baseline = true;
  a.output = path("first.h5");
  std::string err;
  ASSERT_EQ(regress(a, &err), 0) << err;
  const ResultsFile first = read_results(a.output);
  const ResultsFile baseline = read_results(a.baseline);
  ASSERT_EQ(first.vmc.size(), 1u);
  ASSERT_EQ(baseline.vmc.size(), 1u);
  EXPECT_EQ(baseline.vmc[0].info.name, first.vmc[0].info.name);
  EXPECT_EQ(baseline.vmc[0].summary.energy, first.vmc[0].summary.energy);
  EXPECT_EQ(baseline.vmc[0].energy, first.vmc[0].energy);  // the whole series, bit for bit
  EXPECT_EQ(baseline.experiments.size(), first.experiments.size());

  a.update_baseline = false;
  a.output.clear();
  a.junit = path("report.xml");
  ASSERT_EQ(regress(a, &err), 0) << err;
  const Xml xml = parse_xml(slurp(a.junit));
  ASSERT_EQ(xml.error, "");
  bool energy_case = false;
  for (std::size_t i = 0; i < xml.names.size(); ++i) {
    energy_case = energy_case || (xml.names[i] == "testcase" &&
                                  xml.attributes[i].at("classname") ==
                                      "vmc." + classname(first.vmc[0].info.name) &&
                                  xml.attributes[i].at("name") == "energy");
  }
  EXPECT_TRUE(energy_case);
}

TEST_F(RegressRun, BadInputWritesNothing) {
  std::string err;
  RegressArgs a = args(write("s.toml", study("sm")));
  a.junit = path("report.xml");
  EXPECT_EQ(regress(a, &err), 2);  // no baseline yet
  EXPECT_NE(err.find("cannot read baseline " + a.baseline + ": no such file"), std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(a.junit));

  write("baseline.h5", "not a results file");
  EXPECT_EQ(regress(a, &err), 2);
  EXPECT_NE(err.find(a.baseline), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(a.junit));

  a.limits.factor = 0.5;
  EXPECT_EQ(regress(a, &err), 2);
  EXPECT_NE(err.find("--factor"), std::string::npos) << err;

  a.limits.factor = 4;
  a.output = a.baseline;
  EXPECT_EQ(regress(a, &err), 2);
  EXPECT_NE(err.find("is the baseline"), std::string::npos) << err;
  EXPECT_EQ(slurp(a.baseline), "not a results file");
}

// ---- the command line -----------------------------------------------------------

using Cli = slaterlab::testing::CommandResult;
using RegressCli = RegressRun;

TEST_F(RegressCli, HelpExitsZero) {
  const Cli c = run("regress --help");
  EXPECT_EQ(c.exit_code, 0);
  for (const char* option :
       {"--baseline", "--junit", "--summary", "--update-baseline", "--factor", "--set", "-o"}) {
    EXPECT_NE(c.out.find(option), std::string::npos) << option;
  }
}

// The user-level flow: a baseline, then a regression planted with --set.
TEST_F(RegressCli, RegressionPlantedWithSetExitsOneAndIsNamed) {
  const std::string toml = write("nightly-like.toml", R"(
[reference]
certify = false
[[experiment]]
workload = "randsvd"
kappa = 1e4
n = 16
sweeps = 3
[[strategy]]
name = "sm"
label = "sm-double"
precision = "double"
recompute_every = 16
)");
  const std::string baseline = path("nightly.h5");
  Cli c = run("regress " + toml + " --baseline " + baseline + " --update-baseline");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.err.find("created baseline " + baseline), std::string::npos) << c.err;
  EXPECT_NE(c.out.find("sm-double"), std::string::npos) << "the results table on stdout";

  c = run("regress " + toml + " --baseline " + baseline + " --junit " + path("r.xml"));
  EXPECT_EQ(c.exit_code, 0) << c.err;

  c = run("regress " + toml + " --baseline " + baseline +
          " --set strategy.recompute_every=0 --set strategy.precision=float -q --junit " +
          path("r.xml") + " --summary " + path("s.md"));
  EXPECT_EQ(c.exit_code, 1) << c.err;
  EXPECT_NE(c.err.find("REGRESSION: randsvd-n16-kappa10000 / sm-double: max_ratio_error "),
            std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("REGRESSION: randsvd-n16-kappa10000 / sm-double: worst_log_det_error "),
            std::string::npos)
      << c.err;
  EXPECT_EQ(c.out, "") << "--quiet prints no table";
  EXPECT_GE(parse_xml(slurp(path("r.xml"))).count("failure"), 2);
  EXPECT_NE(slurp(path("s.md")).find("**FAIL**"), std::string::npos);
}

TEST_F(RegressCli, MissingBaselineIsBadInput) {
  const Cli c = run("regress " + write("s.toml", study("sm")) + " --baseline " + path("none.h5") +
                    " --junit " + path("r.xml"));
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(c.err.rfind("slaterlab: error: cannot read baseline", 0), 0u) << c.err;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
  EXPECT_FALSE(fs::exists(path("r.xml")));
  EXPECT_FALSE(fs::exists(path("none.h5")));
}

}  // namespace
}  // namespace slaterlab
