#include "verify/inputs/config.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "verify/inputs/replay.hpp"
#include "slaterlab/strategies/sampling/scheme.hpp"
#include "slaterlab/strategies/orbitals/cuda/device_orbitals.hpp"
#include "verify/inputs/suggest.hpp"

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
    "alpha"};
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
                                                "breakdown", "k",     "variant"};
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

std::int64_t get_int(const toml::table& t, const std::string& key, std::int64_t fallback,
                     const std::string& where) {
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  if (auto v = n->value_exact<std::int64_t>()) return *v;
  fail(where, "'" + key + "' must be an integer, got " + type_name(*n));
}

double get_double(const toml::table& t, const std::string& key, double fallback,
                  const std::string& where) {
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  if (n->is_integer() || n->is_floating_point()) return *n->value<double>();
  fail(where, "'" + key + "' must be a number, got " + type_name(*n));
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

const toml::table* get_table(const toml::table& root, const std::string& key,
                             const std::string& source) {
  const toml::node* n = root.get(key);
  if (!n) return nullptr;
  if (!n->is_table()) fail(source, "'" + key + "' must be a table ([" + key + "])");
  return n->as_table();
}

// ---- list expansion --------------------------------------------------------

/// Expands every list-valued key in `keys` into one table per combination.
std::vector<toml::table> expand(const toml::table& entry, const std::set<std::string>& keys) {
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
  try {
    holder = toml::parse("v = " + value);
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

ExperimentConfig parse_experiment(const toml::table& t, const StudyConfig& study,
                                  const std::string& source, const std::string& where) {
  ExperimentConfig e;
  WorkloadSpec& w = e.workload;
  w.kind = get_string(t, "workload", "gaussian", where);
  // A replay takes N (and by default the number of moves) from its file.
  std::optional<ReplayShape> replay;
  if (w.kind == "replay" || t.contains("file")) replay = resolve_replay(t, w, source, where);
  const std::int64_t n = replay && !t.contains("n") ? replay->n : get_int(t, "n", 0, where);
  if (!t.contains("n") && !replay) fail(where, "missing 'n' (matrix size)");
  if (n < 1) fail(where, fmt::format("'n' must be >= 1, got {}", n));
  if (replay && n != replay->n) {
    fail(where, fmt::format("'n' = {} does not match N = {} of the replay file {} (omit 'n')", n,
                            replay->n, w.file));
  }
  w.n = n;
  w.electron_order = get_string(t, "electron_order", w.electron_order, where);
  w.kappa = get_double(t, "kappa", w.kappa, where);
  w.mode = get_string(t, "mode", w.mode, where);
  w.delta = get_double(t, "delta", w.delta, where);
  w.eta = get_double(t, "eta", w.eta, where);
  w.alpha = get_double(t, "alpha", w.alpha, where);
  w.chain = get_int(t, "chain", w.chain, where);
  w.hold = get_int(t, "hold", w.hold, where);
  w.singular = get_bool(t, "singular", w.singular, where);

  std::string default_name = fmt::format("{}-n{}", w.kind, n);
  if (w.kind == "randsvd" || w.kind == "randsvd-step") default_name += "-kappa" + number_text(w.kappa);
  e.name = get_string(t, "name", default_name, where);

  if (t.contains("moves") && t.contains("sweeps")) fail(where, "give 'moves' or 'sweeps', not both");
  const std::int64_t sweeps = get_int(t, "sweeps", 2, where);
  e.moves = t.contains("moves") ? get_int(t, "moves", 0, where) : sweeps * n;
  if (e.moves < 0) fail(where, fmt::format("'moves' must be >= 0, got {}", e.moves));
  if (replay && !t.contains("moves") && !t.contains("sweeps")) e.moves = replay->moves;
  if (replay && e.moves > replay->moves) {
    fail(where, fmt::format("'moves' = {} but the replay file {} holds {} moves", e.moves, w.file,
                            replay->moves));
  }
  e.checkpoint_every = get_int(t, "checkpoint_every", n, where);
  if (e.checkpoint_every < 1) fail(where, "'checkpoint_every' must be >= 1");
  e.acceptance = get_string(t, "acceptance", e.acceptance, where);
  if (e.acceptance != "metropolis" && e.acceptance != "forced") {
    fail(where, "'acceptance' must be \"metropolis\" or \"forced\", got \"" + e.acceptance + "\"" +
                    suggestion_suffix(e.acceptance, {"metropolis", "forced"}));
  }
  if (!study.reference.per_move && e.acceptance != "forced") {
    fail(where, "[reference] per_move = false (checkpoint-only references) computes no ratio to "
                "decide a Metropolis move: set acceptance = \"forced\"");
  }
  e.acceptance_rate = get_double(t, "acceptance_rate", e.acceptance_rate, where);
  if (!(e.acceptance_rate >= 0.0 && e.acceptance_rate <= 1.0)) {
    fail(where, "'acceptance_rate' must lie in [0, 1]");
  }
  w.seed = t.contains("seed") ? std::uint64_t(get_int(t, "seed", 0, where))
                              : mix_seed(study.seed, e.name);
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

StrategyConfig parse_strategy(const toml::table& t, const std::string& where) {
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
  o.recompute_every = int(get_int(t, "recompute_every", o.recompute_every, where));
  o.breakdown = get_double(t, "breakdown", s.name == "splitting" ? 1e-3 : o.breakdown, where);
  o.k = int(get_int(t, "k", o.k, where));
  o.variant = get_string(t, "variant", o.variant, where);
  try {
    s.label = get_string(t, "label", make_updater(s.name, o)->label(), where);
  } catch (const std::invalid_argument& error) {
    fail(where, error.what());
  }
  return s;
}

VmcRunConfig parse_vmc(const toml::table& t, const StudyConfig& study, const std::string& where) {
  VmcRunConfig v;
  const std::int64_t n = get_int(t, "n", 0, where);
  if (!t.contains("n")) fail(where, "missing 'n' (electrons)");
  if (n < 1) fail(where, fmt::format("'n' must be >= 1, got {}", n));
  v.n = n;
  v.alpha = get_double(t, "alpha", v.alpha, where);
  v.omega = get_double(t, "omega", v.omega, where);
  if (!(v.alpha > 0) || !(v.omega > 0)) fail(where, "'alpha' and 'omega' must be > 0");
  v.orbitals = get_string(t, "orbitals", v.orbitals, where);
  if (std::find(kOrbitalSets.begin(), kOrbitalSets.end(), v.orbitals) == kOrbitalSets.end()) {
    fail(where, "unknown orbitals '" + v.orbitals + "'" + suggestion_suffix(v.orbitals, kOrbitalSets));
  }
  if (const auto why = orbital_set_unavailable(v.orbitals)) fail(where, *why);
  v.grid = get_int(t, "grid", 0, where);
  if (v.grid != 0 && v.grid < 4) fail(where, "'grid' must be 0 (default rule) or >= 4");
  v.scheme = get_string(t, "scheme", v.scheme, where);
  const auto schemes = known_schemes();
  if (std::find(schemes.begin(), schemes.end(), v.scheme) == schemes.end()) {
    fail(where, "unknown scheme '" + v.scheme + "'" + suggestion_suffix(v.scheme, schemes));
  }
  v.step = get_double(t, "step", v.step, where);
  v.target_acceptance = get_double(t, "target_acceptance", v.target_acceptance, where);
  if (!(v.step > 0)) fail(where, "'step' must be > 0");
  if (!(v.target_acceptance >= 0 && v.target_acceptance < 1)) {
    fail(where, "'target_acceptance' must lie in [0, 1) (0: fixed step)");
  }
  v.walkers = int(get_int(t, "walkers", v.walkers, where));
  v.sweeps = get_int(t, "sweeps", v.sweeps, where);
  v.equilibration = get_int(t, "equilibration", v.equilibration, where);
  if (v.walkers < 1 || v.sweeps < 1 || v.equilibration < 0) {
    fail(where, "'walkers' and 'sweeps' must be >= 1, 'equilibration' >= 0");
  }
  v.divergence = get_bool(t, "divergence", v.divergence, where);
  toml::table strategy{{"name", get_string(t, "strategy", "sm", where)}};
  for (const char* key : {"precision", "k", "variant", "recompute_every", "breakdown"}) {
    if (const toml::node* node = t.get(key)) strategy.insert(key, *node);
  }
  v.strategy = parse_strategy(strategy, where);
  std::string default_name = fmt::format("{}-{}{}-{}-n{}-alpha{}-step{}", v.scheme, v.orbitals,
                                         v.grid ? fmt::format("-grid{}", v.grid) : "",
                                         v.strategy.label, n, number_text(v.alpha),
                                         number_text(v.step));
  v.name = get_string(t, "name", default_name, where);
  v.seed = t.contains("seed") ? std::uint64_t(get_int(t, "seed", 0, where))
                              : mix_seed(study.seed, v.name);
  return v;
}

void parse_reference(const toml::table* t, ReferenceConfig& r, const std::string& source) {
  if (!t) return;
  const std::string where = source + ": [reference]";
  check_keys(*t, kReferenceKeys, where);
  r.digits = int(get_int(*t, "digits", r.digits, where));
  if (r.digits != 50 && r.digits != 100) fail(where, "'digits' must be 50 or 100");
  r.recompute_every = int(get_int(*t, "recompute_every", r.recompute_every, where));
  if (r.recompute_every < 0) fail(where, "'recompute_every' must be >= 0");
  r.certified_bits = long(get_int(*t, "certified_bits", r.certified_bits, where));
  if (r.certified_bits < 32) fail(where, "'certified_bits' must be >= 32");
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
  if (t->contains("max_z_exact")) c.max_z_exact = get_double(*t, "max_z_exact", 0.0, where);
  if (t->contains("max_ratio_error_normalised")) {
    c.max_ratio_error_normalised = get_double(*t, "max_ratio_error_normalised", 0.0, where);
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
        {"singular", w.singular}};
    if (!w.file.empty()) entry.insert("file", w.file);
    experiments.push_back(std::move(entry));
  }
  toml::array strategies;
  for (const auto& st : s.strategies) {
    const UpdaterOptions& o = st.options;
    strategies.push_back(toml::table{
        {"label", st.label}, {"name", st.name},
        {"precision", std::string(to_string(o.precision))},
        {"recompute_every", std::int64_t(o.recompute_every)}, {"breakdown", o.breakdown},
        {"k", std::int64_t(o.k)}, {"variant", o.variant}});
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
    study.seed = std::uint64_t(get_int(*t, "seed", std::int64_t(study.seed), where));
  }
  parse_reference(get_table(root, "reference", source), study.reference, source);
  parse_checks(get_table(root, "checks", source), study.checks, source);

  const auto vmc_entries = entries(root, "vmc", source);
  for (std::size_t i = 0; i < vmc_entries.size(); ++i) {
    const std::string where = fmt::format("{}: vmc[{}]", source, i);
    check_keys(vmc_entries[i], kVmcKeys, where);
    for (const auto& t : expand(vmc_entries[i], kVmcListKeys)) {
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
    for (const auto& t : expand(experiment_entries[i], kExperimentListKeys)) {
      study.experiments.push_back(parse_experiment(t, study, source, where));
    }
  }
  const auto strategy_entries = entries(root, "strategy", source);
  if (strategy_entries.empty() && !experiment_entries.empty()) {
    fail(source, "no [[strategy]] defined for the [[experiment]] entries");
  }
  for (std::size_t i = 0; i < strategy_entries.size(); ++i) {
    const std::string where = fmt::format("{}: strategy[{}]", source, i);
    check_keys(strategy_entries[i], kStrategyKeys, where);
    for (const auto& t : expand(strategy_entries[i], kStrategyListKeys)) {
      study.strategies.push_back(parse_strategy(t, where));
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
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open experiment file (" + std::strerror(errno) + ")");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_study(buffer.str(), path, overrides);
}

}  // namespace slaterlab
