#include "verify/inputs/config.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <toml++/toml.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "verify/inputs/replay.hpp"
#include "slaterlab/strategies/sampling/scheme.hpp"
#include "slaterlab/strategies/orbitals/cuda/device_orbitals.hpp"
#include "verify/inputs/suggest.hpp"
#include "verify/store/names.hpp"

namespace slaterlab {
namespace {

// ---- keys -----------------------------------------------------------------

const std::vector<std::string> kRootKeys = {"study", "reference", "checks", "experiment",
                                            "strategy", "vmc"};
const std::vector<std::string> kStudyKeys = {"name", "description", "seed"};
const std::vector<std::string> kReferenceKeys = {"digits", "recompute_every", "certified_bits",
                                                 "certify", "per_move", "engine"};
const std::vector<std::string> kChecksKeys = {"sign_agreement", "max_ratio_error_normalised",
                                              "strategy_must_finish", "precisions", "max_z_exact",
                                              "delayed_within_guard_of_sm"};
const std::vector<std::string> kExperimentKeys = {
    "name",  "workload",       "n",          "moves",          "sweeps", "checkpoint_every",
    "seed",  "acceptance",     "acceptance_rate", "electron_order", "kappa", "mode",
    "delta", "eta",            "chain",          "hold",            "singular", "file",
    "alpha", "rank",           "shift",          "repeats"};
const std::vector<std::string> kVmcKeys = {
    "name",      "n",       "alpha",   "omega",           "orbitals",  "grid",
    "scheme",    "step",    "target_acceptance", "strategy", "precision", "k",
    "variant",   "recompute_every", "breakdown", "walkers",   "sweeps",   "equilibration",
    "seed",      "divergence"};
const std::set<std::string> kVmcListKeys = {"n", "alpha", "orbitals", "scheme", "grid",
                                            "step",   "strategy", "precision", "k"};
const std::vector<std::string> kOrbitalSets = {"analytic", "bspline-double", "bspline-float",
                                               "bspline-double-cuda", "bspline-float-cuda"};
const std::vector<std::string> kStrategyKeys = {"name",      "label", "precision", "recompute_every",
                                                "breakdown", "k",     "variant",   "library",
                                                "options"};
// Keys whose value may be a list: the entry expands to one per element
// (the cartesian product when several are lists).
const std::set<std::string> kExperimentListKeys = {"n", "kappa", "workload", "mode", "delta"};
const std::set<std::string> kStrategyListKeys = {"precision", "k", "variant", "recompute_every"};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ConfigError(where + ": " + what);
}

void check_keys(const toml::table& t, const std::vector<std::string>& allowed,
                const std::string& where) {
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      fail(where, "unknown key '" + k + "'" + suggestion_suffix(k, allowed));
    }
  }
}

// ---- typed access ----------------------------------------------------------

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "a list";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

/// Counts of moves and sweeps are at most 2^53, the largest integer a double
/// holds exactly: the plan, the rates and the statistics count in doubles, and
/// no run could do that many moves anyway.
constexpr std::int64_t kMaxCount = std::int64_t(1) << 53;
/// An N x N matrix of doubles must be addressable: 8 N^2 < 2^63.
constexpr std::int64_t kMaxN = (std::int64_t(1) << 30) - 1;
/// A B-spline grid's point count grid^3 must be a 64-bit index: grid < 2^21.
constexpr std::int64_t kMaxGrid = (std::int64_t(1) << 21) - 1;

/// The closed range an integer key may take; by default all of the type it
/// is stored in, so that no value is cut.
struct IntRange {
  std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  std::int64_t hi = std::numeric_limits<std::int64_t>::max();
};

/// Reads an integer key (the one reader of every integer key): a value
/// outside `range` or outside what T holds is refused, naming the key.
template <class T>
T get_int(const toml::table& t, const std::string& key, T fallback, const std::string& where,
          IntRange range = {}) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(std::int64_t));
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  const auto v = n->value_exact<std::int64_t>();
  if (!v) fail(where, "'" + key + "' must be an integer, got " + type_name(*n));
  if constexpr (std::is_signed_v<T>) {
    range.lo = std::max<std::int64_t>(range.lo, std::numeric_limits<T>::min());
    range.hi = std::min<std::int64_t>(range.hi, std::numeric_limits<T>::max());
  } else {
    range.lo = std::max<std::int64_t>(range.lo, 0);
    if constexpr (sizeof(T) < sizeof(std::int64_t)) {
      range.hi = std::min<std::int64_t>(range.hi, std::int64_t(std::numeric_limits<T>::max()));
    }
  }
  if (*v < range.lo || *v > range.hi) {
    fail(where, fmt::format("'{}' must be an integer in [{}, {}], got {}", key, range.lo, range.hi,
                            *v));
  }
  return T(*v);
}

/// A seed is any 64-bit pattern: TOML's signed integers stand for the
/// unsigned seeds bit for bit (the resolved form writes them that way).
std::uint64_t get_seed(const toml::table& t, const std::string& key, std::uint64_t fallback,
                       const std::string& where) {
  return std::uint64_t(get_int<std::int64_t>(t, key, std::int64_t(fallback), where));
}

