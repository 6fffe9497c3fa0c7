// End-to-end tests of the `slaterlab` command line as a user meets it: each
// bad input gives one clear line naming the problem, exit code 2 and no
// output file; a check failure gives exit code 1; --help works everywhere.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <sys/stat.h>

#include "tests/verify/scratch_test.hpp"
#include "verify/store/hdf5_store.hpp"

namespace {

namespace fs = std::filesystem;
using slaterlab::testing::CommandResult;
using Result = CommandResult;

class Cli : public slaterlab::testing::ScratchTest {
 protected:
  /// Asserts the documented bad-input behaviour and that `needle` is named.
  void expect_bad_input(const Result& r, const std::string& needle, const std::string& output) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("slaterlab: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line expected:\n" << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(output)) << output;
    EXPECT_FALSE(fs::exists(output + ".partial")) << output;
  }

  // A study small enough to run in well under a second.
  static std::string tiny_study(const std::string& extra_experiment = "",
                                const std::string& checks = "") {
    return "[reference]\ncertify = true\n" + checks +
           "\n[[experiment]]\nworkload = \"gaussian\"\nn = 6\nmoves = 12\ncheckpoint_every = 4\n" +
           extra_experiment + "\n[[strategy]]\nname = \"sm\"\nprecision = [\"float\", \"double\"]\n";
  }
};

// -o naming a symbolic link writes through it: the file it names holds the
// results, the link stays a link (also when it names a file not there yet);
// so do regress's baseline and summary.
TEST_F(Cli, OutputThroughASymbolicLinkWritesItsTarget) {
  const std::string study = write("study.toml",
                                   "[[experiment]]\nworkload = \"gaussian\"\nn = 4\nmoves = 8\n"
                                   "[[strategy]]\nname = \"sm\"\n");
  std::filesystem::create_directory(path("target"));
  std::filesystem::create_symlink("target/results.h5", path("link.h5"));
  for (int round = 0; round < 2; ++round) {  // the target absent, then present
    const slaterlab::testing::CommandResult r = run("run " + study + " -q -o " + path("link.h5"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::is_symlink(path("link.h5")));
    EXPECT_TRUE(std::filesystem::is_regular_file(path("target/results.h5")));
    EXPECT_FALSE(std::filesystem::exists(path("link.h5.partial")));
    EXPECT_FALSE(std::filesystem::exists(path("target/results.h5.partial")));
    EXPECT_TRUE(slaterlab::read_results(path("link.h5")).committed);
  }
  // regress's baseline and its text reports are written through links too.
  std::filesystem::create_symlink("target/baseline.h5", path("baseline.h5"));
  std::filesystem::create_symlink("target/summary.md", path("summary.md"));
  const std::string regress = "regress " + study + " -q --baseline " + path("baseline.h5") +
                              " --summary " + path("summary.md");
  ASSERT_EQ(run(regress + " --update-baseline").exit_code, 0);
  const slaterlab::testing::CommandResult r = run(regress);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* link : {"baseline.h5", "summary.md"})
    EXPECT_TRUE(std::filesystem::is_symlink(path(link))) << link;
  EXPECT_TRUE(std::filesystem::is_regular_file(path("target/baseline.h5")));
  EXPECT_TRUE(std::filesystem::is_regular_file(path("target/summary.md")));
}

// An interrupt that arrives as soon as the .partial exists (here: the
// moment a shell sees it) is the run's: exit code 130, and the .partial it
// keeps is a readable HDF5 file. (The handler used to come after the
// .partial: from a terminal such an interrupt killed the run by the default
// action, leaving a .partial that was no HDF5 file; sh's background job,
// which starts with SIGINT ignored, lost it and ran to the end.)
TEST_F(Cli, AnInterruptOnceThePartialExistsLeavesAReadablePartial) {
  const std::string study = write("study.toml",
                                  "[[experiment]]\nworkload = \"gaussian\"\nn = 64\nsweeps = 400\n"
                                  "[[strategy]]\nname = \"sm\"\n");
  const std::string out = path("r.h5");
  const Result r = run_command(
      "sh -c '" + std::string(SLATERLAB_BINARY) + " run " + study + " -q -o " + out +
      " & pid=$!; while [ ! -e " + out + ".partial ]; do :; done; kill -INT $pid; wait $pid; "
      "echo exit=$?'");
  EXPECT_NE(r.out.find("exit=130"), std::string::npos) << r.out << r.err;
  ASSERT_TRUE(fs::exists(out + ".partial"));
  EXPECT_FALSE(slaterlab::read_results(out + ".partial").committed);
}

