// The `slaterlab` command line (command_line.hpp): its subcommands, their
// options, and how each ends. Exit codes: 0 ok, 1 a check failed (or a
// regression), 2 bad input or an I/O error, 70 an internal error (a bug),
// 130 interrupted (README "Exit codes").

#include "verify/cli/command_line.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "verify/inputs/config.hpp"
#include "verify/store/hdf5_store.hpp"
#include "verify/cli/bench.hpp"
#include "verify/cli/errors.hpp"
#if SLATERLAB_HAVE_RAPIDCHECK
#include "verify/cli/fuzz.hpp"
#endif
#include "verify/run/mpi_run.hpp"
#include "verify/run/plan.hpp"
#include "verify/report/regress.hpp"
#include "verify/run/runner.hpp"
#include "verify/report/table.hpp"

namespace slaterlab {
namespace {


std::atomic<bool> g_interrupted{false};
const MpiSession* g_mpi = nullptr;  // run_command_line's

std::string host_name() {
  char buffer[256] = {};
  return gethostname(buffer, sizeof buffer - 1) == 0 ? buffer : "unknown";
}

std::string quoted_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.find_first_of(" \t\"'") != std::string::npos) arg = "'" + arg + "'";
    line += (i ? " " : "") + arg;
  }
  return line;
}

struct RunArgs {
  std::string experiment;
  bool experiment_given = false;  // false: the built-in default study
  std::string output = "results.h5";
  std::vector<std::string> sets;
  bool quiet = false;
  bool append = false;
  bool dry_run = false;
  std::string replay_out;  // a directory, or "": no replay files
};

/// --replay-out names an existing, writable directory (checked before any
/// work; the files in it are written as each experiment ends).
void check_replay_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error))
    throw InputError("--replay-out " + dir + ": not an existing directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError("--replay-out " + dir + ": cannot write in it (" + std::strerror(errno) + ")");
}

/// Why a command of the command line is missing from this build.
[[maybe_unused]] std::string not_built(const char* command, const char* package, const char* option) {
  return fmt::format("`{}` is not in this build: {} was not found when it was configured (install it "
                     "and configure again, with -D{}=ON to make sure)",
                     command, package, option);
}

struct PreparedStudy {
  StudyConfig study;
  StudyPlan plan;
};

/// Everything `run` checks before any work, also for --dry-run (which then
/// prints the plan) and on every MPI rank: a study that cannot run or fit
/// is refused (exit 2).
PreparedStudy prepare_run(const RunArgs& args, bool first_rank) {
  PreparedStudy p{args.experiment_given
                      ? load_study(args.experiment, args.sets)
                      : parse_study(default_study_toml(), "default study", args.sets),
                  {}};
  p.plan = plan_study(p.study);
  const double available = available_memory_bytes();
  if (args.dry_run && first_rank) fmt::print("{}", format_plan(p.plan, available));
  check_before_running(p.study, p.plan, available);
  if (first_rank) check_output_path(args.output, args.append);  // reads, creates nothing
  check_replay_dir(args.replay_out);
  return p;
}

/// prepare_run on every rank of an MPI run, which then agree: when any rank
/// refuses the study, every rank ends with exit code 2 (no MPI_Abort, so no
/// launcher noise); rank 0 says why, another rank only what rank 0 did not
/// see. Without MPI, prepare_run itself.
std::optional<PreparedStudy> prepare_on_every_rank(const RunArgs& args) {
  if (!g_mpi || !g_mpi->active()) return prepare_run(args, true);
  std::optional<PreparedStudy> prepared;
  std::string problem;
  try {
    prepared = prepare_run(args, g_mpi->rank() == 0);
  } catch (const std::invalid_argument& e) {
    problem = e.what();
  } catch (const IoError& e) {
    problem = e.what();
  }
  const std::vector<bool> ok = g_mpi->all_flags(prepared.has_value());
  if (std::find(ok.begin(), ok.end(), false) == ok.end()) return prepared;
  if (!prepared && (g_mpi->rank() == 0 || ok[0])) print_error(stderr, "error", problem);
  return std::nullopt;
}