/// The product of `factors` as a count of moves, refused (naming `what`)
/// above kMaxCount.
std::int64_t checked_count(std::initializer_list<std::int64_t> factors, const std::string& where,
                           const std::string& what) {
  std::int64_t product = 1;
  for (const std::int64_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product) || product > kMaxCount) {
      fail(where, fmt::format("{} is more than 2^53 = {} moves", what, kMaxCount));
    }
  }
  return product;
}

/// The range a floating-point key may take. Every number must be finite:
/// no key means anything at infinity or NaN.
struct NumberRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;

  bool contains(double x) const {
    return std::isfinite(x) && (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi);
  }
  std::string text() const {
    if (std::isfinite(lo) && std::isfinite(hi)) {
      return fmt::format("a number in {}{}, {}{}", lo_open ? "(" : "[", number(lo), number(hi),
                         hi_open ? ")" : "]");
    }
    if (std::isfinite(lo)) {
      return fmt::format("a finite number {} {}", lo_open ? ">" : ">=", number(lo));
    }
    if (std::isfinite(hi)) {
      return fmt::format("a finite number {} {}", hi_open ? "<" : "<=", number(hi));
    }
    return "a finite number";
  }
  static std::string number(double x) { return fmt::format("{:g}", x); }
};
constexpr NumberRange kAnyNumber{};
constexpr NumberRange kPositive{0.0, std::numeric_limits<double>::infinity(), true, false};
constexpr NumberRange kNonNegative{0.0, std::numeric_limits<double>::infinity(), false, false};
constexpr NumberRange kUnitInterval{0.0, 1.0, false, false};

/// Reads a floating-point key (an integer is taken as its value), refusing a
/// value outside `range`, infinities and NaN, naming the key.
double get_double(const toml::table& t, const std::string& key, double fallback,
                  const std::string& where, const NumberRange& range = kAnyNumber) {
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  if (!n->is_integer() && !n->is_floating_point()) {
    fail(where, "'" + key + "' must be a number, got " + type_name(*n));
  }
  const double x = *n->value<double>();
  if (!range.contains(x)) {
    fail(where, fmt::format("'{}' must be {}, got {}", key, range.text(), NumberRange::number(x)));
  }
  return x;
}

bool get_bool(const toml::table& t, const std::string& key, bool fallback,
              const std::string& where) {
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  if (auto v = n->value_exact<bool>()) return *v;
  fail(where, "'" + key + "' must be true or false, got " + type_name(*n));
}

std::string get_string(const toml::table& t, const std::string& key, const std::string& fallback,
                       const std::string& where) {
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  if (auto v = n->value_exact<std::string>()) return *v;
  fail(where, "'" + key + "' must be a string, got " + type_name(*n));
}

/// `text` with control characters written as \xNN, for a one-line message.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  return out;
}

/// Reads the name of an experiment, a VMC run or a strategy: it names an
/// HDF5 group in the results file, so it must be a name the store can
/// create, and it is printed in one-line messages and tables.
std::string get_name(const toml::table& t, const std::string& key, const std::string& fallback,
                     const std::string& where) {
  const std::string name = get_string(t, key, fallback, where);
  if (const auto why = group_name_problem(name)) {
    fail(where, fmt::format("'{}' = \"{}\" {}", key, printable(name), *why));
  }
  return name;
}

const toml::table* get_table(const toml::table& root, const std::string& key,
                             const std::string& source) {
  const toml::node* n = root.get(key);
  if (!n) return nullptr;
  if (!n->is_table()) fail(source, "'" + key + "' must be a table ([" + key + "])");
  return n->as_table();
}

// ---- input bounds ----------------------------------------------------------

/// An experiment file is a few KiB of text; this bound keeps a wrong file
/// (a results file, a log) from being read whole.
constexpr std::int64_t kMaxStudyBytes = 16 << 20;
/// A study nests at most 4 levels (root, [[experiment]], its table, a list
/// value); toml++ parses and destroys nested values recursively, so a deep
/// enough file (a dotted key of 50,000 parts) would overflow the stack.
constexpr std::size_t kMaxNesting = 64;