TEST_F(Cli, HelpAndVersionExitZero) {
  for (const std::string args : {"--help", "run --help", "table --help", "bench --help", "--version"}) {
    const Result r = run(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_FALSE(r.out.empty()) << args;
  }
}

TEST_F(Cli, UnknownSubcommandOrOptionIsBadInput) {
  EXPECT_EQ(run("frobnicate").exit_code, 2);
  EXPECT_EQ(run("run --no-such-option").exit_code, 2);
}

TEST_F(Cli, BenchBadSizeOrTimeIsBadInput) {
  for (const std::string args : {"bench --n=abc", "bench --n=1", "bench --n", "bench --seconds=-1"}) {
    const Result r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("slaterlab: error: bench: --", 0), 0u) << args << "\n" << r.err;
  }
}

TEST_F(Cli, BenchRunsOnlyTheSizesAndCasesAsked) {
  // --n picks the sizes, Google Benchmark's filter the cases: one sm case at
  // N = 16, with its bandwidth bound (the triad probe runs for it).
  const Result r = run("bench --n=16 --seconds=0.01 --benchmark_filter='^updates/sm-double/' "
                       "--benchmark_format=json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"updates/sm-double/N:16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"of_bound\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("N:256"), std::string::npos);     // default sizes replaced
  EXPECT_EQ(r.out.find("\"updates/delayed"), std::string::npos);  // filtered out
}

TEST_F(Cli, BenchProbesTheShermanMorrisonLoopAndComparesEveryUpdateWithIt) {
  // The plain-loop probe runs in both precisions at the asked size, and
  // every update case (sm, splitting, delayed) carries its ratio to it.
  const Result r = run("bench --n=16 --seconds=0.01 "
                       "--benchmark_filter='^(limits/sm-loop-|updates/(sm|splitting|delayed-4)-)' "
                       "--benchmark_format=json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"limits/sm-loop-double/N:16", "limits/sm-loop-float/N:16",
                           "updates/splitting-double/N:16", "updates/delayed-4-float/N:16"}) {
    EXPECT_NE(r.out.find(std::string("\"") + name), std::string::npos) << name << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("\"ns_per_move\""), std::string::npos) << r.out;
  std::size_t cases = 0, ratios = 0;
  for (std::size_t at = r.out.find("\"name\": \"updates/"); at != std::string::npos;
       at = r.out.find("\"name\": \"updates/", at + 1)) {
    ++cases;
  }
  for (std::size_t at = r.out.find("\"vs_probe\""); at != std::string::npos;
       at = r.out.find("\"vs_probe\"", at + 1)) {
    ++ratios;
  }
  EXPECT_GE(cases, 6u) << r.out;  // sm, splitting, delayed-4 incremental and naive, x 2
  EXPECT_EQ(ratios, cases) << r.out;
}

/// The number after "key": in Google Benchmark's JSON output, NaN if absent.
double json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return std::nan("");
  return std::stod(json.substr(at + key.size() + 4));
}

TEST_F(Cli, BenchTimesAWholeStudyAgainstItsStrategiesOwnTime) {
  // The study runs as a process and its results file gives the strategies'
  // own time: that is part of the wall time, so the quotient is above 1,
  // and the reference's time is part of it too.
  const Result r = run("bench --benchmark_filter='^reference/whole-study/N:1024' "
                       "--benchmark_format=json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.out.find("\"reference/whole-study/N:1024"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"error_occurred\": true"), std::string::npos) << r.out;
  const double wall = json_number(r.out, "wall_s");
  const double strategies = json_number(r.out, "strategies_s");
  const double reference = json_number(r.out, "reference_s");
  EXPECT_GT(strategies, 0.0) << r.out;
  EXPECT_GT(reference, 0.0) << r.out;
  EXPECT_GT(wall, strategies + reference) << r.out;
  // The JSON prints counters to about 6 digits.
  EXPECT_NEAR(json_number(r.out, "vs_strategies"), wall / strategies, 1e-5 * wall / strategies) << r.out;
}