int run_command(const RunArgs& args, const std::string& command_line) {
  const std::optional<PreparedStudy> prepared = prepare_on_every_rank(args);
  if (!prepared) return kExitBadInput;
  if (args.dry_run) return kExitOk;
  const StudyConfig& study = prepared->study;
  const StudyPlan& plan = prepared->plan;
  // A long study says how long it will take.
  if (!args.quiet && plan.seconds > 30 && (!g_mpi || g_mpi->rank() == 0)) {
    fmt::print(stderr, "slaterlab: estimated time about {}, peak memory about {}\n",
               format_seconds(plan.seconds), format_bytes(plan.peak_bytes));
  }

  const RunMetadata metadata{SLATERLAB_VERSION, SLATERLAB_GIT_COMMIT, utc_timestamp(), host_name(),
                             command_line, study.resolved_toml};
  const bool progress = !args.quiet && isatty(STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  RunReport report;
  if (launched_processes() > 1) {  // mpirun -n P (verify/mpi_run.hpp)
    // mpirun ends a job it is asked to stop with SIGTERM to every rank.
    std::signal(SIGINT, [](int) { g_interrupted = true; });
    std::signal(SIGTERM, [](int) { g_interrupted = true; });
    report = run_study_distributed(*g_mpi, study, args.output, metadata, args.append, progress,
                                   &g_interrupted, args.replay_out);
    if (report.interrupted) {
      if (report.partial_file.empty()) {
        fmt::print(stderr, "slaterlab: interrupted (rank {})\n", g_mpi->rank());
      } else {
        fmt::print(stderr, "slaterlab: interrupted; completed checkpoints of rank {} are in {}\n",
                   g_mpi->rank(), report.partial_file);
      }
      MpiSession::leave(kExitInterrupted);  // without waiting for the other ranks
    }
    if (g_mpi->rank() != 0) return kExitOk;  // rank 0 reports for all
  } else {
    // Before the .partial exists: an interrupt from then on is the run's to
    // handle (it closes the file as a readable HDF5 .partial), never the
    // default action's.
    std::signal(SIGINT, [](int) { g_interrupted = true; });
    ResultWriter writer = ResultWriter::create(args.output, metadata, args.append);
    report = run_study(study, writer, {progress, &g_interrupted, nullptr, args.replay_out});
    if (report.interrupted) {
      writer.keep_partial();
      fmt::print(stderr, "slaterlab: interrupted; completed checkpoints are in {}.partial\n",
                 args.output);
      return kExitInterrupted;
    }
    writer.commit();
  }

  fmt::print("{}", format_table(read_results(args.output, {.checkpoints = false}),
                                TableFormat::markdown, TableKind::all));
  if (!args.quiet) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "wrote {} ({} experiments x {} strategies, {} VMC runs, {:.1f} s)\n",
               args.output, study.experiments.size(), study.strategies.size(), study.vmc.size(),
               seconds);
    fmt::print(stderr, "plot it: scripts/plot.py {} -o plots/ (in the source tree; one PNG per experiment, "
               "and the VMC energies)\n", args.output);
  }
  for (const auto& f : report.failures) {
    fmt::print(stderr, "CHECK FAILED: {} / {}: {}\n", f.experiment, f.strategy, f.what);
  }
  return report.failures.empty() ? kExitOk : kExitCheckFailed;
}

/// "float=1e-4" entries of --target over the default targets.
DriftTargets parse_drift_targets(const std::vector<std::string>& entries) {
  DriftTargets targets = default_drift_targets();
  for (const auto& entry : entries) {
    const auto equals = entry.find('=');
    const std::string precision = entry.substr(0, equals);
    if (equals == std::string::npos || !targets.contains(precision)) {
      throw std::invalid_argument(fmt::format(
          "--target '{}': expected PRECISION=VALUE with PRECISION float, mixed or double", entry));
    }
    const std::string text = entry.substr(equals + 1);
    std::size_t used = 0;
    double value = 0.0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || !(value > 0) || !std::isfinite(value)) {
      throw std::invalid_argument(
          fmt::format("--target '{}': the target must be a finite number > 0", entry));
    }
    targets[precision] = value;
  }
  return targets;
}

int table_command(const std::string& file, const std::string& format, const std::string& kind,
                  const std::vector<std::string>& target_entries) {
  const TableFormat table_format = parse_table_format(format);
  const TableKind table_kind = parse_table_kind(kind);
  const DriftTargets targets = parse_drift_targets(target_entries);
  // Only the drift table reads the checkpoint tables (the bulk of a file).
  const ResultsFile results =
      read_results(file, {.checkpoints = table_kind == TableKind::drift});
  fmt::print("{}", format_table(results, table_format, table_kind, targets));
  if (!results.committed) {
    // A .partial is readable on purpose (README "How the file is written"),
    // but its reader should know the run did not finish.
    fmt::print(stderr,
               "slaterlab: note: {} was not committed by a finished run (a killed or running "
               "run's .partial): its last experiment may be incomplete\n",
               file);
  }
  return kExitOk;
}

