// The fuzz engine: batches, the RapidCheck driver and shrinking (contract in
// fuzz_engine.hpp).
//
// How run_fuzz works:
// - Configurations: property_configs() filtered by `strategies` (a factory
//   name selects all its configurations, a label like "delayed-3-double"
//   exactly one) and `precisions`; properties and workloads (CaseMode) as
//   filtered (default: randsvd, adversarial and cycles; CycleRatioMatchesOracle
//   is checked on cycles alone, the other properties on the other two, and a
//   selection with no such pair is bad input). Bad values, --cases with
//   --seconds, N < 1, a corpus directory
//   that is missing or not writable: std::invalid_argument before any work.
// - Work is done in batches b = 0, 1, ...: batch b has seed (seed + b); in it,
//   for each storage class (double; float and mixed) and workload, one
//   RapidCheck run of `cases` cases (fuzz_limits: N <= max_n, sequences up
//   to 4N) checks every selected (configuration, property) on each case,
//   sharing one oracle trace per case. --cases runs one batch; --seconds runs
//   batches of kFuzzBatchCases until the time is up (a case started after the
//   deadline is not checked).
// - The first failing (configuration, property) of a RapidCheck run is shrunk
//   for that pair alone; the last failing case RapidCheck evaluates is the
//   shrunk counterexample. Shrinking stops after shrink_seconds (large cases
//   take one oracle trace per candidate); the report says when it did. The
//   counterexample is reported with the exact command that reproduces it
//   (`--strategy LABEL --property P --workload W --seed S --cases C --max-n
//   M` finds the same failing case and, within the shrink budget, shrinks it
//   to the same counterexample) and written to the corpus directory as a
//   replay file (corpus entry, below), status "new". The run is then repeated
//   without that pair (the cases before the failing one are not checked
//   again), and a reported pair is not checked in later batches either.
// - External kernels (--kernel PATH): one configuration per precision the
//   library declares. Every check of a kernel runs in a child process
//   (child_process.hpp): a kernel that kills its process (the signal is
//   named) or does not finish within kernel_case_timeout() fails the
//   property like any other violation, is shrunk (each candidate in a child
//   too) and saved with the library's path. A library that does not load
//   is std::invalid_argument before any work.
// - Deterministic given its arguments and the seed (generation, checks and
//   shrinking), except that --seconds decides how many batches run and the
//   shrink budget may stop shrinking early (the report says so).

#include "verify/properties/fuzz_engine.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "verify/properties/corpus.hpp"
#include "verify/properties/fuzz_selection.hpp"
#include "verify/properties/hash.hpp"
#include "verify/properties/kernel_check.hpp"
#include "verify/properties/oracle.hpp"

namespace slaterlab {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

/// The RapidCheck seed of one (batch, storage class, workload) run: it
/// depends on nothing else, so a run restricted to one configuration
/// generates the same cases.
std::uint64_t run_seed(std::uint64_t batch_seed, const std::string& group, CaseMode mode) {
  return splitmix64(batch_seed ^ fnv1a(group + "/" + std::string(to_string(mode))));
}

// ---- progress ------------------------------------------------------------------------

/// One line, rewritten in place at most ten times a second.
class Progress {
 public:
  explicit Progress(std::ostream* os) : os_(os) {}
  void show(const std::string& line, bool force = false) {
    if (!os_) return;
    const auto now = Clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    *os_ << "\r\033[K" << line << std::flush;
  }
  void clear() {
    if (os_) *os_ << "\r\033[K" << std::flush;
  }

