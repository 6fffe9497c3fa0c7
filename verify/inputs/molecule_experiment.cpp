#include "verify/inputs/molecule_experiment.hpp"

#include "verify/inputs/molecule_cache.hpp"
#include "verify/inputs/toml_access.hpp"
#include "verify/inputs/walk_workloads.hpp"

namespace slaterlab {

using namespace toml_access;

std::int64_t parse_molecule_experiment(const toml::table& t, WorkloadSpec& w,
                                       const std::string& source, const std::string& where) {
  if (!t.contains("file"))
    fail(where, "workload \"molecule\" needs 'file' (a wavefunction file: Molden or TREXIO)");
  w.file = get_study_path(t, "file", source, where);
  w.spin = get_string(t, "spin", w.spin, where);
  if (w.spin != "up" && w.spin != "down")
    fail(where, "'spin' must be \"up\" or \"down\", got \"" + printable(w.spin) + "\"");
  w.excitations = get_bool(t, "cycles", w.excitations, where);
  w.orbitals = "double";
  w.delta = kMoleculeStep;
  try {
    const Eigen::Index n = molecule_electrons(*load_molecule(w.file), w.spin);
    if (n < 1) fail(where, w.file + " has no spin-" + w.spin + " electrons");
    return n;
  } catch (const ConfigError& error) {
    if (std::string(error.what()).starts_with(where)) throw;
    fail(where, error.what());
  }
}

std::string molecule_experiment_name(const WorkloadSpec& w) {
  return "molecule-" + molecule_stem(w.file) + "-" + w.spin + (w.orbitals == "double" ? "" : "-" + w.orbitals) +
         (w.excitations ? "-cycles" : "");
}

void insert_molecule_keys(const WorkloadSpec& w, toml::table& entry) {
  entry.insert("spin", w.spin);
  entry.insert("cycles", w.excitations);
  entry.insert("orbitals", w.orbitals);
}

}  // namespace slaterlab
