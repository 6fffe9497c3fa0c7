#include "verify/cli/fuzz.hpp"

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
//
// Corpus entry: a replay file (docs/replay.md) with moves/accept, or for a
// case of update cycles moves/cycle (replay_schema_version 2), whose string
// root attributes name the strategy, its
// options, the property, the failure message, the seed and a status
// ("known-finding": a known, unfixed violation the suite expects to still
// fail; anything else: the property must hold). See data/fuzz-corpus/README.md.

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <ostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <unordered_map>

#include "slaterlab/strategies/determinant/external_kernel.hpp"
#include "verify/store/child_process.hpp"
#include "verify/inputs/replay.hpp"
#include "verify/inputs/suggest.hpp"
#include "verify/run/plan.hpp"
#include "verify/store/results.hpp"

namespace slaterlab {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// ---- seeds -------------------------------------------------------------------------

std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t h = 14695981039346656037ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

std::uint64_t fnv1a(std::string_view s) { return fnv1a(s.data(), s.size()); }

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The RapidCheck seed of one (batch, storage class, workload) run: it
/// depends on nothing else, so a run restricted to one configuration
/// generates the same cases.
std::uint64_t run_seed(std::uint64_t batch_seed, const std::string& group, CaseMode mode) {
  return splitmix64(batch_seed ^ fnv1a(group + "/" + std::string(to_string(mode))));
}

// ---- selection -----------------------------------------------------------------------

/// Configurations that share generator limits (the storage precision's
/// epsilon): "double", and "float" for float and mixed storage.
struct Group {
  std::string name;
  Precision limits_precision;
  std::vector<std::size_t> configs;  // indices into Selection::configs
};

struct Selection {
  std::vector<PropertyConfig> configs;
  std::vector<Property> properties;
  std::vector<CaseMode> modes;
  std::vector<Group> groups;
};

std::string group_of(Precision p) { return p == Precision::double_ ? "double" : "float"; }

/// One configuration per precision each external kernel declares.
std::vector<PropertyConfig> kernel_configs(const FuzzArgs& args) {
  std::vector<PropertyConfig> configs;
  for (const std::string& library : args.kernels) {
    UpdaterOptions o;
    o.library = library;
    const StrategyTraits traits = strategy_traits(library_strategy(), o);  // loads it
    for (Precision p : traits.precisions) {
      o.precision = p;
      o.breakdown = traits.default_breakdown;
      configs.push_back({library_strategy(), o, make_updater(library_strategy(), o)->label()});
    }
  }
  return configs;
}

std::vector<PropertyConfig> select_configs(const FuzzArgs& args) {
  std::vector<PropertyConfig> all = args.kernels.empty() || !args.strategies.empty()
                                        ? property_configs()
                                        : std::vector<PropertyConfig>{};
  for (PropertyConfig& c : kernel_configs(args)) all.push_back(std::move(c));
  std::vector<Precision> precisions;
  for (const auto& p : args.precisions) precisions.push_back(parse_precision(p));
  std::vector<std::string> words = known_strategies();
  for (const auto& c : all) words.push_back(c.label);
  for (const auto& s : args.strategies) {
    if (std::find(words.begin(), words.end(), s) != words.end()) continue;
    const std::string close = closest_match(s, words);
    throw std::invalid_argument("unknown strategy '" + s + "'" +
                                (close.empty() ? suggestion_suffix(s, known_strategies())
                                               : " (did you mean '" + close + "'?)"));
  }
  std::vector<PropertyConfig> chosen;
  for (const auto& c : all) {
    const bool by_name =
        args.strategies.empty() || !c.options.library.empty() ||
        std::any_of(args.strategies.begin(), args.strategies.end(),
                    [&](const std::string& s) { return s == c.name || s == c.label; });
    const bool by_precision =
        precisions.empty() ||
        std::find(precisions.begin(), precisions.end(), c.options.precision) != precisions.end();
    if (by_name && by_precision) chosen.push_back(c);
  }
  if (chosen.empty()) {
    std::string supported;
    for (const auto& s : args.strategies) {
      std::string list;
      for (Precision p : supported_precisions(s))
        list += (list.empty() ? "" : ", ") + std::string(to_string(p));
      if (!list.empty()) supported += fmt::format("; '{}' supports {}", s, list);
    }
    throw std::invalid_argument(
        "no strategy configuration matches the --strategy and "
        "--precision given" +
        supported);
  }
  return chosen;
}

Selection select(const FuzzArgs& args) {
  Selection s;
  s.configs = select_configs(args);
  for (const auto& p : args.properties) s.properties.push_back(parse_property(p));
  if (s.properties.empty()) s.properties = all_properties();
  for (const auto& w : args.workloads) s.modes.push_back(parse_case_mode(w));
  if (s.modes.empty()) s.modes = {CaseMode::randsvd, CaseMode::adversarial, CaseMode::cycles};
  const bool any = std::any_of(s.properties.begin(), s.properties.end(), [&](Property p) {
    return std::any_of(s.modes.begin(), s.modes.end(), [&](CaseMode m) { return applies(p, m); });
  });
  if (!any) {
    throw std::invalid_argument(fmt::format(
        "no selected property is checked on the selected workloads ({} is checked on the cycles "
        "workload only, the others on randsvd and adversarial)",
        to_string(Property::cycle_ratio_matches_oracle)));
  }
  for (std::size_t i = 0; i < s.configs.size(); ++i) {
    const std::string name = group_of(s.configs[i].options.precision);
    auto it = std::find_if(s.groups.begin(), s.groups.end(),
                           [&](const Group& g) { return g.name == name; });
    if (it == s.groups.end()) {
      s.groups.push_back({name, s.configs[i].options.precision, {}});
      it = s.groups.end() - 1;
    }
    it->configs.push_back(i);
  }
  // A stable order whatever the selection: double first.
  std::sort(s.groups.begin(), s.groups.end(),
            [](const Group& a, const Group& b) { return a.name < b.name; });
  return s;
}

void check_corpus_dir(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    throw std::invalid_argument("corpus directory '" + dir +
                                "' does not exist (create it, or pass --corpus DIR)");
  }
  if (!fs::is_directory(dir, ec)) {
    throw std::invalid_argument("corpus directory '" + dir + "' is not a directory");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw std::invalid_argument("corpus directory '" + dir + "' is not writable");
  }
}