 private:
  std::ostream* os_;
  Clock::time_point last_{};
};

// ---- one RapidCheck run ----------------------------------------------------------------

/// RapidCheck reports nothing itself: this fuzzer prints its own results.
class SilentListener final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

struct RunContext {
  const FuzzSelection& selection;
  const FuzzGroup& group;
  CaseMode mode;
  CaseLimits limits;
  std::uint64_t batch_seed;
  int batch = 0;
  int cases = 0;
  std::optional<Clock::time_point> deadline;
  double shrink_seconds = 0;
  std::vector<std::vector<bool>>& reported;  // [config][property index]
  std::vector<FuzzTally>& tallies;
  Progress& progress;
  Clock::time_point start;
};

struct Lock {
  std::size_t config = 0;  // index into selection.configs
  std::size_t property = 0;
};

struct Found {
  Lock lock;
  GeneratedCase property_case;
  PropertyFailure failure;
  int case_index = 0;
  int shrink_steps = 0;
  Clock::time_point shrink_deadline;
  bool shrink_cut = false;  // the shrink budget ran out
};

/// A selected property applies to the context's workload and was not reported yet.
bool pending(const RunContext& ctx, std::size_t config, std::size_t property) {
  return !ctx.reported[config][property] && applies(ctx.selection.properties[property], ctx.mode);
}

bool active(const RunContext& ctx, std::size_t config) {
  for (std::size_t p = 0; p < ctx.selection.properties.size(); ++p)
    if (pending(ctx, config, p)) return true;
  return false;
}

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

UpdaterOptions options_for(const PropertyConfig& c, const GeneratedCase& g) {
  UpdaterOptions o = c.options;
  o.recompute_every = g.recompute_every;
  return o;
}

/// One RapidCheck run over ctx.cases cases; cases before `resume` were
/// checked (and passed) by an earlier run with the same seed. Returns the
/// shrunk failure, if any.
std::optional<Found> rapidcheck_run(RunContext& ctx, int resume) {
  std::optional<Found> found;
  int case_index = 0;
  const std::string where =
      fmt::format("batch {} {}/{}", ctx.batch, ctx.group.name, to_string(ctx.mode));
  // Every case at RapidCheck's full size (100): N, kappa and the length are
  // uniform over their whole ranges from the first case on, rather than
  // ramping up over the run as in the unit suite. Shrinking is unaffected.
  const auto generator = rc::gen::resize(100, gen_case(ctx.limits));
  auto property = [&] {
    const GeneratedCase g = *generator;
    if (found) {  // shrinking: the locked pair alone
      if (Clock::now() >= found->shrink_deadline) {
        // Out of budget: every further candidate is declined, so RapidCheck
        // ends with the last failing case it adopted.
        found->shrink_cut = true;
        return;
      }
      const PropertyConfig& c = ctx.selection.configs[found->lock.config];
      const Property p = ctx.selection.properties[found->lock.property];
      auto f = check_config(p, c, options_for(c, g), g.property_case, nullptr, nullptr);
      ctx.progress.show(fmt::format("shrinking {} {}: {} steps, N = {}", c.label, to_string(p),
                                    found->shrink_steps, g.property_case.n()));
      if (!f) return;
      found->property_case = g;
      found->failure = std::move(*f);
      ++found->shrink_steps;
      RC_FAIL(found->failure.message);
    }
    const int index = case_index++;
    if (index < resume) return;  // passed in the earlier run
    if (ctx.deadline && Clock::now() >= *ctx.deadline) return;
    ctx.progress.show(fmt::format("[{:6.1f} s] {}: case {}/{}, N = {}",
                                  std::chrono::duration<double>(Clock::now() - ctx.start).count(),
                                  where, index + 1, ctx.cases, g.property_case.n()));
    const auto trace = trace_case(g.property_case);
    for (std::size_t ci : ctx.group.configs) {
      if (!active(ctx, ci)) continue;
      const PropertyConfig& c = ctx.selection.configs[ci];
      CheckStats stats;
      for (std::size_t pi = 0; pi < ctx.selection.properties.size(); ++pi) {
        if (!pending(ctx, ci, pi)) continue;
        auto f = check_config(ctx.selection.properties[pi], c, options_for(c, g), g.property_case,
                              trace.get(), &stats);
        if (f) {
          found = Found{{ci, pi}, g, std::move(*f), index, 0, after(ctx.shrink_seconds), false};
          RC_FAIL(found->failure.message);
        }
      }
      ++ctx.tallies[ci].cases;
      ctx.tallies[ci].stats += stats;
    }
  };

  rc::detail::TestParams params;
  params.seed = run_seed(ctx.batch_seed, ctx.group.name, ctx.mode);
  params.maxSuccess = ctx.cases;
  rc::detail::TestMetadata metadata;
  metadata.id = "fuzz/" + ctx.group.name + "/" + std::string(to_string(ctx.mode));
  metadata.description = metadata.id;
  SilentListener listener;
  // An explicit (empty) reproduce map: RapidCheck's global configuration
  // (RC_PARAMS) is never consulted, and it prints nothing.
  const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;
  const auto result = rc::detail::checkTestable(property, metadata, params, listener, no_reproduce);
  if (result.template is<rc::detail::SuccessResult>()) return std::nullopt;
  if (!found) {  // RapidCheck itself failed (a generator threw): no case to keep
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    throw std::runtime_error("fuzz: " + metadata.id + ": " + ss.str());
  }
  return found;
}

// ---- reporting a failure --------------------------------------------------------------

std::string reproduce_command(const PropertyConfig& c, Property p, CaseMode mode,
                              std::uint64_t seed, int cases, int max_n) {
  const std::string kernel = c.options.library.empty() ? "" : "--kernel " + c.options.library + " ";
  return fmt::format(
      "slaterlab fuzz {}--strategy {} --property {} --workload {} --seed {} "
      "--cases {} --max-n {}",
      kernel, c.label, to_string(p), to_string(mode), seed, cases, max_n);
}

FuzzFailure record(const RunContext& ctx, const Found& found, const FuzzArgs& args) {
  const PropertyConfig& c = ctx.selection.configs[found.lock.config];
  const Property p = ctx.selection.properties[found.lock.property];
  FuzzFailure f;
  f.config = c;
  f.config.options.recompute_every = found.property_case.recompute_every;
  f.failure = found.failure;
  f.counterexample = found.property_case;
  f.seed = ctx.batch_seed;
  f.cases = ctx.cases;
  f.shrink_steps = found.shrink_steps;
  f.shrink_cut = found.shrink_cut;
  f.reproduce = reproduce_command(c, p, ctx.mode, ctx.batch_seed, ctx.cases, args.max_n);

  CorpusEntry e;
  e.property_case = found.property_case.property_case;
  e.strategy = c.name;
  e.options = f.config.options;
  e.label = c.label;
  e.property = std::string(to_string(p));
  e.message = found.failure.message;
  e.seed = ctx.batch_seed;
  e.workload = std::string(to_string(ctx.mode));
  e.reproduce = f.reproduce;
  f.file = fs::path(args.corpus) / corpus_file_name(c.label, e.property, e.property_case);
  write_corpus_entry(f.file, e);
  return f;
}

/// Every selected pair of one storage class on one workload: after a failure,
/// the same RapidCheck run again without the reported pair (the cases before
/// the failing one passed every other pair already).
void fuzz_group(RunContext& ctx, const FuzzArgs& args, FuzzReport& report,
                std::ostream* progress_stream) {
  int resume = 0;
  while (std::any_of(ctx.group.configs.begin(), ctx.group.configs.end(),
                     [&](std::size_t c) { return active(ctx, c); })) {
    const auto found = rapidcheck_run(ctx, resume);
    if (!found) return;
    ctx.reported[found->lock.config][found->lock.property] = true;
    ++ctx.tallies[found->lock.config].failures;
    report.failures.push_back(record(ctx, *found, args));
    if (progress_stream) {  // the details follow on stdout at the end
      const FuzzFailure& f = report.failures.back();
      ctx.progress.clear();
      *progress_stream << fmt::format("FAILED {} {}: saved {}\n", f.config.label,
                                      f.failure.property, f.file.string());
    }
    resume = found->case_index;
  }
}

}  // namespace

