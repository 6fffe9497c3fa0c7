// `slaterlab regress` (regress.hpp's regress_command): the run, the
// comparison against the baseline, the reports, and the baseline's update;
// the files it writes replace their targets atomically.
#include "verify/report/regress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <ostream>
#include <system_error>

#include "verify/inputs/config.hpp"
#include "verify/report/regress_reports.hpp"
#include "verify/report/table.hpp"
#include "verify/run/plan.hpp"

namespace slaterlab {

namespace {

namespace fs = std::filesystem;

// ---- files --------------------------------------------------------------------

/// Writes text next to `path` and renames it over `path`: never half written
/// (a symbolic link is followed: its target is replaced, the link kept).
void write_text_atomically(const fs::path& given, const std::string& text) {
  const fs::path path = slaterlab::through_links(given);
  const fs::path partial = slaterlab::partial_path(path);
  {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    file << text;
    file.flush();
    if (!file) {
      std::error_code ignored;
      fs::remove(partial, ignored);
      throw IoError(fmt::format("cannot write {}: {}", partial.string(), std::strerror(errno)));
    }
  }
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) {
    fs::remove(partial, ec);
    throw IoError(fmt::format("cannot rename {} to {}", partial.string(), path.string()));
  }
}

/// Removes a temporary results file (and its .partial) when it goes out of scope.
struct TemporaryResults {
  fs::path path;  // empty: nothing to remove
  ~TemporaryResults() {
    if (path.empty()) return;
    std::error_code ignored;
    fs::remove(path, ignored);
    fs::remove(slaterlab::partial_path(path), ignored);
  }
};

fs::path temporary_results_path() {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() /
         fmt::format("slaterlab-regress-{}-{}.h5", ::getpid(), counter++);
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

std::string describe_run(const RunMetadata& m) {
  return fmt::format("slaterlab {} ({}), {}, {}", m.tool_version, m.git_commit, m.created_utc,
                     m.host);
}

void validate(const RegressArgs& args) {
  const RegressLimits& l = args.limits;
  if (!(std::isfinite(l.factor) && l.factor >= 1.0)) {
    throw std::invalid_argument(fmt::format(
        "--factor must be a finite number >= 1 (below 1 an identical run would fail), got {}",
        l.factor));
  }
  if (args.baseline.empty()) throw std::invalid_argument("--baseline is required");
  for (const auto* p : {&args.output, &args.junit, &args.summary}) {
    if (!p->empty() && same_file(*p, args.baseline)) {
      throw std::invalid_argument("'" + *p + "' is the baseline: the baseline is written only by " +
                                  "--update-baseline");
    }
  }
}

}  // namespace

std::optional<int> results_schema_version(const fs::path& path) { return read_schema_version(path); }

void copy_results(const ResultsFile& results, const fs::path& path) {
  ResultWriter writer = ResultWriter::create(path, results.metadata);
  for (const auto& e : results.experiments) {
    const ExperimentHandle experiment = writer.begin_experiment(e.info);
    copy_reference_records(e, writer, experiment);
    for (const auto& s : e.strategies) {
      const StrategyHandle strategy = writer.begin_strategy(experiment, s.info);
      for (const auto& row : s.checkpoints) writer.append(strategy, row);
      if (s.summary) writer.finish_strategy(strategy, *s.summary);
    }
  }
  for (const auto& run : results.vmc) writer.add_vmc_run(run);
  for (const auto& record : results.orbitals) writer.add_orbital_accuracy(record);
  writer.commit();
}

int regress_command(const RegressArgs& args, RunMetadata metadata, const RunOptions& options,
                    std::ostream& out, std::ostream& err) {
  // Bad input first, before any work.
  validate(args);
  const StudyConfig study = load_study(args.experiment, args.sets);
  check_before_running(study, plan_study(study), available_memory_bytes());
  const fs::path baseline_path = args.baseline;
  std::error_code ec;
  const bool have_baseline = fs::exists(baseline_path, ec);
  if (!have_baseline && !args.update_baseline) {
    throw IoError(
        fmt::format("cannot read baseline {}: no such file (create it with "
                    "--update-baseline)",
                    baseline_path.string()));
  }
  if (args.update_baseline) check_output_path(baseline_path);
  for (const auto* p : {&args.output, &args.junit, &args.summary}) {
    if (!p->empty()) check_output_path(*p);
  }
  std::optional<ResultsFile> baseline;
  std::optional<int> other_version;
  if (have_baseline) {
    const std::optional<int> version = results_schema_version(baseline_path);
    if (version && *version != kSchemaVersion) {
      other_version = *version;
    } else {
      baseline = read_results(baseline_path);  // IoError for anything but a results file
      if (!baseline->committed) {
        throw IoError(
            fmt::format("baseline {} was never committed by a finished run (the .partial of a "
                        "killed or running run, or a file written before results files "
                        "carried the 'committed' mark): refusing it as a baseline; make one "
                        "with --update-baseline",
                        baseline_path.string()));
      }
      if (!baseline->complete()) {
        throw IoError(
            fmt::format("baseline {} is incomplete (a strategy has no summary: the "
                        "file of a killed run?)",
                        baseline_path.string()));
      }
    }
  }

  // The run, into -o or a temporary file.
  metadata.config_toml = study.resolved_toml;
  const fs::path results_path =
      args.output.empty() ? temporary_results_path() : fs::path(args.output);
  const TemporaryResults temporary{args.output.empty() ? results_path : fs::path()};
  RunReport run;
  {
    ResultWriter writer = ResultWriter::create(results_path, metadata);
    run = run_study(study, writer, options);
    if (run.interrupted) {
      if (!args.output.empty()) writer.keep_partial();
      err << "slaterlab: interrupted; nothing was compared\n";
      return 130;
    }
    writer.commit();
  }
  const ResultsFile current = read_results(results_path);
  if (!args.quiet) out << format_table(current, TableFormat::markdown);

  // The comparison.
  RegressReport report;
  if (baseline) report = compare_results(current, *baseline, args.limits);
  if (other_version)
    report.comparisons.insert(report.comparisons.begin(), schema_mismatch(*other_version));
  for (const auto& f : run.failures) {
    Comparison c = structural(f.experiment, f.strategy, "checks", false, f.what);
    c.kind = ComparisonKind::check;
    report.comparisons.push_back(std::move(c));
  }
  for (const auto& c : report.comparisons) {
    if (c.passed) continue;
    err << (c.kind == ComparisonKind::check ? "CHECK FAILED: " : "REGRESSION: ") << c.where()
        << ": " << c.detail << "\n";
  }
  if (!args.quiet) {
    for (const auto& note : report.notes) err << "note: " << note << "\n";
  }

  std::vector<std::string> provenance = {
      fmt::format("study: `{}` ({}), factor {:g}, floor {:g} eps", args.experiment, study.name,
                  args.limits.factor, args.limits.floor_eps),
      "new run: " + describe_run(current.metadata),
      baseline ? fmt::format("baseline: `{}`, {}", baseline_path.string(),
                             describe_run(baseline->metadata))
               : fmt::format("baseline: `{}` ({})", baseline_path.string(),
                             have_baseline ? "another schema version" : "none yet")};
  if (!args.junit.empty())
    write_text_atomically(args.junit, format_junit(report, "slaterlab regress " + study.name));
  if (!args.summary.empty()) {
    write_text_atomically(
        args.summary,
        format_regress_summary(report, "slaterlab regress: " + study.name, provenance));
  }

  if (args.update_baseline) {
    if (!run.failures.empty()) {
      err << "slaterlab: baseline " << baseline_path.string()
          << " not updated: the new run failed its checks\n";
      return 1;
    }
    copy_results(current, baseline_path);
    if (baseline) {
      err << fmt::format(
          "replaced baseline {} (written {} by slaterlab {} ({})) with the new "
          "results; {} of {} comparisons had failed against it\n",
          baseline_path.string(), baseline->metadata.created_utc, baseline->metadata.tool_version,
          baseline->metadata.git_commit, report.failures(), report.comparisons.size());
    } else if (other_version) {
      err << fmt::format("replaced baseline {} (schema_version {}) with the new results\n",
                         baseline_path.string(), *other_version);
    } else {
      err << fmt::format("created baseline {}\n", baseline_path.string());
    }
    return 0;
  }
  if (!args.quiet) {
    err << fmt::format("regress: {} comparisons against {}: {}\n", report.comparisons.size(),
                       baseline_path.string(),
                       report.passed() ? "all held" : fmt::format("{} failed", report.failures()));
  }
  return report.passed() ? 0 : 1;
}

}  // namespace slaterlab
