#include "verify/inputs/config.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <toml++/toml.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>

#include "verify/inputs/molecule_experiment.hpp"
#include "verify/inputs/replay.hpp"
#include "verify/inputs/workload_registry.hpp"
#include "slaterlab/strategies/sampling/scheme.hpp"
#include "slaterlab/strategies/orbitals/cuda/device_orbitals.hpp"
#include "verify/inputs/strategy_config.hpp"
#include "verify/inputs/vmc_config.hpp"
#include "verify/inputs/suggest.hpp"
#include "verify/inputs/toml_access.hpp"
#include "verify/store/names.hpp"

namespace slaterlab {
namespace {

using namespace toml_access;

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
    "alpha", "rank",           "shift",          "repeats",  "rs",    "polarised",
    "orbitals", "grid",  "scheme", "spin", "cycles"};
const std::vector<std::string> kStrategyKeys = {"name",      "label", "precision", "recompute_every",
                                                "breakdown", "k",     "variant",   "library",
                                                "options"};
// Keys whose value may be a list: the entry expands to one per element
// (the cartesian product when several are lists).
const std::set<std::string> kExperimentListKeys = {"n",    "kappa", "workload", "mode", "delta",
                                                   "rs",   "orbitals", "scheme", "spin", "file", "cycles"};
const std::set<std::string> kStrategyListKeys = {"precision", "k", "variant", "recompute_every"};

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


/// workload = "replay": sets w.file (a relative path is taken relative to the
/// experiment file's directory, stored absolute) and reads N and M from it.
ReplayShape resolve_replay(const toml::table& t, WorkloadSpec& w, const std::string& source,
                           const std::string& where) {
  if (w.kind != "replay") fail(where, "'file' is only used with workload = \"replay\"");
  if (!t.contains("file")) fail(where, "workload \"replay\" needs 'file' (the HDF5 file to replay)");
  w.file = get_study_path(t, "file", source, where);
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
  // A replay or a molecule takes N (a replay also the moves) from its file.
  std::optional<ReplayShape> replay;
  std::optional<std::int64_t> file_n;
  if (w.kind == "molecule") {
    file_n = parse_molecule_experiment(t, w, source, where);
  } else if (w.kind == "replay" || t.contains("file")) {
    replay = resolve_replay(t, w, source, where);
    file_n = replay->n;
  }
  if (!t.contains("n") && !file_n) fail(where, "missing 'n' (matrix size)");
  const std::int64_t n = t.contains("n") ? get_int<std::int64_t>(t, "n", 0, where, {1, kMaxN})
                                         : *file_n;
  if (w.kind == "molecule" && n != *file_n)
    fail(where, fmt::format("'n' = {} but {} has {} spin-{} electrons (omit 'n')", n, w.file,
                            *file_n, w.spin));
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
  // Keys of one kind are refused for another, never silently ignored.
  const bool walk = w.kind == "slater" || w.kind == "electron-gas" || w.kind == "molecule";
  for (const char* key : {"rs", "polarised", "grid"})
    if (t.contains(key) && w.kind != "electron-gas")
      fail(where, fmt::format("'{}' applies to workload = \"electron-gas\" only", key));
  for (const char* key : {"spin", "cycles"})
    if (t.contains(key) && w.kind != "molecule")
      fail(where, fmt::format("'{}' applies to workload = \"molecule\" only", key));
  if (t.contains("orbitals") && w.kind != "electron-gas" && w.kind != "molecule")
    fail(where, "'orbitals' applies to workload = \"electron-gas\" and \"molecule\" only");
  if (t.contains("scheme") && !walk)
    fail(where, "'scheme' applies to the walks of workload = \"slater\", \"electron-gas\" and "
                "\"molecule\" only");
  w.rs = get_double(t, "rs", w.rs, where);
  w.polarised = get_bool(t, "polarised", w.polarised, where);
  w.orbitals = get_string(t, "orbitals", w.orbitals, where);
  w.grid = get_int<Eigen::Index>(t, "grid", w.grid, where, {0, kMaxGrid});
  w.scheme = get_string(t, "scheme", w.scheme, where);
  // A gas walk's natural step is the Wigner-Seitz radius, not small-step's delta.
  if (w.kind == "electron-gas" && !t.contains("delta")) w.delta = w.rs;

  std::string default_name =
      w.kind == "molecule" ? molecule_experiment_name(w) : fmt::format("{}-n{}", w.kind, n);
  if (w.kind == "randsvd" || w.kind == "randsvd-step") default_name += "-kappa" + number_text(w.kappa);
  if (w.kind == "electron-gas")
    default_name += "-rs" + number_text(w.rs) + (w.orbitals == "analytic" ? "" : "-" + w.orbitals);
  if (w.scheme != "pbp") default_name += "-" + w.scheme;
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
    if (w.kind == "electron-gas") {
      entry.insert("rs", w.rs);
      entry.insert("polarised", w.polarised);
      entry.insert("orbitals", w.orbitals);
      entry.insert("grid", std::int64_t(w.grid));
    }
    if (w.kind == "molecule") insert_molecule_keys(w, entry);
    if (w.scheme != "pbp") entry.insert("scheme", w.scheme);
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
  for (const auto& v : s.vmc) vmc.push_back(resolved_vmc(v));
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
      study.vmc.push_back(parse_vmc(t, study.seed, source, where));
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

  // A strategy that takes whole update cycles only (a version 2 kernel
  // without ratio, accept and reject) is refused for a workload of single
  // moves, before any work. A replay file's cycles are known when it is read.
  for (const auto& s : study.strategies) {
    if (strategy_traits(s.name, s.options).single_moves) continue;
    for (const auto& e : study.experiments) {
      const WorkloadSpec& w = e.workload;
      const auto cycle_kinds = known_cycle_workloads();
      const bool cycles =
          std::find(cycle_kinds.begin(), cycle_kinds.end(), w.kind) != cycle_kinds.end() ||
          w.scheme == "qs" || w.excitations || w.kind == "replay";
      if (!cycles) {
        fail(source, fmt::format("strategy '{}' takes whole update cycles only (its kernel has no "
                                 "ratio, accept or reject), but experiment '{}' makes single moves",
                                 s.label, e.name));
      }
    }
  }

  // Sizes a strategy declares it does not take (an external kernel's):
  // refused here, before any work, not met as a finding in the run.
  for (const auto& s : study.strategies) {
    const auto& refusal = strategy_traits(s.name).size_refusal;
    if (!refusal) continue;
    std::set<Eigen::Index> sizes;
    for (const auto& e : study.experiments) sizes.insert(e.workload.n);
    for (const Eigen::Index n : sizes) {
      std::string why;
      try {
        why = n > 0 ? refusal(n, s.options) : "";
      } catch (const std::invalid_argument& error) {
        why = error.what();
      }
      if (!why.empty()) fail(source, fmt::format("strategy '{}': {}", s.label, why));
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


}  // namespace slaterlab