TEST_F(Cli, BenchCsvCarriesEveryCaseAndEveryCounter) {
  // The triad case reports bytes, the sm case its bound: cases with
  // different counters, which Google Benchmark's own CSV reporter aborts on.
  // Every case must appear, under one header naming both counters (in the
  // file, after the context lines the library writes there).
  const std::string file = path("bench.csv");
  const Result r = run("bench --n=16 --seconds=0.01 "
                       "--benchmark_filter='^(updates/sm-double/|limits/stream-triad)' "
                       "--benchmark_format=csv --benchmark_out_format=csv --benchmark_out=" + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& csv : {r.out, slurp(file)}) {
    const auto at = csv.find("name,");
    ASSERT_NE(at, std::string::npos) << csv;
    const std::string header = csv.substr(at, csv.find('\n', at) - at);
    EXPECT_NE(header.find("of_bound"), std::string::npos) << header;
    EXPECT_NE(csv.find("\"updates/sm-double/N:16"), std::string::npos) << csv;
    EXPECT_NE(csv.find("\"limits/stream-triad"), std::string::npos) << csv;
  }
  const Result bad = run("bench --benchmark_format=xml");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.err.rfind("slaterlab: error: bench: --benchmark_format", 0), 0u) << bad.err;
}

TEST_F(Cli, TinyStudyRunsPrintsTableAndWritesTheFile) {
  const std::string out = path("r.h5");
  const Result r = run("run " + write("s.toml", tiny_study()) + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_NE(r.out.find("sm-float"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sm-double"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.find("wrote") != std::string::npos) << r.err;

  const Result table = run("table " + out + " --format csv");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("sm-double"), std::string::npos);
}

TEST_F(Cli, DriftTableReadsCheckpointsAndChecksItsTargets) {
  const std::string out = path("r.h5");
  const std::string study =
      "[reference]\ncertify = false\n[[experiment]]\nn = 8\nmoves = 32\ncheckpoint_every = 8\n"
      "repeats = 2\n[[strategy]]\nname = \"sm\"\n";
  ASSERT_EQ(run("run " + write("s.toml", study) + " -q -o " + out).exit_code, 0);
  const Result table = run("table " + out + " -k drift -f csv --target double=1e-20");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  // One configuration of two repeats; a target below double's rounding has
  // no interval (the first checkpoint after a move already exceeds it).
  EXPECT_NE(table.out.find("gaussian-n8,sm-double,8,2,"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(",1.0e-20,none,"), std::string::npos) << table.out;
  for (const char* target : {"double", "quad=1", "double=-1", "double=1x", "double=nan"}) {
    const Result bad = run("table " + out + " -k drift --target " + target);
    EXPECT_EQ(bad.exit_code, 2) << target;
    EXPECT_NE(bad.err.find("--target"), std::string::npos) << bad.err;
  }
}

TEST_F(Cli, QuietRunPrintsNothingOnStderr) {
  const Result r = run("run " + write("s.toml", tiny_study()) + " -q -o " + path("r.h5"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(Cli, FailedCheckExitsOneAndNamesIt) {
  // No float computation has a ratio error below 1e-30 N eps kappa_rho.
  const Result r = run("run " +
                       write("s.toml", tiny_study("", "[checks]\nmax_ratio_error_normalised = "
                                                      "1e-30\nprecisions = [\"float\"]\n")) +
                       " -o " + path("r.h5"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("CHECK FAILED"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sm-float"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(path("r.h5")));  // the evidence is kept
}

TEST_F(Cli, MissingExperimentFile) {
  expect_bad_input(run("run " + path("nope.toml") + " -o " + path("r.h5")), "nope.toml",
                   path("r.h5"));
}

TEST_F(Cli, MalformedToml) {
  expect_bad_input(run("run " + write("s.toml", "[[experiment]\nn = 4\n") + " -o " + path("r.h5")),
                   "malformed TOML", path("r.h5"));
}

TEST_F(Cli, UnknownKeyNamesTheClosestValidKey) {
  const Result r = run("run " + write("s.toml", tiny_study("sweps = 2\n")) + " -o " + path("r.h5"));
  expect_bad_input(r, "unknown key 'sweps'", path("r.h5"));
  EXPECT_NE(r.err.find("did you mean 'sweeps'"), std::string::npos);
}

TEST_F(Cli, UnknownStrategy) {
  expect_bad_input(run("run " + write("s.toml", tiny_study()) + " --set strategy.name=shermanmorrison -o " +
                       path("r.h5")),
                   "unknown strategy 'shermanmorrison'", path("r.h5"));
}

TEST_F(Cli, SizeBelowOne) {
  expect_bad_input(
      run("run " + write("s.toml", tiny_study()) + " --set experiment.n=0 -o " + path("r.h5")),
      "'n' must be an integer in [1, ", path("r.h5"));
}

TEST_F(Cli, SingularInitialMatrixLeavesAnExistingFileIntact) {
  const std::string out = write("r.h5", "precious");
  const Result r = run("run " + write("s.toml", tiny_study("singular = true\n")) + " -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("singular"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(out), "precious");
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

TEST_F(Cli, OutputDirectoryMissing) {
  expect_bad_input(run("run " + write("s.toml", tiny_study()) + " -o " + path("no/such/dir/r.h5")),
                   "no/such/dir", path("no/such/dir/r.h5"));
}

TEST_F(Cli, DryRunChecksTheOutputAsTheRunDoes) {
  const std::string study = write("s.toml", tiny_study());
  expect_bad_input(run("run --dry-run " + study + " -o " + path("no/such/dir/r.h5")),
                   "no/such/dir", path("no/such/dir/r.h5"));
  const std::string damaged = write("r.h5", "not an HDF5 file");
  const Result r = run("run --dry-run --append " + study + " -o " + damaged);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("r.h5"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(damaged), "not an HDF5 file");
}

TEST_F(Cli, OutputDirectoryReadOnly) {
  // /proc refuses new files even to root, unlike a chmod-ed directory.
  expect_bad_input(run("run " + write("s.toml", tiny_study()) + " -o /proc/slaterlab-r.h5"),
                   "/proc", "/proc/slaterlab-r.h5");
}

TEST_F(Cli, TableOfMissingOrTruncatedFile) {
  Result r = run("table " + path("missing.h5"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.h5"), std::string::npos) << r.err;

  const std::string out = path("r.h5");
  ASSERT_EQ(run("run " + write("s.toml", tiny_study()) + " -q -o " + out).exit_code, 0);
  fs::resize_file(out, fs::file_size(out) / 2);
  r = run("table " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("r.h5"), std::string::npos) << r.err;

  EXPECT_EQ(run("table " + out + " --format html").exit_code, 2);
}

// ---- every key validated before any work, by every command -----------------

// A VMC study, for the checks before work (it is never run).
std::string tiny_vmc(const std::string& extra) { return "[[vmc]]\nn = 2\n" + extra; }

/// `run` and `run --dry-run` refuse `study` alike: exit 2, one line naming
/// `needle`, no output file.
#define EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(study, needle)                                       \
  do {                                                                                         \
    const std::string file = write("s.toml", study);                                           \
    expect_bad_input(run("run " + file + " -o " + path("r.h5")), needle, path("r.h5"));        \
    expect_bad_input(run("run --dry-run " + file + " -o " + path("r.h5")), needle, path("r.h5")); \
  } while (false)

TEST_F(Cli, NameTheStoreCannotHoldIsRefusedBeforeWork) {
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study("name = \"ill/conditioned\"\n"),
                                    "'name' = \"ill/conditioned\" contains '/'");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study("name = \".\"\n"), "'name' = \".\"");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study("name = \"a\\u0000b\"\n"),
                                    "'name' = \"a\\x00b\" contains a control character");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study() + "label = \"x/y\"\n", "'label' = \"x/y\"");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_vmc("name = \"\"\n"), "'name' = \"\" is empty");
}

TEST_F(Cli, NonFiniteOrOutOfRangeNumbersAreRefusedBeforeWork) {
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_vmc("omega = inf\n"),
                                    "'omega' must be a finite number > 0, got inf");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_vmc("[checks]\nmax_z_exact = nan\n"),
                                    "'max_z_exact' must be a finite number >= 0, got nan");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study("kappa = -inf\n"), "'kappa' must be a finite number");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study() + "breakdown = inf\n", "'breakdown'");
  // The sampler's own bounds: a tuned step must start inside the tuner's range.
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_vmc("step = 1e9\ntarget_acceptance = 0.5\n"),
                                    "initial step");
}

TEST_F(Cli, IntegersAreCheckedAgainstTheirTypeAndNamed) {
  // 2^62 sweeps of 32 electrons overflow a 64-bit move count.
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(
      "[[experiment]]\nn = 32\nsweeps = 4611686018427387904\n[[strategy]]\nname = \"sm\"\n",
      "'sweeps' must be an integer in [0, 9007199254740992], got 4611686018427387904");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(
      "[[experiment]]\nn = 32\nsweeps = 562949953421312\n[[strategy]]\nname = \"sm\"\n",
      "'sweeps' = 562949953421312 of n = 32 is more than 2^53");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_vmc("equilibration = 9223372036854775807\n"),
                                    "'equilibration' must be an integer in [0, ");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(
      "[[experiment]]\nn = 9223372036854775807\n[[strategy]]\nname = \"sm\"\n",
      "'n' must be an integer in [1, ");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_vmc("walkers = 4294967297\n"),
                                    "'walkers' must be an integer in [1, 2147483647], got 4294967297");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study("", "digits = 4294967346\n"),
                                    "'digits' must be 50 or 100, got 4294967346");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study() + "k = 4294967297\n",
                                    "'k' must be an integer in [1, 2147483647], got 4294967297");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study() + "recompute_every = 4294967296\n",
                                    "'recompute_every' must be an integer in [0, 2147483647]");
  EXPECT_REFUSED_BY_RUN_AND_DRY_RUN(tiny_study("", "recompute_every = 4294967296\n"),
                                    "'recompute_every' must be an integer in [0, 2147483647]");
}