/// Refuses text longer than kMaxStudyBytes or nested deeper than kMaxNesting
/// levels (tables, arrays, inline tables and the parts of dotted keys, as
/// toml++ will nest them), naming the line, before toml++ sees it. A lexical
/// scan: strings and comments are skipped, anything else is left to toml++.
void check_input_bounds(const std::string& text, const std::string& source) {
  if (std::int64_t(text.size()) > kMaxStudyBytes) {
    fail(source, fmt::format("{} bytes, more than an experiment file may have ({})", text.size(),
                             kMaxStudyBytes));
  }
  struct Open {
    char close;               // ']' or '}'
    std::size_t base, parts;  // the enclosing level and its key's parts
  };
  std::vector<Open> open;
  std::size_t base = 0;   // level of the table the current key is in
  std::size_t parts = 1;  // parts of the dotted key being read
  bool in_value = false;  // after '=' (or an array element)
  bool header = false;    // inside [table] or [[array]]
  std::size_t line = 1;
  const auto check = [&](std::size_t depth) {
    if (depth > kMaxNesting) {
      fail(fmt::format("{}:{}", source, line),
           fmt::format("nested deeper than {} levels (tables, arrays, inline tables and dotted "
                       "keys); a study needs at most 4",
                       kMaxNesting));
    }
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      if (open.empty()) in_value = false, header = false, parts = 1;
    } else if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const bool triple = text.compare(i, 3, std::string(3, c)) == 0;
      i += triple ? 3 : 1;
      for (; i < text.size(); ++i) {
        if (text[i] == '\n') {
          if (!triple) break;  // malformed: toml++ says so
          ++line;
        } else if (text[i] == '\\' && c == '"') {
          ++i;
        } else if (text[i] == c && (!triple || text.compare(i, 3, std::string(3, c)) == 0)) {
          if (triple) i += 2;
          break;
        }
      }
      if (i < text.size() && text[i] == '\n') --i;  // counted by the loop
    } else if (!in_value && open.empty() && !header && c == '[') {
      header = true, base = 0, parts = 1;
      check(base + parts);
    } else if (header && c == ']') {
      header = false, base = parts, parts = 1;
      while (i + 1 < text.size() && text[i + 1] == ']') ++i;
    } else if (!in_value && c == '.') {
      check(base + ++parts);
    } else if (!in_value && c == '=') {
      in_value = true;
    } else if (in_value && (c == '[' || c == '{')) {
      open.push_back({c == '[' ? ']' : '}', base, parts});
      base += parts, parts = 1;
      check(base + 1);
      in_value = c == '[';
    } else if (!open.empty() && c == open.back().close) {
      base = open.back().base, parts = open.back().parts;
      open.pop_back();
      in_value = true;
    } else if (!open.empty() && c == ',') {
      in_value = open.back().close == ']';
      parts = 1;
    }
  }
}

// ---- list expansion --------------------------------------------------------

/// An entry's lists expand to at most this many experiments, VMC runs or
/// strategies: far beyond any study (each is a group of the results file),
/// and a bound on the memory the expansion itself takes.
constexpr std::size_t kMaxExpansion = 100000;
/// Repeats of one experiment entry (each a group of the results file).
constexpr std::int64_t kMaxRepeats = 1000;