int regress_cli(const RegressArgs& args, const std::string& command_line) {
  std::signal(SIGINT, [](int) { g_interrupted = true; });
  const RunMetadata metadata{SLATERLAB_VERSION, SLATERLAB_GIT_COMMIT, utc_timestamp(), host_name(),
                             command_line, ""};
  const bool progress = !args.quiet && isatty(STDERR_FILENO);
  return regress_command(args, metadata, {progress, &g_interrupted, nullptr, {}}, std::cout, std::cerr);
}

/// A command line the option parser refused (bad input, exit 2).
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

int main_impl(int argc, char** argv) {
  CLI::App app{"slaterlab: accuracy of Slater-determinant update strategies against "
               "high-precision and certified references"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(SLATERLAB_VERSION) + " (" SLATERLAB_GIT_COMMIT ")");

  RunArgs run;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Run a study (the built-in default study without a file); print its table and "
             "write an HDF5 results file");
  const CLI::Option* run_experiment = run_cmd->add_option(
      "experiment", run.experiment, "Experiment TOML file (default: built-in study)");
  run_cmd->add_option("-o,--output", run.output, "HDF5 results file")->capture_default_str();
  run_cmd->add_option("--set", run.sets, "Override a key: section.key=value (repeatable)");
  run_cmd->add_flag("-q,--quiet", run.quiet, "No progress or summary on stderr");
  run_cmd->add_flag("--append", run.append, "Add the experiments to an existing results file");
  run_cmd->add_option("--replay-out", run.replay_out,
                      "Write each experiment's walk as a replay file DIR/<experiment>.replay.h5");
  run_cmd->add_flag("--dry-run", run.dry_run,
                    "Print the resolved plan (experiments x strategies, moves, memory and time "
                    "estimates) and exit without running");

  std::string table_file, table_format = "md";
  CLI::App* table_cmd = app.add_subcommand("table", "Print the comparison table of a results file");
  table_cmd->add_option("file", table_file, "HDF5 results file")->required();
  table_cmd->add_option("-f,--format", table_format, "md, csv or latex")->capture_default_str();
  std::string table_kind = "all";
  table_cmd->add_option("-k,--kind", table_kind,
                        "determinant, cycles, drift (errors over repeats, recompute intervals), "
                        "vmc, orbitals or all (all but drift)")
      ->capture_default_str();
  std::vector<std::string> table_targets;
  table_cmd->add_option("--target", table_targets,
                        "Drift table's error target, PRECISION=VALUE (repeatable; default "
                        "float=1e-4 mixed=1e-4 double=1e-10)");

  CLI::App* bench_cmd = app.add_subcommand(
      "bench", "Benchmark update strategies, references and B-spline orbitals against this "
               "machine's GEMM and memory-bandwidth limits (Google Benchmark; README: Performance)");
#if SLATERLAB_HAVE_BENCHMARK
  bench_cmd->footer(std::string("Options (other arguments go to Google Benchmark):\n") +
                    bench_usage());
#else
  bench_cmd->footer(not_built("bench", "Google Benchmark", "SLATERLAB_BENCH"));
#endif
  bench_cmd->allow_extras();
  bench_cmd->prefix_command();

  RegressArgs regress;
  CLI::App* regress_cmd = app.add_subcommand(
      "regress", "Run a study and compare it with a baseline results file; exit 1 on an accuracy "
                 "regression (README: Nightly accuracy regression)");
  regress_cmd->add_option("experiment", regress.experiment, "Experiment TOML file")->required();
  regress_cmd->add_option("--baseline", regress.baseline, "Baseline HDF5 results file")->required();
  regress_cmd->add_option("--junit", regress.junit, "Also write a JUnit XML report");
  regress_cmd->add_option("--summary", regress.summary, "Also write a Markdown summary");
  regress_cmd->add_option("--set", regress.sets, "Override a key: section.key=value (repeatable)");
  regress_cmd->add_option("-o,--output", regress.output,
                          "Keep the new results file (default: a temporary file, removed)");
  regress_cmd->add_flag("--update-baseline", regress.update_baseline,
                        "Write the new results as the baseline (atomically) and say what it replaced");
  regress_cmd->add_option("--factor", regress.limits.factor,
                          "How many times the larger of its error model and its baseline a metric may reach "
                          "(and a count its baseline)")->capture_default_str();
  regress_cmd->add_flag("-q,--quiet", regress.quiet,
                        "Only regressions, failed checks and baseline updates on stderr; no table");