TEST_F(Cli, RegressValidatesLikeRun) {
  const std::string baseline = path("base.h5");
  ASSERT_EQ(run("run " + write("ok.toml", tiny_study()) + " -q -o " + baseline).exit_code, 0);
  const std::string before = slurp(baseline);
  const Result r = run("regress " + write("s.toml", tiny_vmc("omega = inf\n")) + " --baseline " +
                       baseline + " -o " + path("r.h5"));
  expect_bad_input(r, "'omega'", path("r.h5"));
  EXPECT_EQ(slurp(baseline), before);
}

// ---- the study file and the command line ------------------------------------

TEST_F(Cli, DeeplyNestedStudyIsRefusedBeforeParsing) {
  // One dotted key of 50,000 parts: toml++ would recurse once per part.
  std::string key = "a";
  for (int i = 0; i < 50000; ++i) key += ".a";
  const Result r = run("run " + write("s.toml", key + " = 1\n") + " -o " + path("r.h5"));
  expect_bad_input(r, "s.toml:1: nested deeper than 64 levels", path("r.h5"));
  std::string arrays = "x = " + std::string(100, '[') + std::string(100, ']') + "\n";
  expect_bad_input(run("run " + write("t.toml", arrays) + " -o " + path("r.h5")),
                   "t.toml:1: nested deeper", path("r.h5"));
}

