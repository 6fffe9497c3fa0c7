// Tests of the study configuration: list expansion, overrides, validation
// messages (a user must learn from one line what is wrong and where).
#include "verify/inputs/config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <set>
#include <string>

namespace slaterlab {
namespace {

const std::string kMinimal = R"(
[[experiment]]
workload = "gaussian"
n = 8

[[strategy]]
name = "sm"
)";

std::string error_of(const std::string& toml, const std::vector<std::string>& sets = {}) {
  try {
    parse_study(toml, "test.toml", sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Config, MinimalStudyGetsDocumentedDefaults) {
  const StudyConfig s = parse_study(kMinimal, "test.toml");
  ASSERT_EQ(s.experiments.size(), 1u);
  ASSERT_EQ(s.strategies.size(), 1u);
  EXPECT_EQ(s.experiments[0].name, "gaussian-n8");
  EXPECT_EQ(s.experiments[0].moves, 16);           // 2 sweeps
  EXPECT_EQ(s.experiments[0].checkpoint_every, 8);  // once per sweep
  EXPECT_EQ(s.strategies[0].label, "sm-double");
  EXPECT_EQ(s.reference.digits, 50);
}

TEST(Config, ListsExpandToTheCartesianProduct) {
  const StudyConfig s = parse_study(R"(
[[experiment]]
workload = ["gaussian", "small-step"]
n = [4, 8, 16]
[[strategy]]
name = "sm"
precision = ["float", "double", "mixed"]
)", "test.toml");
  EXPECT_EQ(s.experiments.size(), 6u);
  EXPECT_EQ(s.strategies.size(), 3u);
  EXPECT_EQ(s.strategies[2].label, "sm-mixed");
}

TEST(Config, SeedsAreDerivedPerExperimentAndStableUnderReordering) {
  const StudyConfig a = parse_study(R"(
[[experiment]]
n = [4, 8]
[[strategy]]
name = "sm"
)", "a");
  const StudyConfig b = parse_study(R"(
[[experiment]]
n = [8, 4]
[[strategy]]
name = "sm"
)", "b");
  EXPECT_NE(a.experiments[0].workload.seed, a.experiments[1].workload.seed);
  EXPECT_EQ(a.experiments[0].workload.seed, b.experiments[1].workload.seed);
}

TEST(Config, RepeatsDifferOnlyInNameAndSeed) {
  const StudyConfig s = parse_study(R"(
[[experiment]]
n = [4, 8]
repeats = 3
[[strategy]]
name = "sm"
)", "test.toml");
  ASSERT_EQ(s.experiments.size(), 6u);
  EXPECT_EQ(s.experiments[0].name, "gaussian-n4-r1");
  EXPECT_EQ(s.experiments[2].name, "gaussian-n4-r3");
  EXPECT_EQ(s.experiments[3].name, "gaussian-n8-r1");
  std::set<std::uint64_t> seeds;
  for (const auto& e : s.experiments) seeds.insert(e.workload.seed);
  EXPECT_EQ(seeds.size(), 6u);
  // A repeat's seed is derived from its name alone: repeat 2 of 3 is repeat
  // 2 of 5, and the resolved form (explicit names and seeds) reproduces it.
  const StudyConfig more = parse_study(R"(
[[experiment]]
n = 4
repeats = 5
[[strategy]]
name = "sm"
)", "test.toml");
  EXPECT_EQ(more.experiments[1].workload.seed, s.experiments[1].workload.seed);
  const StudyConfig again = parse_study(s.resolved_toml, "resolved.toml");
  ASSERT_EQ(again.experiments.size(), 6u);
  EXPECT_EQ(again.experiments[4].name, s.experiments[4].name);
  EXPECT_EQ(again.experiments[4].workload.seed, s.experiments[4].workload.seed);
}

TEST(Config, RepeatsAreCheckedBeforeAnyExpansion) {
  EXPECT_NE(error_of("[[experiment]]\nn = 4\nrepeats = 0\n[[strategy]]\nname = \"sm\"\n")
                .find("'repeats' must be an integer in [1, 1000]"),
            std::string::npos);
  EXPECT_NE(error_of("[[experiment]]\nn = 4\nrepeats = 2\nseed = 7\n[[strategy]]\nname = \"sm\"\n")
                .find("omit 'seed'"),
            std::string::npos);
  EXPECT_NE(error_of("[[experiment]]\nn = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, "
                     "18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, "
                     "37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, "
                     "56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, "
                     "75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, "
                     "94, 95, 96, 97, 98, 99, 100, 101]\nkappa = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                     "repeats = 1000\n[[strategy]]\nname = \"sm\"\n")
                .find("expand to more than 100000 experiments"),
            std::string::npos);
}

TEST(Config, OverridesApplyToEveryEntry) {
  const StudyConfig s = parse_study(kMinimal + "[[strategy]]\nname = \"recompute\"\n", "t",
                                    {"strategy.precision=float", "experiment.moves=5",
                                     "reference.digits=100"});
  for (const auto& st : s.strategies) EXPECT_EQ(st.options.precision, Precision::single);
  EXPECT_EQ(s.experiments[0].moves, 5);
  EXPECT_EQ(s.reference.digits, 100);
}

TEST(Config, OverridesReachVmcRuns) {
  const StudyConfig s = parse_study("[[vmc]]\nn = [4, 10]\n", "t", {"vmc.sweeps=10"});
  ASSERT_EQ(s.vmc.size(), 2u);
  for (const auto& v : s.vmc) EXPECT_EQ(v.sweeps, 10);
}

TEST(Config, ResolvedTomlParsesBackToTheSameStudy) {
  const StudyConfig s = parse_study(kMinimal, "t", {"experiment.n=[4, 6]"});
  const StudyConfig again = parse_study(s.resolved_toml, "resolved");
  ASSERT_EQ(again.experiments.size(), 2u);
  EXPECT_EQ(again.experiments[1].workload.n, 6);
  EXPECT_EQ(again.experiments[1].workload.seed, s.experiments[1].workload.seed);
  EXPECT_EQ(again.resolved_toml, s.resolved_toml);
}

TEST(Config, UnknownKeyIsNamedWithTheClosestValidKey) {
  const std::string e = error_of(kMinimal + "precsion = \"float\"\n");
  EXPECT_NE(e.find("unknown key 'precsion'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'precision'"), std::string::npos) << e;
  EXPECT_NE(e.find("strategy[0]"), std::string::npos) << e;
}

TEST(Config, UnknownStrategyIsNamedWithTheClosestName) {
  const std::string e = error_of(R"(
[[experiment]]
n = 4
[[strategy]]
name = "sn"
)");
  EXPECT_NE(e.find("unknown strategy 'sn'"), std::string::npos) << e;
  EXPECT_NE(e.find("'sm'"), std::string::npos) << e;
}

TEST(Config, MalformedTomlReportsLineAndColumn) {
  const std::string e = error_of("[[experiment]]\nn = = 4\n");
  EXPECT_NE(e.find("test.toml:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("malformed TOML"), std::string::npos) << e;
}

TEST(Config, InvalidValuesAreRejectedWithTheirKey) {
  EXPECT_NE(error_of("[[experiment]]\nn = 0\n[[strategy]]\nname=\"sm\"\n").find("'n' must be an integer in [1, "),
            std::string::npos);
  EXPECT_NE(error_of("[[experiment]]\nn = \"4\"\n[[strategy]]\nname=\"sm\"\n").find("'n' must be an integer"),
            std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"strategy.precision=quad"}).find("unknown precision 'quad'"),
            std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"reference.digits=30"}).find("'digits' must be 50 or 100"),
            std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"reference.engine=\"gpu\""}).find("'engine' must be \"auto\""),
            std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"experiment.acceptance=metropolys"}).find("did you mean 'metropolis'"),
            std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"nosuch.key=1"}).find("unknown section 'nosuch'"), std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"justakey"}).find("expected key=value"), std::string::npos);
}

