// The [[vmc]] entries of a study (contract: config.hpp, VmcRunConfig; keys:
// docs/experiment-files.md). A key belongs to a system: alpha and omega to
// the trap, rs, polarised and interacting to the electron gas, file and
// exact_energy to a molecule (whose n comes from its file); a key of another
// system is refused rather than ignored, so that a run never means something
// other than what its file says.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "slaterlab/strategies/orbitals/electron_gas.hpp"
#include "slaterlab/strategies/sampling/scheme.hpp"
#include "verify/inputs/molecule_cache.hpp"
#include "verify/inputs/orbital_registry.hpp"
#include "verify/inputs/strategy_config.hpp"
#include "verify/inputs/vmc_config.hpp"
#include "verify/inputs/toml_access.hpp"

namespace slaterlab {

using namespace toml_access;

const std::vector<std::string> kVmcKeys = {
    "name",      "system",  "n",       "alpha",   "omega",     "rs",       "polarised",
    "interacting", "orbitals", "grid", "scheme",  "step",      "target_acceptance",
    "strategy",  "precision", "k",     "variant", "recompute_every", "breakdown",
    "walkers",   "sweeps",  "equilibration", "seed", "divergence", "file", "exact_energy"};
const std::set<std::string> kVmcListKeys = {"n",    "alpha",    "orbitals",  "scheme", "grid",
                                            "step", "strategy", "precision", "k",      "rs",
                                            "polarised", "file"};

namespace {

const std::vector<std::string> kSystems = {"harmonic-trap", "electron-gas", "molecule"};
const std::vector<std::string> kTrapOnlyKeys = {"alpha", "omega"};
const std::vector<std::string> kGasOnlyKeys = {"rs", "polarised", "interacting"};
// A molecule's electrons and orbitals come from its file.
const std::vector<std::string> kNotForMolecules = {"n", "grid", "alpha", "omega", "rs",
                                                   "polarised", "interacting"};
const std::vector<std::string> kMoleculeOnlyKeys = {"file", "exact_energy"};

void refuse_keys_of_other_system(const toml::table& t, const std::vector<std::string>& keys,
                                 const std::string& system, const std::string& where) {
  for (const auto& key : keys) {
    if (t.contains(key)) fail(where, fmt::format("'{}' does not apply to system = \"{}\"", key, system));
  }
}

/// The electron gas's own one-line refusal of an open shell (naming the
/// nearest closed ones) or of an N beyond what it takes.
void require_gas_closed_shell(Eigen::Index n, const std::string& where) {
  try {
    gas_require_closed_shell(n);
  } catch (const std::invalid_argument& error) {
    fail(where, error.what());
  }
}

/// system = "molecule": the file (read here, once: its electrons size the
/// run), its electrons per spin and the exact energy (the study's, or the file's).
void parse_molecule(const toml::table& t, VmcRunConfig& v, const std::string& source,
                    const std::string& where) {
  refuse_keys_of_other_system(t, kNotForMolecules, v.system, where);
  if (!t.contains("file"))
    fail(where, "system = \"molecule\" needs 'file' (a wavefunction file: Molden or TREXIO)");
  v.file = get_study_path(t, "file", source, where);
  std::shared_ptr<const MolecularWavefunction> molecule;
  try {
    molecule = load_molecule(v.file);
  } catch (const ConfigError& error) {
    fail(where, error.what());
  }
  v.n = molecule->electrons_up;
  v.n_down = molecule->electrons_down;
  if (v.n < 1 || v.n > kMaxN || v.n_down < 0 || v.n_down > kMaxN)
    fail(where, fmt::format("{}: {} spin-up and {} spin-down electrons; a run needs 1 to {} "
                            "spin-up electrons (spin-down: 0 to {})",
                            v.file, v.n, v.n_down, kMaxN, kMaxN));
  if (t.contains("exact_energy")) {
    v.exact_energy = get_double(t, "exact_energy", 0.0, where);
  } else if (molecule->energy) {
    v.exact_energy = *molecule->energy;
  } else {
    fail(where, v.file + " holds no energy: give 'exact_energy' (e.g. the Hartree-Fock energy of "
                         "its orbitals)");
  }
}

/// The part of a run's default name that says which system it samples.
std::string system_name(const VmcRunConfig& v) {
  if (v.molecule()) return molecule_stem(v.file);
  if (v.electron_gas())
    return fmt::format("gas-n{}-rs{}{}{}", v.n, number_text(v.rs), v.polarised ? "-polarised" : "",
                       v.interacting ? "" : "-free");
  return fmt::format("n{}-alpha{}", v.n, number_text(v.alpha));
}

}  // namespace

VmcRunConfig parse_vmc(const toml::table& t, std::uint64_t study_seed, const std::string& source,
                       const std::string& where) {
  VmcRunConfig v;
  v.system = get_string(t, "system", v.system, where);
  if (std::find(kSystems.begin(), kSystems.end(), v.system) == kSystems.end())
    fail(where, "unknown system '" + v.system + "'" + suggestion_suffix(v.system, kSystems));
  if (!v.molecule()) {
    refuse_keys_of_other_system(t, kMoleculeOnlyKeys, v.system, where);
    if (!t.contains("n"))
      fail(where, v.electron_gas() ? "missing 'n' (electrons per spin)" : "missing 'n' (electrons)");
    v.n = get_int<std::int64_t>(t, "n", 0, where, {1, kMaxN});
  }
  if (v.molecule()) {
    parse_molecule(t, v, source, where);
  } else if (v.electron_gas()) {
    refuse_keys_of_other_system(t, kTrapOnlyKeys, v.system, where);
    require_gas_closed_shell(v.n, where);
    v.rs = get_double(t, "rs", v.rs, where, kPositive);
    v.polarised = get_bool(t, "polarised", v.polarised, where);
    v.interacting = get_bool(t, "interacting", v.interacting, where);
  } else {
    refuse_keys_of_other_system(t, kGasOnlyKeys, v.system, where);
    v.alpha = get_double(t, "alpha", v.alpha, where, kPositive);
    v.omega = get_double(t, "omega", v.omega, where, kPositive);
  }
  // A molecule's orbitals are its file's, in double or float; the other
  // systems' are the orbital-set registry's.
  const auto orbital_sets = v.molecule() ? molecule_orbital_keys() : known_orbital_sets();
  v.orbitals = get_string(t, "orbitals", v.molecule() ? "double" : v.orbitals, where);
  if (std::find(orbital_sets.begin(), orbital_sets.end(), v.orbitals) == orbital_sets.end()) {
    fail(where, "unknown orbitals '" + v.orbitals + "'" + suggestion_suffix(v.orbitals, orbital_sets));
  }
  if (const auto why = orbital_set_unusable(v.orbitals)) fail(where, *why);
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
  // Every walker moves each of its electrons once per sweep.
  const std::int64_t sweeps = v.sweeps + v.equilibration;  // <= 2^54: no overflow
  const std::int64_t electrons = v.molecule() ? v.n + v.n_down : v.n * v.spins();  // < 2^31
  checked_count({sweeps, v.walkers, electrons}, where,
                fmt::format("'sweeps' + 'equilibration' = {} sweeps of 'walkers' = {} walkers of "
                            "{} electrons",
                            sweeps, v.walkers, electrons));
  v.divergence = get_bool(t, "divergence", v.divergence, where);
  toml::table strategy{{"name", get_string(t, "strategy", baseline_strategy(), where)}};
  for (const char* key : {"precision", "k", "variant", "recompute_every", "breakdown"}) {
    if (const toml::node* node = t.get(key)) strategy.insert(key, *node);
  }
  v.strategy = parse_strategy(strategy, "", where);  // a VMC strategy loads no library
  const std::string grid = v.grid ? fmt::format("-grid{}", v.grid) : "";
  const std::string default_name = fmt::format("{}-{}{}-{}-{}-step{}", v.scheme, v.orbitals, grid,
                                               v.strategy.label, system_name(v),
                                               number_text(v.step));
  v.name = get_name(t, "name", default_name, where);
  v.seed = get_seed(t, "seed", mix_seed(study_seed, v.name), where);
  return v;
}

toml::table resolved_vmc(const VmcRunConfig& v) {
  const UpdaterOptions& o = v.strategy.options;
  toml::table entry{
      {"name", v.name}, {"n", std::int64_t(v.n)},
      {"orbitals", v.orbitals}, {"grid", std::int64_t(v.grid)}, {"scheme", v.scheme},
      {"step", v.step}, {"target_acceptance", v.target_acceptance},
      {"strategy", v.strategy.name}, {"precision", std::string(to_string(o.precision))},
      {"k", std::int64_t(o.k)}, {"variant", o.variant},
      {"recompute_every", std::int64_t(o.recompute_every)}, {"breakdown", o.breakdown},
      {"walkers", v.walkers}, {"sweeps", v.sweeps}, {"equilibration", v.equilibration},
      {"seed", std::int64_t(v.seed)}, {"divergence", v.divergence}};
  if (v.molecule()) {
    entry.insert("system", v.system);
    entry.insert("file", v.file);
    entry.insert("n_down", std::int64_t(v.n_down));
    entry.insert("exact_energy", v.exact_energy);
  } else if (v.electron_gas()) {
    entry.insert("system", v.system);
    entry.insert("rs", v.rs);
    entry.insert("polarised", v.polarised);
    entry.insert("interacting", v.interacting);
  } else {
    entry.insert("alpha", v.alpha);
    entry.insert("omega", v.omega);
  }
  return entry;
}

}  // namespace slaterlab