// ---- public: the fuzzer --------------------------------------------------------------------

FuzzReport run_fuzz(const FuzzArgs& args, std::ostream* progress_stream) {
  validate_fuzz_args(args);
  const FuzzSelection sel = select_fuzz(args);
  FuzzReport report;
  report.seed = args.seed ? *args.seed
                          : (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  for (const auto& c : sel.configs) report.tallies.push_back({c, 0, {}, 0});
  std::vector<std::vector<bool>> reported(sel.configs.size(),
                                          std::vector<bool>(sel.properties.size(), false));
  Progress progress(progress_stream);
  const auto start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (args.seconds) deadline = after(*args.seconds);
  const int cases = args.cases ? *args.cases : args.seconds ? kFuzzBatchCases : kFuzzDefaultCases;
  if (progress_stream) {
    *progress_stream << fmt::format(
        "fuzz: {} configurations x {} properties, seed {}, N <= {}, {}\n", sel.configs.size(),
        sel.properties.size(), report.seed, args.max_n,
        args.seconds ? fmt::format("{} s in batches of {} cases", *args.seconds, cases)
                     : fmt::format("{} cases per storage class and workload", cases));
  }

  for (int batch = 0;; ++batch) {
    if (deadline && Clock::now() >= *deadline) break;
    report.batches = batch + 1;
    for (const FuzzGroup& group : sel.groups) {
      for (CaseMode mode : sel.modes) {
        RunContext ctx{sel,
                       group,
                       mode,
                       fuzz_limits(group.limits_precision, mode, args.max_n),
                       report.seed + std::uint64_t(batch),
                       batch,
                       cases,
                       deadline,
                       args.shrink_seconds,
                       reported,
                       report.tallies,
                       progress,
                       start};
        fuzz_group(ctx, args, report, progress_stream);
      }
    }
    if (!args.seconds) break;
    // Once every pair has failed there is nothing left to fuzz: another
    // batch would run no case (and spin until the deadline).
    const bool any_pending = std::any_of(reported.begin(), reported.end(), [](const auto& row) {
      return std::find(row.begin(), row.end(), false) != row.end();
    });
    if (!any_pending) break;
  }
  progress.clear();
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace slaterlab