TEST(Config, DuplicateLabelsAreRejected) {
  const std::string e = error_of(kMinimal + "[[strategy]]\nname = \"sm\"\n");
  EXPECT_NE(e.find("two strategies are labelled 'sm-double'"), std::string::npos) << e;
}

TEST(Config, MissingFileIsAConfigError) {
  try {
    load_study("/nonexistent/study.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/study.toml"), std::string::npos);
  }
}

TEST(Config, DefaultStudyIsValidAndCoversTheRequiredRange) {
  const StudyConfig s = parse_study(default_study_toml(), "default");
  Eigen::Index smallest = 1 << 30, largest = 0;
  bool gaussian = false, randsvd_1e8 = false;
  for (const auto& e : s.experiments) {
    smallest = std::min(smallest, e.workload.n);
    largest = std::max(largest, e.workload.n);
    gaussian |= e.workload.kind == "gaussian";
    randsvd_1e8 |= e.workload.kind == "randsvd" && e.workload.kappa == 1e8;
  }
  EXPECT_LE(smallest, 32);
  EXPECT_GE(largest, 256);
  EXPECT_TRUE(gaussian);
  EXPECT_TRUE(randsvd_1e8);
  // The other two tables of the main job: float against double B-spline
  // orbitals (with the analytic orbitals they approximate), and qs against
  // pbp sampling at the same N and step.
  std::set<std::string> orbitals;
  std::set<std::pair<Eigen::Index, double>> pbp, qs;
  for (const auto& v : s.vmc) {
    orbitals.insert(v.orbitals);
    if (v.orbitals == "analytic") (v.scheme == "qs" ? qs : pbp).insert({v.n, v.step});
  }
  EXPECT_EQ(orbitals, (std::set<std::string>{"analytic", "bspline-double", "bspline-float"}));
  EXPECT_FALSE(qs.empty());
  for (const auto& run : qs) EXPECT_TRUE(pbp.count(run)) << "qs run N = " << run.first << " has no pbp twin";
}

}  // namespace
}  // namespace slaterlab