/// Expands every list-valued key in `keys` into one table per combination.
std::vector<toml::table> expand(const toml::table& entry, const std::set<std::string>& keys,
                                const std::string& where) {
  std::size_t combinations = 1;
  for (const auto& key : keys) {
    const toml::node* n = entry.get(key);
    if (!n || !n->is_array()) continue;
    if (n->as_array()->empty()) fail(where, "'" + key + "' is an empty list");
    if (__builtin_mul_overflow(combinations, n->as_array()->size(), &combinations) ||
        combinations > kMaxExpansion) {
      fail(where, fmt::format("the lists expand to more than {} entries", kMaxExpansion));
    }
  }
  std::vector<toml::table> out{entry};
  for (const auto& key : keys) {
    const toml::node* n = entry.get(key);
    if (!n || !n->is_array()) continue;
    std::vector<toml::table> next;
    for (const auto& partial : out) {
      for (const auto& element : *n->as_array()) {
        toml::table t = partial;
        t.insert_or_assign(key, element);
        next.push_back(std::move(t));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::vector<toml::table> entries(const toml::table& root, const std::string& key,
                                 const std::string& source) {
  std::vector<toml::table> out;
  const toml::node* n = root.get(key);
  if (!n) return out;
  const toml::array* array = n->as_array();
  if (array && array->empty()) return out;  // e.g. the resolved form of a study without them
  if (!array || !array->is_array_of_tables()) {
    fail(source, "'" + key + "' must be an array of tables ([[" + key + "]])");
  }
  for (const auto& element : *array) out.push_back(*element.as_table());
  return out;
}

// ---- overrides -------------------------------------------------------------

toml::node_view<toml::node> parse_value_holder(toml::table& holder, const std::string& value) {
  const std::string text = "v = " + value;
  check_input_bounds(text, "--set value");
  try {
    holder = toml::parse(text);
  } catch (const toml::parse_error&) {
    holder = toml::table{{"v", value}};  // not a TOML literal: take it as a bare string
  }
  return holder["v"];
}

void apply_override(toml::table& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError("--set '" + assignment + "': expected key=value");
  }
  const std::string path = assignment.substr(0, eq);
  toml::table holder;
  toml::node& value = *parse_value_holder(holder, assignment.substr(eq + 1)).node();

  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) parts.push_back(part);
  if (parts.size() != 2) {
    throw ConfigError("--set '" + path + "': expected section.key (e.g. reference.digits)");
  }
  const auto& [section, key] = std::pair{parts[0], parts[1]};
  if (std::find(kRootKeys.begin(), kRootKeys.end(), section) == kRootKeys.end()) {
    throw ConfigError("--set: unknown section '" + section + "'" +
                      suggestion_suffix(section, kRootKeys));
  }
  if (section == "experiment" || section == "strategy" || section == "vmc") {
    toml::array* array = root[section].as_array();
    if (!array || array->empty()) {
      throw ConfigError("--set " + path + ": the study has no [[" + section + "]] entries");
    }
    for (auto& element : *array) element.as_table()->insert_or_assign(key, value);
  } else {
    if (!root.contains(section)) root.insert(section, toml::table{});
    root[section].as_table()->insert_or_assign(key, value);
  }
}

// ---- sections --------------------------------------------------------------

std::uint64_t mix_seed(std::uint64_t seed, const std::string& name) {
  // FNV-1a of the name, folded into the study seed: an experiment keeps its
  // stream when others are added or reordered.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

std::string number_text(double x) { return fmt::format("{:g}", x); }

/// workload = "replay": sets w.file (a relative path is taken relative to the
/// experiment file's directory, stored absolute) and reads N and M from it.
ReplayShape resolve_replay(const toml::table& t, WorkloadSpec& w, const std::string& source,
                           const std::string& where) {
  if (w.kind != "replay") fail(where, "'file' is only used with workload = \"replay\"");
  if (!t.contains("file")) fail(where, "workload \"replay\" needs 'file' (the HDF5 file to replay)");
  std::filesystem::path file = get_string(t, "file", "", where);
  if (file.is_relative()) file = std::filesystem::path(source).parent_path() / file;
  w.file = std::filesystem::absolute(file).lexically_normal().string();
  try {
    return read_replay_shape(w.file);
  } catch (const ReplayError& error) {
    fail(where, error.what());
  }
}

/// `repeat` > 0: the repeat's index (1-based), appended to the name as
/// "-r<repeat>" before the seed is derived from the name.
ExperimentConfig parse_experiment(const toml::table& t, const StudyConfig& study,
                                  const std::string& source, const std::string& where,
                                  std::int64_t repeat) {
  ExperimentConfig e;
  WorkloadSpec& w = e.workload;
  w.kind = get_string(t, "workload", "gaussian", where);
  // A replay takes N (and by default the number of moves) from its file.
  std::optional<ReplayShape> replay;
  if (w.kind == "replay" || t.contains("file")) replay = resolve_replay(t, w, source, where);
  if (!t.contains("n") && !replay) fail(where, "missing 'n' (matrix size)");
  const std::int64_t n = t.contains("n") ? get_int<std::int64_t>(t, "n", 0, where, {1, kMaxN})
                                         : replay->n;
  if (replay && n != replay->n) {
    fail(where, fmt::format("'n' = {} does not match N = {} of the replay file {} (omit 'n')", n,
                            replay->n, w.file));
  }
  if (n < 1 || n > kMaxN) fail(where, fmt::format("N = {} is outside [1, {}]", n, kMaxN));
  w.n = n;
  w.electron_order = get_string(t, "electron_order", w.electron_order, where);
  // The workload checks the ranges of its own parameters (make_workload below).
  w.kappa = get_double(t, "kappa", w.kappa, where);
  w.mode = get_string(t, "mode", w.mode, where);
  w.delta = get_double(t, "delta", w.delta, where);
  w.eta = get_double(t, "eta", w.eta, where);
  w.alpha = get_double(t, "alpha", w.alpha, where);
  w.chain = get_int<Eigen::Index>(t, "chain", w.chain, where, {1, kMaxN});
  w.hold = get_int<Eigen::Index>(t, "hold", w.hold, where, {0, kMaxCount});
  w.rank = get_int<Eigen::Index>(t, "rank", w.rank, where, {1, kMaxN});
  w.shift = get_double(t, "shift", w.shift, where, NumberRange{0.0, 1.0});
  w.singular = get_bool(t, "singular", w.singular, where);

  std::string default_name = fmt::format("{}-n{}", w.kind, n);
  if (w.kind == "randsvd" || w.kind == "randsvd-step") default_name += "-kappa" + number_text(w.kappa);
  e.name = get_name(t, "name", default_name, where);
  if (repeat > 0) e.name += fmt::format("-r{}", repeat);

  if (t.contains("moves") && t.contains("sweeps")) fail(where, "give 'moves' or 'sweeps', not both");
  if (t.contains("moves")) {
    e.moves = get_int<std::int64_t>(t, "moves", 0, where, {0, kMaxCount});
  } else if (t.contains("sweeps") || !replay) {
    const auto sweeps = get_int<std::int64_t>(t, "sweeps", 2, where, {0, kMaxCount});
    e.moves = checked_count({sweeps, n}, where, fmt::format("'sweeps' = {} of n = {}", sweeps, n));
  } else {
    e.moves = replay->moves;
    if (e.moves > kMaxCount) {
      fail(where, fmt::format("the replay file {} holds {} moves, more than 2^53: give 'moves'",
                              w.file, e.moves));
    }
  }
  if (replay && e.moves > replay->moves) {
    fail(where, fmt::format("'moves' = {} but the replay file {} holds {} moves", e.moves, w.file,
                            replay->moves));
  }
  e.checkpoint_every = get_int<std::int64_t>(t, "checkpoint_every", n, where, {1, kMaxCount});
  e.acceptance = get_string(t, "acceptance", e.acceptance, where);
  if (e.acceptance != "metropolis" && e.acceptance != "forced") {
    fail(where, "'acceptance' must be \"metropolis\" or \"forced\", got \"" + e.acceptance + "\"" +
                    suggestion_suffix(e.acceptance, {"metropolis", "forced"}));
  }
  if (!study.reference.per_move && e.acceptance != "forced") {
    fail(where, "[reference] per_move = false (checkpoint-only references) computes no ratio to "
                "decide a Metropolis move: set acceptance = \"forced\"");
  }
  e.acceptance_rate = get_double(t, "acceptance_rate", e.acceptance_rate, where, kUnitInterval);
  w.seed = get_seed(t, "seed", mix_seed(study.seed, e.name), where);
  // Validates kind and parameters with the workload's own messages. A replay
  // file's data is read later, once the study is known to fit in memory
  // (check_before_running, verify/run/plan.hpp): its shape, read above, is all
  // the plan needs, and the data of a file too large must never be loaded.
  if (w.kind != "replay") {
    try {
      make_workload(w);
    } catch (const std::invalid_argument& error) {
      fail(where, error.what());
    }
  }
  return e;
}

/// `library` (relative to the study file) and `options` (a table of
/// scalars, passed through as text) of a strategy that loads a library.
void parse_library(const toml::table& t, const std::string& name, const std::string& source,
                   UpdaterOptions& o, const std::string& where) {
  const bool loads = strategy_traits(name).loads_library;
  if (!loads) {
    for (const char* key : {"library", "options"})
      if (t.contains(key)) fail(where, fmt::format("'{}' applies only to external kernels", key));
    return;
  }
  std::filesystem::path library = get_string(t, "library", "", where);
  if (library.empty()) fail(where, "missing 'library' (the kernel's shared library)");
  if (library.is_relative()) library = std::filesystem::path(source).parent_path() / library;
  o.library = library.lexically_normal().string();
  const toml::node* options = t.get("options");
  if (!options) return;
  if (!options->is_table()) fail(where, "'options' must be a table of key = value");
  for (auto&& [key, value] : *options->as_table()) {
    const std::string k(key.str());
    if (value.is_string()) {
      o.kernel_options.emplace_back(k, value.value<std::string>().value_or(""));
    } else if (value.is_table() || value.is_array()) {
      fail(where, fmt::format("'options.{}' must be a number, a string or a boolean", k));
    } else {
      std::ostringstream text;
      value.visit([&](auto&& scalar) { text << scalar; });
      o.kernel_options.emplace_back(k, text.str());
    }
  }
}

StrategyConfig parse_strategy(const toml::table& t, const std::string& source,
                              const std::string& where) {
  StrategyConfig s;
  s.name = get_string(t, "name", "", where);
  if (s.name.empty()) fail(where, "missing 'name' (one of the strategies)");
  if (const auto why = strategy_unavailable(s.name)) fail(where, *why);
  const auto known = known_strategies();
  if (std::find(known.begin(), known.end(), s.name) == known.end()) {
    fail(where, "unknown strategy '" + s.name + "'" + suggestion_suffix(s.name, known));
  }
  UpdaterOptions& o = s.options;
  try {
    o.precision = parse_precision(get_string(t, "precision", "double", where));
  } catch (const std::invalid_argument& error) {
    fail(where, error.what());
  }
  parse_library(t, s.name, source, o, where);
  o.recompute_every = get_int<int>(t, "recompute_every", o.recompute_every, where, {0});
  double default_breakdown = 0;
  try {
    default_breakdown = strategy_traits(s.name, o).default_breakdown;
  } catch (const std::invalid_argument& error) {
    fail(where, error.what());
  }
  o.breakdown = get_double(t, "breakdown", default_breakdown, where, kNonNegative);
  o.k = get_int<int>(t, "k", o.k, where, {1});
  o.variant = get_string(t, "variant", o.variant, where);
  std::string default_label;
  try {
    default_label = make_updater(s.name, o)->label();
  } catch (const std::invalid_argument& error) {
    fail(where, error.what());
  }
  s.label = get_name(t, "label", default_label, where);
  return s;
}

VmcRunConfig parse_vmc(const toml::table& t, const StudyConfig& study, const std::string& where) {
  VmcRunConfig v;
  if (!t.contains("n")) fail(where, "missing 'n' (electrons)");
  const auto n = get_int<std::int64_t>(t, "n", 0, where, {1, kMaxN});
  v.n = n;
  v.alpha = get_double(t, "alpha", v.alpha, where, kPositive);
  v.omega = get_double(t, "omega", v.omega, where, kPositive);
  v.orbitals = get_string(t, "orbitals", v.orbitals, where);
  if (std::find(kOrbitalSets.begin(), kOrbitalSets.end(), v.orbitals) == kOrbitalSets.end()) {
    fail(where, "unknown orbitals '" + v.orbitals + "'" + suggestion_suffix(v.orbitals, kOrbitalSets));
  }
  if (const auto why = orbital_set_unavailable(v.orbitals)) fail(where, *why);
  // The table has grid^3 x n entries: a grid whose cube overflows is refused
  // here, a large one by the plan (memory).
  v.grid = get_int<Eigen::Index>(t, "grid", 0, where, {0, kMaxGrid});
  if (v.grid != 0 && v.grid < 4) fail(where, "'grid' must be 0 (default rule) or >= 4");
  v.scheme = get_string(t, "scheme", v.scheme, where);
  const auto schemes = known_schemes();
  if (std::find(schemes.begin(), schemes.end(), v.scheme) == schemes.end()) {
    fail(where, "unknown scheme '" + v.scheme + "'" + suggestion_suffix(v.scheme, schemes));
  }
  v.step = get_double(t, "step", v.step, where, kPositive);
  // 0: a fixed step; a target of 1 would grow the step for ever.
  v.target_acceptance = get_double(t, "target_acceptance", v.target_acceptance, where,
                                   NumberRange{0.0, 1.0, false, true});
  v.walkers = get_int<int>(t, "walkers", v.walkers, where, {1});
  v.sweeps = get_int<std::int64_t>(t, "sweeps", v.sweeps, where, {1, kMaxCount});
  v.equilibration =
      get_int<std::int64_t>(t, "equilibration", v.equilibration, where, {0, kMaxCount});
  // Every walker moves each of its n electrons once per sweep.
  const std::int64_t sweeps = v.sweeps + v.equilibration;  // <= 2^54: no overflow
  checked_count({sweeps, v.walkers, n}, where,
                fmt::format("'sweeps' + 'equilibration' = {} sweeps of 'walkers' = {} walkers of "
                            "n = {} electrons",
                            sweeps, v.walkers, n));
  v.divergence = get_bool(t, "divergence", v.divergence, where);
  toml::table strategy{{"name", get_string(t, "strategy", baseline_strategy(), where)}};
  for (const char* key : {"precision", "k", "variant", "recompute_every", "breakdown"}) {
    if (const toml::node* node = t.get(key)) strategy.insert(key, *node);
  }
  v.strategy = parse_strategy(strategy, "", where);  // a VMC strategy loads no library
  std::string default_name = fmt::format("{}-{}{}-{}-n{}-alpha{}-step{}", v.scheme, v.orbitals,
                                         v.grid ? fmt::format("-grid{}", v.grid) : "",
                                         v.strategy.label, n, number_text(v.alpha),
                                         number_text(v.step));
  v.name = get_name(t, "name", default_name, where);
  v.seed = get_seed(t, "seed", mix_seed(study.seed, v.name), where);
  return v;
}

void parse_reference(const toml::table* t, ReferenceConfig& r, const std::string& source) {
  if (!t) return;
  const std::string where = source + ": [reference]";
  check_keys(*t, kReferenceKeys, where);
  const auto digits = get_int<std::int64_t>(*t, "digits", r.digits, where);
  if (digits != 50 && digits != 100) {
    fail(where, fmt::format("'digits' must be 50 or 100, got {}", digits));
  }
  r.digits = int(digits);
  r.recompute_every = get_int<int>(*t, "recompute_every", r.recompute_every, where, {0});
  r.certified_bits = get_int<long>(*t, "certified_bits", r.certified_bits, where, {32});
  r.certify = get_bool(*t, "certify", r.certify, where);
  r.per_move = get_bool(*t, "per_move", r.per_move, where);
  r.engine = get_string(*t, "engine", r.engine, where);
  if (r.engine != "auto" && r.engine != "mp" && r.engine != "fast")
    fail(where, "'engine' must be \"auto\", \"mp\" or \"fast\", got \"" + r.engine + "\"");
}

void parse_checks(const toml::table* t, ChecksConfig& c, const std::string& source) {
  if (!t) return;
  const std::string where = source + ": [checks]";
  check_keys(*t, kChecksKeys, where);
  c.sign_agreement = get_bool(*t, "sign_agreement", c.sign_agreement, where);
  c.strategy_must_finish = get_bool(*t, "strategy_must_finish", c.strategy_must_finish, where);
  c.delayed_within_guard_of_sm =
      get_bool(*t, "delayed_within_guard_of_sm", c.delayed_within_guard_of_sm, where);
  if (t->contains("max_z_exact")) {
    c.max_z_exact = get_double(*t, "max_z_exact", 0.0, where, kNonNegative);
  }
  if (t->contains("max_ratio_error_normalised")) {
    c.max_ratio_error_normalised =
        get_double(*t, "max_ratio_error_normalised", 0.0, where, kNonNegative);
  }
  if (const toml::node* p = t->get("precisions")) {
    const toml::array* a = p->as_array();
    if (!a) fail(where, "'precisions' must be a list of strings");
    for (const auto& v : *a) {
      auto s = v.value<std::string>();
      if (!s) fail(where, "'precisions' must be a list of strings");
      try {
        parse_precision(*s);
      } catch (const std::invalid_argument& error) {
        fail(where, error.what());
      }
      c.precisions.push_back(*s);
    }
  }
}

// ---- resolved form ---------------------------------------------------------

toml::table resolved(const StudyConfig& s) {
  toml::array experiments;
  for (const auto& e : s.experiments) {
    const WorkloadSpec& w = e.workload;
    toml::table entry{
        {"name", e.name}, {"workload", w.kind}, {"n", std::int64_t(w.n)},
        {"moves", e.moves}, {"checkpoint_every", e.checkpoint_every},
        {"seed", std::int64_t(w.seed)}, {"acceptance", e.acceptance},
        {"acceptance_rate", e.acceptance_rate}, {"electron_order", w.electron_order},
        {"kappa", w.kappa}, {"mode", w.mode}, {"delta", w.delta}, {"eta", w.eta},
        {"chain", std::int64_t(w.chain)}, {"hold", std::int64_t(w.hold)}, {"alpha", w.alpha},
        {"rank", std::int64_t(w.rank)}, {"shift", w.shift}, {"singular", w.singular}};
    if (!w.file.empty()) entry.insert("file", w.file);
    experiments.push_back(std::move(entry));
  }
  toml::array strategies;
  for (const auto& st : s.strategies) {
    const UpdaterOptions& o = st.options;
    toml::table entry{
        {"label", st.label}, {"name", st.name},
        {"precision", std::string(to_string(o.precision))},
        {"recompute_every", std::int64_t(o.recompute_every)}, {"breakdown", o.breakdown},
        {"k", std::int64_t(o.k)}, {"variant", o.variant}};
    if (!o.library.empty()) {
      entry.insert("library", o.library);
      toml::table options;
      for (const auto& [key, value] : o.kernel_options) options.insert(key, value);
      entry.insert("options", options);
    }
    strategies.push_back(std::move(entry));
  }
  toml::array vmc;
  for (const auto& v : s.vmc) {
    const UpdaterOptions& o = v.strategy.options;
    vmc.push_back(toml::table{
        {"name", v.name}, {"n", std::int64_t(v.n)}, {"alpha", v.alpha}, {"omega", v.omega},
        {"orbitals", v.orbitals}, {"grid", std::int64_t(v.grid)}, {"scheme", v.scheme},
        {"step", v.step}, {"target_acceptance", v.target_acceptance},
        {"strategy", v.strategy.name}, {"precision", std::string(to_string(o.precision))},
        {"k", std::int64_t(o.k)}, {"variant", o.variant},
        {"recompute_every", std::int64_t(o.recompute_every)}, {"breakdown", o.breakdown},
        {"walkers", v.walkers}, {"sweeps", v.sweeps}, {"equilibration", v.equilibration},
        {"seed", std::int64_t(v.seed)}, {"divergence", v.divergence}});
  }
  toml::array precisions;
  for (const auto& p : s.checks.precisions) precisions.push_back(p);
  toml::table checks{{"sign_agreement", s.checks.sign_agreement},
                     {"strategy_must_finish", s.checks.strategy_must_finish},
                     {"delayed_within_guard_of_sm", s.checks.delayed_within_guard_of_sm},
                     {"precisions", precisions}};
  if (s.checks.max_ratio_error_normalised) {
    checks.insert("max_ratio_error_normalised", *s.checks.max_ratio_error_normalised);
  }
  if (s.checks.max_z_exact) checks.insert("max_z_exact", *s.checks.max_z_exact);
  return toml::table{
      {"study", toml::table{{"name", s.name}, {"description", s.description},
                            {"seed", std::int64_t(s.seed)}}},
      {"reference", toml::table{{"digits", s.reference.digits},
                                {"recompute_every", s.reference.recompute_every},
                                {"certified_bits", std::int64_t(s.reference.certified_bits)},
                                {"per_move", s.reference.per_move},
                                {"certify", s.reference.certify}}},
      {"checks", checks},
      {"experiment", experiments},
      {"strategy", strategies},
      {"vmc", vmc}};
}

}  // namespace

StudyConfig parse_study(const std::string& toml_text, const std::string& source,
                        const std::vector<std::string>& overrides) {
  check_input_bounds(toml_text, source);
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& error) {
    throw ConfigError(fmt::format("{}:{}:{}: malformed TOML: {}", source,
                                  error.source().begin.line, error.source().begin.column,
                                  error.description()));
  }
  for (const auto& o : overrides) apply_override(root, o);
  check_keys(root, kRootKeys, source);

  StudyConfig study;
  if (const toml::table* t = get_table(root, "study", source)) {
    const std::string where = source + ": [study]";
    check_keys(*t, kStudyKeys, where);
    study.name = get_string(*t, "name", study.name, where);
    study.description = get_string(*t, "description", "", where);
    study.seed = get_seed(*t, "seed", study.seed, where);
  }
  parse_reference(get_table(root, "reference", source), study.reference, source);
  parse_checks(get_table(root, "checks", source), study.checks, source);

  const auto vmc_entries = entries(root, "vmc", source);
  for (std::size_t i = 0; i < vmc_entries.size(); ++i) {
    const std::string where = fmt::format("{}: vmc[{}]", source, i);
    check_keys(vmc_entries[i], kVmcKeys, where);
    for (const auto& t : expand(vmc_entries[i], kVmcListKeys, where)) {
      study.vmc.push_back(parse_vmc(t, study, where));
    }
  }
  const auto experiment_entries = entries(root, "experiment", source);
  if (experiment_entries.empty() && vmc_entries.empty()) {
    fail(source, "no [[experiment]] or [[vmc]] defined");
  }
  for (std::size_t i = 0; i < experiment_entries.size(); ++i) {
    const std::string where = fmt::format("{}: experiment[{}]", source, i);
    check_keys(experiment_entries[i], kExperimentKeys, where);
    // Repeats differ only in their seed, derived from each repeat's name,
    // so a repeat's stream never depends on how many repeats there are.
    const toml::table& entry = experiment_entries[i];
    const auto repeats = get_int<std::int64_t>(entry, "repeats", 1, where, {1, kMaxRepeats});
    if (repeats > 1 && entry.contains("seed")) {
      fail(where, "'repeats' derives each repeat's seed from its name: omit 'seed'");
    }
    const auto expanded = expand(entry, kExperimentListKeys, where);
    if (expanded.size() * std::size_t(repeats) > kMaxExpansion) {
      fail(where, fmt::format("the lists and 'repeats' expand to more than {} experiments",
                              kMaxExpansion));
    }
    // A single run keeps its plain name (repeat index 0: no suffix).
    const std::int64_t first = repeats > 1 ? 1 : 0, last = repeats > 1 ? repeats : 0;
    for (const auto& t : expanded) {
      for (std::int64_t r = first; r <= last; ++r) {
        study.experiments.push_back(parse_experiment(t, study, source, where, r));
      }
    }
  }
  const auto strategy_entries = entries(root, "strategy", source);
  if (strategy_entries.empty() && !experiment_entries.empty()) {
    fail(source, "no [[strategy]] defined for the [[experiment]] entries");
  }
  for (std::size_t i = 0; i < strategy_entries.size(); ++i) {
    const std::string where = fmt::format("{}: strategy[{}]", source, i);
    check_keys(strategy_entries[i], kStrategyKeys, where);
    for (const auto& t : expand(strategy_entries[i], kStrategyListKeys, where)) {
      study.strategies.push_back(parse_strategy(t, source, where));
    }
  }

  std::set<std::string> seen;
  for (const auto& e : study.experiments) {
    if (!seen.insert("e:" + e.name).second) {
      fail(source, "two experiments are named '" + e.name + "': give each a distinct 'name'");
    }
  }
  for (const auto& v : study.vmc) {
    if (!seen.insert("v:" + v.name).second) {
      fail(source, "two VMC runs are named '" + v.name + "': give each a distinct 'name'");
    }
  }
  for (const auto& s : study.strategies) {
    if (!seen.insert("s:" + s.label).second) {
      fail(source, "two strategies are labelled '" + s.label + "': give each a distinct 'label'");
    }
  }
  std::ostringstream out;
  out << resolved(study);
  study.resolved_toml = out.str();
  return study;
}

StudyConfig load_study(const std::string& path, const std::vector<std::string>& overrides) {
  if (path.empty()) throw ConfigError("the experiment file path is empty");
  // stat first: opening a FIFO or a device could block or never end.
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw ConfigError(path + ": cannot open experiment file (" + std::strerror(errno) + ")");
  }
  if (S_ISDIR(info.st_mode)) throw ConfigError(path + ": is a directory, not an experiment file");
  if (!S_ISREG(info.st_mode)) {
    throw ConfigError(path + ": not a regular file (an experiment file is a TOML text file)");
  }
  if (info.st_size > kMaxStudyBytes) {
    throw ConfigError(fmt::format("{}: {} bytes, more than an experiment file may have ({})", path,
                                  info.st_size, kMaxStudyBytes));
  }
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open experiment file (" + std::strerror(errno) + ")");
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    throw ConfigError(path + ": cannot read experiment file (" + std::strerror(errno) + ")");
  }
  return parse_study(buffer.str(), path, overrides);
}

VmcConfig sampler_config(const VmcRunConfig& v) {
  VmcConfig c;
  c.scheme = parse_scheme(v.scheme);
  c.omega = v.omega;
  c.walkers = v.walkers;
  c.initial_width = 1.0 / std::sqrt(v.alpha);
  c.equilibration_sweeps = v.equilibration;
  c.sweeps = v.sweeps;
  c.step = v.step;
  c.tune_step = v.target_acceptance > 0;
  if (c.tune_step) c.tuner.target = v.target_acceptance;
  return c;
}

}  // namespace slaterlab