#if SLATERLAB_HAVE_RAPIDCHECK
  FuzzArgs fuzz;
  int fuzz_cases = 0;
  double fuzz_seconds = 0;
  std::uint64_t fuzz_seed = 0;
  CLI::App* fuzz_cmd = app.add_subcommand(
      "fuzz", "Check the strategy properties on random and adversarial cases (RapidCheck); "
              "shrink and keep counterexamples in the corpus; exit 1 on a failure");
  fuzz_cmd->add_option("--strategy", fuzz.strategies,
                       "Strategy name or configuration label, e.g. delayed-3-double "
                       "(repeatable; default all)");
  fuzz_cmd->add_option("--kernel", fuzz.kernels,
                       "An external kernel's shared library (slaterlab/kernel.h; repeatable): "
                       "its configurations alone unless --strategy is given too");
  fuzz_cmd->add_option("--precision", fuzz.precisions, "float, double or mixed (repeatable)");
  fuzz_cmd->add_option("--property", fuzz.properties,
                       "RatiosMatchOracle, LogDetAndResidualsMatchOracle, "
                       "RejectLeavesStateUnchanged, NearSingularIsBreakdown or "
                       "CycleRatioMatchesOracle (repeatable)");
  fuzz_cmd->add_option("--workload", fuzz.workloads, "randsvd, adversarial or cycles (repeatable)");
  CLI::Option* cases_opt = fuzz_cmd->add_option(
      "--cases", fuzz_cases, "Cases per storage class and workload (default 20)");
  CLI::Option* seconds_opt =
      fuzz_cmd->add_option("--seconds", fuzz_seconds, "Run batches until this much time is up");
  CLI::Option* seed_opt =
      fuzz_cmd->add_option("--seed", fuzz_seed, "Seed of the run (default: a random one, printed)");
  fuzz_cmd->add_option("--max-n", fuzz.max_n, "Largest matrix size")->capture_default_str();
  fuzz_cmd->add_option("--shrink-seconds", fuzz.shrink_seconds,
                       "Time allowed to shrink each failure")->capture_default_str();
  fuzz_cmd->add_option("--corpus", fuzz.corpus, "Where counterexamples are saved (must exist)")
      ->capture_default_str();
  fuzz_cmd->add_flag("-q,--quiet", fuzz.quiet, "No progress on stderr");
#else
  CLI::App* fuzz_cmd = app.add_subcommand("fuzz", not_built("fuzz", "RapidCheck", "SLATERLAB_FUZZ"));
  fuzz_cmd->allow_extras();
  fuzz_cmd->prefix_command();
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line like every other bad input; the option list is --help's.
    throw UsageError(fmt::format("{} (slaterlab --help lists the options)", e.what()));
  }
  if (*run_cmd) {
    run.experiment_given = run_experiment->count() > 0;  // `run ""` names a file: an empty path
    return run_command(run, quoted_command_line(argc, argv));
  }
  if (*table_cmd) return table_command(table_file, table_format, table_kind, table_targets);
  if (*bench_cmd) {
#if !SLATERLAB_HAVE_BENCHMARK
    throw std::invalid_argument(not_built("bench", "Google Benchmark", "SLATERLAB_BENCH"));
#else
    std::vector<std::string> extras = bench_cmd->remaining();
    std::vector<char*> bench_argv{argv[0]};
    for (auto& e : extras) bench_argv.push_back(e.data());
    int bench_argc = int(bench_argv.size());
    return run_bench(bench_argc, bench_argv.data());
#endif
  }
  if (*regress_cmd) return regress_cli(regress, quoted_command_line(argc, argv));
  if (*fuzz_cmd) {
#if !SLATERLAB_HAVE_RAPIDCHECK
    throw std::invalid_argument(not_built("fuzz", "RapidCheck", "SLATERLAB_FUZZ"));
#else
    if (*cases_opt) fuzz.cases = fuzz_cases;
    if (*seconds_opt) fuzz.seconds = fuzz_seconds;
    if (*seed_opt) fuzz.seed = fuzz_seed;
    const bool progress = !fuzz.quiet && isatty(STDERR_FILENO);
    return fuzz_command(fuzz, std::cout, progress ? &std::cerr : nullptr);
#endif
  }
  return kExitBadInput;
}

/// Runs the command; every exception ends as one line and an exit code,
/// never as an abort (report_exception). `escaped` tells whether one did.
int guarded_main(int argc, char** argv, bool& escaped) {
  escaped = false;
  try {
    return main_impl(argc, argv);
  } catch (...) {
    escaped = true;
    return report_exception(std::current_exception(), stderr);
  }
}

}  // namespace

int run_command_line(int argc, char** argv, const MpiSession* mpi) {
  g_mpi = mpi;
  bool escaped = false;
  const int code = guarded_main(argc, argv, escaped);
  // A rank that fails alone would leave the others waiting for it for ever.
  if (escaped && mpi && mpi->active()) MpiSession::abort(code);
  return code;
}

}  // namespace slaterlab