namespace slaterlab {
namespace {

TEST(ConfigBounds, NestingCountsStructureNotText) {
  // Brackets, dots and '#' inside strings and comments are not structure.
  const std::string quoted = R"(
[study]
name = "[[[[a.b.c.d]]]] # not a comment"   # a comment [[[[ with . dots
description = """
[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[
a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z
\""" still in the string [[[["""
)" + kMinimal;
  EXPECT_EQ(error_of(quoted), "");
  // 64 levels are read (and refused for their unknown key); 65 are not.
  std::string key = "a";
  for (int level = 2; level <= 64; ++level) key += ".a";
  const std::string at_bound = error_of(kMinimal + "[study]\n" + key.substr(2) + " = 1\n");
  EXPECT_EQ(at_bound.find("nested deeper"), std::string::npos) << at_bound;
  EXPECT_NE(at_bound.find("unknown key 'a'"), std::string::npos) << at_bound;
  const std::string beyond = error_of(kMinimal + "[study]\n" + key + " = 1\n");
  EXPECT_NE(beyond.find("test.toml:9: nested deeper than 64 levels"), std::string::npos) << beyond;
  // Arrays and inline tables in a value, and in a --set value.
  const std::string arrays = error_of(kMinimal, {"experiment.n=" + std::string(70, '[') +
                                                 "8" + std::string(70, ']')});
  EXPECT_NE(arrays.find("--set value:1: nested deeper"), std::string::npos) << arrays;
  std::string inline_tables = "x = ";
  for (int level = 0; level < 70; ++level) inline_tables += "{a = ";
  inline_tables.append("1").append(70, '}').append("\n");
  const std::string tables = error_of(kMinimal + "[study]\n" + inline_tables);
  EXPECT_NE(tables.find("nested deeper"), std::string::npos) << tables;
}

TEST(ConfigBounds, IntegersUpToTheirTypeAndTheMoveBound) {
  const std::string vmc = "[[vmc]]\nn = 2\nequilibration = 0\nsweeps = 1\n";
  EXPECT_EQ(parse_study(vmc + "walkers = 2147483647\n", "t").vmc[0].walkers, 2147483647);
  EXPECT_NE(error_of(vmc + "walkers = 2147483648\n")
                .find("'walkers' must be an integer in [1, 2147483647], got 2147483648"),
            std::string::npos);
  // moves = sweeps x n up to 2^53 exactly.
  const std::string n8 = "[[experiment]]\nn = 8\n[[strategy]]\nname = \"sm\"\n";
  EXPECT_EQ(parse_study(n8, "t", {"experiment.sweeps=1125899906842624"}).experiments[0].moves,
            std::int64_t(1) << 53);
  EXPECT_NE(error_of(n8, {"experiment.sweeps=1125899906842625"}).find("is more than 2^53"),
            std::string::npos);
  EXPECT_NE(error_of(n8, {"experiment.moves=-1"}).find("'moves' must be an integer in [0, "),
            std::string::npos);
  // A seed is any 64-bit pattern: the resolved form writes those above 2^63
  // as negative integers, and they read back as the same seed.
  const StudyConfig s = parse_study(n8, "t", {"experiment.seed=-1"});
  EXPECT_EQ(s.experiments[0].workload.seed, ~std::uint64_t(0));
  EXPECT_EQ(parse_study(s.resolved_toml, "resolved").experiments[0].workload.seed,
            ~std::uint64_t(0));
}

TEST(ConfigBounds, ListsExpandToABoundedNumberOfEntries) {
  // 400 x 400 combinations would be 160,000 experiments, built before any check.
  std::string sizes = "[1";
  for (int n = 2; n <= 400; ++n) sizes.append(",").append(std::to_string(n));
  sizes.append("]");
  const std::string e = error_of(kMinimal, {"experiment.n=" + sizes, "experiment.delta=" + sizes});
  EXPECT_NE(e.find("experiment[0]: the lists expand to more than 100000 entries"),
            std::string::npos)
      << e;
  EXPECT_EQ(parse_study(kMinimal, "t", {"experiment.n=" + sizes}).experiments.size(), 400u);
  // An empty list would drop the entry without a word.
  EXPECT_NE(error_of(kMinimal, {"experiment.n=[]"}).find("'n' is an empty list"),
            std::string::npos);
}

TEST(ConfigBounds, NamesTheStoreCannotHoldAreRefused) {
  for (const std::string name : {"", ".", "a/b", "/", "tab\there", "nul\\u0000"}) {
    const std::string e = error_of(kMinimal, {"experiment.name=\"" + name + "\""});
    EXPECT_NE(e.find("experiment[0]: 'name' = "), std::string::npos) << name << ": " << e;
  }
  // Other punctuation, spaces and non-ASCII are valid HDF5 names.
  for (const std::string name : {"..", "a b", "ill-conditioned #1", "κ=1e8", ".hidden"}) {
    EXPECT_EQ(error_of(kMinimal, {"experiment.name=\"" + name + "\""}), "") << name;
  }
}

}  // namespace
}  // namespace slaterlab