TEST_F(Cli, StudyPathMustBeARegularFile) {
  expect_bad_input(run("run " + path("") + " -o " + path("r.h5")), "is a directory", path("r.h5"));
  const std::string fifo = path("fifo.toml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Would block for ever if opened: refused from its type alone.
  expect_bad_input(run("run " + fifo + " -o " + path("r.h5")), "not a regular file", path("r.h5"));
  expect_bad_input(run("run --dry-run " + fifo + " -o " + path("r.h5")), "not a regular file",
                   path("r.h5"));
  expect_bad_input(run("run '' -o " + path("r.h5")), "path is empty", path("r.h5"));
  expect_bad_input(run("regress '' --baseline " + path("b.h5") + " -o " + path("r.h5")),
                   "path is empty", path("r.h5"));
}

TEST_F(Cli, OptionParserErrorsAreOneLine) {
  for (const std::string args :
       {"run --no-such-option", "frobnicate", "table", "fuzz --max-n abc", "regress s.toml"}) {
    const Result r = run(args + " -o " + path("r.h5"));
    expect_bad_input(r, "slaterlab --help", path("r.h5"));
  }
}

TEST_F(Cli, FuzzOptionsAreBoundedBeforeWork) {
  Result r = run("fuzz --max-n 2000000000 --cases 1 --corpus " + path(""));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("slaterlab: error: --max-n 2000000000 is too large for the memory", 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run("fuzz --seconds 1e300 --corpus " + path(""));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--seconds must be at most"), std::string::npos) << r.err;
}

}  // namespace