/// Peak bytes of a run per max_n^2, measured: the peak resident size of
/// `fuzz --strategy sm --cases 3 --seed 7` was 1.1e4 max_n^2 bytes at max_n
/// = 150 and 8.2e3 at 300 (the oracle's trace keeps per move the long-double
/// vectors of its error model, for up to 4N moves); twice the larger leaves
/// room for the strategies with more state.
constexpr double kFuzzBytesPerEntry = 16384;

void validate(const FuzzArgs& args) {
  if (args.cases && args.seconds) {
    throw std::invalid_argument("--cases and --seconds exclude each other (give one)");
  }
  if (args.cases && *args.cases < 1) {
    throw std::invalid_argument(fmt::format("--cases must be >= 1, got {}", *args.cases));
  }
  if (args.seconds && !(*args.seconds > 0)) {
    throw std::invalid_argument(fmt::format("--seconds must be > 0, got {}", *args.seconds));
  }
  // Deadlines are steady-clock time points (64-bit nanoseconds, 292 years):
  // a longer time would overflow them.
  constexpr double kMaxSeconds = 1e9;
  if (args.seconds && !(*args.seconds <= kMaxSeconds)) {
    throw std::invalid_argument(
        fmt::format("--seconds must be at most {:g}, got {}", kMaxSeconds, *args.seconds));
  }
  if (!(args.shrink_seconds >= 0 && args.shrink_seconds <= kMaxSeconds)) {
    throw std::invalid_argument(fmt::format("--shrink-seconds must lie in [0, {:g}], got {}",
                                            kMaxSeconds, args.shrink_seconds));
  }
  if (args.max_n < 1) {
    throw std::invalid_argument(fmt::format("--max-n must be >= 1, got {}", args.max_n));
  }
  const double available = available_memory_bytes();
  const double largest = std::floor(std::sqrt(available / kFuzzBytesPerEntry));
  if (double(args.max_n) > largest) {
    throw std::invalid_argument(fmt::format(
        "--max-n {} is too large for the memory available: a case of size N needs about {} N^2 "
        "bytes, and {} is available, enough for N <= {:.0f}",
        args.max_n, kFuzzBytesPerEntry, format_bytes(available), largest));
  }
  check_corpus_dir(args.corpus);
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
  const Selection& selection;
  const Group& group;
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
  GeneratedCase kase;
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

void add(CheckStats& total, const CheckStats& s) {
  total.ratios += s.ratios;
  total.ratios_checked += s.ratios_checked;
  total.log_dets_checked += s.log_dets_checked;
  total.residuals_checked += s.residuals_checked;
  total.breakdowns_checked += s.breakdowns_checked;
  total.vacuous += s.vacuous;
  total.cycles += s.cycles;
  total.cycles_checked += s.cycles_checked;
}

/// check_case, for an external kernel in a child process: a crash or a
/// hang of the kernel is then a failure of the property like any other.
std::optional<PropertyFailure> check(Property p, const PropertyConfig& c, const UpdaterOptions& o,
                                     const Case& kase, const CaseTrace* trace, CheckStats* stats) {
  const auto direct = [&](CheckStats* s) {
    return trace ? check_case(p, c.name, o, kase, *trace, s) : check_case(p, c.name, o, kase, s);
  };
  if (!strategy_traits(c.name).loads_library) return direct(stats);
  const double timeout = kernel_case_timeout(kase.n(), kase.moves.size());
  const ChildOutcome child = run_in_child(
      [&] {
        CheckStats s;
        const auto f = direct(&s);
        std::string out = fmt::format("{} {} {} {} {} {} {} {}\n", s.ratios, s.ratios_checked,
                                      s.log_dets_checked, s.residuals_checked,
                                      s.breakdowns_checked, s.vacuous, s.cycles,
                                      s.cycles_checked);
        if (f) out += f->property + "\n" + f->message;
        return out;
      },
      timeout);
  const std::string property(to_string(p));
  if (child.signal) {
    return PropertyFailure{property,
                           "the kernel killed its process: " + describe_signal(child.signal)};
  }
  if (child.timed_out) {
    return PropertyFailure{property, fmt::format("the kernel hung: the case did not finish within "
                                                 "{:.3g} s (child process killed with SIGKILL)",
                                                 timeout)};
  }
  if (!child.completed) return PropertyFailure{property, "the kernel's check failed: " + child.error};
  std::istringstream in(child.result);
  CheckStats s;
  in >> s.ratios >> s.ratios_checked >> s.log_dets_checked >> s.residuals_checked >>
      s.breakdowns_checked >> s.vacuous >> s.cycles >> s.cycles_checked;
  if (stats) add(*stats, s);
  std::string line, name, message;
  std::getline(in, line);  // the end of the counts' line
  if (!std::getline(in, name)) return std::nullopt;
  std::getline(in, message, '\0');
  return PropertyFailure{name, message};
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
      auto f = check(p, c, options_for(c, g), g.kase, nullptr, nullptr);
      ctx.progress.show(fmt::format("shrinking {} {}: {} steps, N = {}", c.label, to_string(p),
                                    found->shrink_steps, g.kase.n()));
      if (!f) return;
      found->kase = g;
      found->failure = std::move(*f);
      ++found->shrink_steps;
      RC_FAIL(found->failure.message);
    }
    const int index = case_index++;
    if (index < resume) return;  // passed in the earlier run
    if (ctx.deadline && Clock::now() >= *ctx.deadline) return;
    ctx.progress.show(fmt::format("[{:6.1f} s] {}: case {}/{}, N = {}",
                                  std::chrono::duration<double>(Clock::now() - ctx.start).count(),
                                  where, index + 1, ctx.cases, g.kase.n()));
    const auto trace = trace_case(g.kase);
    for (std::size_t ci : ctx.group.configs) {
      if (!active(ctx, ci)) continue;
      const PropertyConfig& c = ctx.selection.configs[ci];
      CheckStats stats;
      for (std::size_t pi = 0; pi < ctx.selection.properties.size(); ++pi) {
        if (!pending(ctx, ci, pi)) continue;
        auto f = check(ctx.selection.properties[pi], c, options_for(c, g), g.kase, trace.get(),
                       &stats);
        if (f) {
          found = Found{{ci, pi}, g, std::move(*f), index, 0, after(ctx.shrink_seconds), false};
          RC_FAIL(found->failure.message);
        }
      }
      ++ctx.tallies[ci].cases;
      add(ctx.tallies[ci].stats, stats);
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
  f.config.options.recompute_every = found.kase.recompute_every;
  f.failure = found.failure;
  f.counterexample = found.kase;
  f.seed = ctx.batch_seed;
  f.cases = ctx.cases;
  f.shrink_steps = found.shrink_steps;
  f.shrink_cut = found.shrink_cut;
  f.reproduce = reproduce_command(c, p, ctx.mode, ctx.batch_seed, ctx.cases, args.max_n);

  CorpusEntry e;
  e.kase = found.kase.kase;
  e.strategy = c.name;
  e.options = f.config.options;
  e.label = c.label;
  e.property = std::string(to_string(p));
  e.message = found.failure.message;
  e.seed = ctx.batch_seed;
  e.workload = std::string(to_string(ctx.mode));
  e.reproduce = f.reproduce;
  f.file = fs::path(args.corpus) / corpus_file_name(c.label, e.property, e.kase);
  write_corpus_entry(f.file, e);
  return f;
}

void print_failure(std::ostream& out, const FuzzFailure& f) {
  fmt::print(out, "FAILED {} {}\n", f.config.label, f.failure.property);
  fmt::print(out, "  {}\n", f.failure.message);
  fmt::print(out, "  counterexample ({} shrink steps{}): {}\n", f.shrink_steps,
             f.shrink_cut ? ", cut short by --shrink-seconds" : "",
             fmt::streamed(f.counterexample));
  fmt::print(out, "  reproduction seed {}; reproduce with:\n    {}\n", f.seed, f.reproduce);
  fmt::print(out, "  saved {}\n", f.file.string());
}

void print_summary(std::ostream& out, const FuzzArgs& args, const FuzzReport& r) {
  fmt::print(out,
             "\n| configuration | cases | ratios compared | log-dets compared | "
             "residuals compared | breakdown probes | cycle ratios compared | failures |\n");
  fmt::print(out, "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  int cases = 0;
  for (const FuzzTally& t : r.tallies) {
    cases += t.cases;
    fmt::print(out, "| {} | {} | {} of {} | {} | {} | {} | {} of {} | {} |\n", t.config.label,
               t.cases, t.stats.ratios_checked, t.stats.ratios, t.stats.log_dets_checked,
               t.stats.residuals_checked, t.stats.breakdowns_checked, t.stats.cycles_checked,
               t.stats.cycles, t.failures);
  }
  fmt::print(out,
             "\nfuzz: {} configurations, {} case checks, {} failure{}; seed {}, {} "
             "batch{}, N <= {}, {:.1f} s\n",
             r.tallies.size(), cases, r.failures.size(), r.failures.size() == 1 ? "" : "s", r.seed,
             r.batches, r.batches == 1 ? "" : "es", args.max_n, r.seconds);
}

// ---- corpus helpers ---------------------------------------------------------------------

std::uint64_t case_checksum(const Case& c) {
  std::uint64_t h = fnv1a(c.initial.data(), sizeof(double) * std::size_t(c.initial.size()));
  for (const CaseMove& m : c.moves) {
    const std::int64_t k = m.electron;
    const char a = m.accept ? 1 : 0;
    h = fnv1a(&k, sizeof k, h);
    h = fnv1a(m.column.data(), sizeof(double) * std::size_t(m.column.size()), h);
    h = fnv1a(&a, 1, h);
  }
  const std::int64_t probe[2] = {c.probe_column, c.probe_source};
  return fnv1a(probe, sizeof probe, h);
}

[[noreturn]] void bad_entry(const fs::path& path, const std::string& what) {
  throw std::invalid_argument("corpus file " + path.string() + ": " + what);
}

template <class T>
T parse_number(const fs::path& path, const std::string& key, const std::string& text) {
  std::istringstream in(text);
  T value{};
  in >> value;
  if (in.fail() || !in.eof()) {
    bad_entry(path, "attribute '" + key + "' = '" + text + "' is not a number");
  }
  return value;
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
  validate(args);
  const Selection sel = select(args);
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
    for (const Group& group : sel.groups) {
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
  }
  progress.clear();
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

int fuzz_command(const FuzzArgs& args, std::ostream& out, std::ostream* progress) {
  const FuzzReport report = run_fuzz(args, args.quiet ? nullptr : progress);
  for (const FuzzFailure& f : report.failures) print_failure(out, f);
  print_summary(out, args, report);
  return report.failures.empty() ? 0 : 1;
}

// ---- public: the corpus ----------------------------------------------------------------------

double kernel_case_timeout(Eigen::Index n, std::size_t moves) {
  return 2 * kernel_call_timeout(n) + 1e-3 * double(moves);
}

std::string corpus_file_name(const std::string& label, const std::string& property, const Case& c) {
  std::string safe = label;
  for (char& ch : safe)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  return fmt::format("{}-{}-{:08x}.h5", safe, property, case_checksum(c) & 0xffffffffu);
}

void write_corpus_entry(const fs::path& path, const CorpusEntry& e) {
  const Case& c = e.kase;
  ReplayData data;
  data.initial = c.initial;
  data.columns.resize(c.n(), Eigen::Index(c.moves.size()));
  // A case of update cycles has moves/cycle and no decisions (schema 2).
  if (c.has_cycles()) {
    data.cycle.emplace();
    for (std::size_t i = 0; i < c.cycles.size(); ++i)
      data.cycle->insert(data.cycle->end(), std::size_t(c.cycles[i]), std::int64_t(i));
  } else {
    data.accept.emplace();
  }
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    data.electron.push_back(c.moves[i].electron);
    data.columns.col(Eigen::Index(i)) = c.moves[i].column;
    if (data.accept) data.accept->push_back(c.moves[i].accept);
  }
  data.metadata = {
      {"strategy", e.strategy},
      {"label", e.label},
      {"precision", std::string(to_string(e.options.precision))},
      {"recompute_every", std::to_string(e.options.recompute_every)},
      {"breakdown", fmt::format("{:.17g}", e.options.breakdown)},
      {"k", std::to_string(e.options.k)},
      {"variant", e.options.variant},
      {"property", e.property},
      {"message", e.message},
      {"status", e.status},
      {"seed", std::to_string(e.seed)},
      {"workload", e.workload},
      {"reproduce", e.reproduce},
      {"probe_column", std::to_string(c.probe_column)},
      {"probe_source", std::to_string(c.probe_source)},
      {"slaterlab_version", SLATERLAB_VERSION " (" SLATERLAB_GIT_COMMIT ")"},
      {"created", utc_timestamp()},
  };
  if (!e.options.library.empty()) data.metadata.emplace_back("library", e.options.library);
  // Never a half-written entry under the final name.
  const fs::path partial =
      path.parent_path() / fmt::format(".{}.partial", path.filename().string());
  write_replay(partial, data);
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) {
    fs::remove(partial, ec);
    throw ReplayError("replay file " + path.string() + ": cannot write: " + ec.message());
  }
}

CorpusEntry read_corpus_entry(const fs::path& path) {
  const ReplayData data = read_replay(path);
  std::map<std::string, std::string> attr(data.metadata.begin(), data.metadata.end());
  auto get = [&](const std::string& key) -> std::optional<std::string> {
    const auto it = attr.find(key);
    if (it == attr.end()) return std::nullopt;
    return it->second;
  };
  auto required = [&](const std::string& key) {
    auto v = get(key);
    if (!v) bad_entry(path, "missing attribute '" + key + "'");
    return *v;
  };
  if (!data.accept && !data.cycle) {
    bad_entry(path, "missing dataset 'moves/accept' or 'moves/cycle' (a case has its decisions "
                    "or its update cycles)");
  }

  CorpusEntry e;
  e.kase.initial = data.initial;
  for (std::int64_t i = 0; i < data.moves(); ++i) {
    const std::size_t m = std::size_t(i);
    e.kase.moves.push_back({data.electron[m], data.columns.col(Eigen::Index(i)),
                            data.accept ? bool((*data.accept)[m]) : true});
    // read_replay checked that cycles are runs numbered 0, 1, ...
    if (data.cycle && (m == 0 || (*data.cycle)[m] != (*data.cycle)[m - 1]))
      e.kase.cycles.push_back(0);
    if (data.cycle) ++e.kase.cycles.back();
  }
  e.strategy = required("strategy");
  try {
    e.options.precision = parse_precision(required("precision"));
  } catch (const std::invalid_argument& error) {
    bad_entry(path, error.what());
  }
  e.property = required("property");
  e.status = required("status");
  if (auto v = get("recompute_every"))
    e.options.recompute_every = parse_number<int>(path, "recompute_every", *v);
  if (auto v = get("breakdown")) e.options.breakdown = parse_number<double>(path, "breakdown", *v);
  if (auto v = get("k")) e.options.k = parse_number<int>(path, "k", *v);
  if (auto v = get("variant")) e.options.variant = *v;
  if (auto v = get("library")) e.options.library = *v;
  if (auto v = get("seed")) e.seed = parse_number<std::uint64_t>(path, "seed", *v);
  e.kase.probe_source = e.kase.n() > 1 ? 1 : 0;
  if (auto v = get("probe_column"))
    e.kase.probe_column = parse_number<Eigen::Index>(path, "probe_column", *v);
  if (auto v = get("probe_source"))
    e.kase.probe_source = parse_number<Eigen::Index>(path, "probe_source", *v);
  e.label = get("label").value_or("");
  e.message = get("message").value_or("");
  e.workload = get("workload").value_or("");
  e.reproduce = get("reproduce").value_or("");
  return e;
}

std::vector<fs::path> corpus_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".h5") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace slaterlab