namespace slaterlab {
namespace {

// The electron gas's keys: defaults, the cell, the spins, and every refusal
// one line naming the entry (an open shell names the nearest closed ones; a
// key of the other system is refused, not ignored).
TEST(ConfigElectronGas, VmcRunsAndWorkloadsTakeTheGasKeys) {
  const StudyConfig s = parse_study(
      "[[vmc]]\nsystem = \"electron-gas\"\nn = 7\nrs = 2.0\npolarised = [false, true]\n"
      "[[experiment]]\nworkload = \"electron-gas\"\nn = 19\nrs = 3.0\nscheme = \"qs\"\n"
      "[[strategy]]\nname = \"sm\"\n",
      "test.toml");
  ASSERT_EQ(s.vmc.size(), 2u);
  EXPECT_EQ(s.vmc[0].spins(), 2);
  EXPECT_EQ(s.vmc[1].spins(), 1);
  // (4/3) pi rs^3 N_total = L^3, N_total = 14 and 7.
  EXPECT_NEAR(std::pow(s.vmc[0].cell_length(), 3), 4.0 / 3.0 * std::numbers::pi * 8.0 * 14, 1e-12 * 500);
  EXPECT_NEAR(std::pow(s.vmc[1].cell_length(), 3), 4.0 / 3.0 * std::numbers::pi * 8.0 * 7, 1e-12 * 250);
  EXPECT_EQ(s.experiments[0].workload.delta, 3.0);  // a gas walk steps by rs unless told
  EXPECT_EQ(s.experiments[0].workload.scheme, "qs");
  EXPECT_EQ(sampler_config(s.vmc[0]).spins, 2);
  ASSERT_TRUE(sampler_config(s.vmc[0]).hamiltonian);
  EXPECT_EQ(sampler_config(s.vmc[0]).hamiltonian->cell_length(), s.vmc[0].cell_length());

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[[vmc]]\nsystem = \"electron-gas\"\nn = 20\n", "the nearest are 19 and 27"},
      {"[[vmc]]\nsystem = \"electron-gas\"\nn = 2000000\n", "beyond the largest supported"},
      {"[[vmc]]\nsystem = \"electron-gas\"\nn = 7\nalpha = 2\n", "'alpha' does not apply"},
      {"[[vmc]]\nn = 4\nrs = 2\n", "'rs' does not apply"},
      {"[[vmc]]\nsystem = \"jellium\"\nn = 7\n", "unknown system 'jellium'"},
      {"[[experiment]]\nworkload = \"electron-gas\"\nn = 20\n[[strategy]]\nname = \"sm\"\n",
       "the nearest are 19 and 27"},
      {"[[experiment]]\nworkload = \"electron-gas\"\nn = 7\nscheme = \"sim\"\n[[strategy]]\nname = \"sm\"\n",
       "unknown scheme 'sim'"},
      {"[[experiment]]\nworkload = \"gaussian\"\nn = 7\nscheme = \"qs\"\n[[strategy]]\nname = \"sm\"\n",
       "'scheme' applies to the walks"},
      {"[[experiment]]\nworkload = \"slater\"\nn = 4\norbitals = \"bspline-float\"\n[[strategy]]\nname = \"sm\"\n",
       "'orbitals' applies to workload = \"electron-gas\" and \"molecule\" only"}};
  for (const auto& [toml, needle] : bad) {
    const std::string e = error_of(toml);
    EXPECT_NE(e.find(needle), std::string::npos) << toml << " -> " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace slaterlab
