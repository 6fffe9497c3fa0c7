#include "verify/inputs/study.hpp"

#include <cmath>
#include <memory>

#include "slaterlab/strategies/sampling/hamiltonian.hpp"
#include "slaterlab/strategies/sampling/molecular_start.hpp"
#include "verify/inputs/molecule_cache.hpp"
#include "slaterlab/strategies/sampling/scheme.hpp"
#include "verify/inputs/walk_workloads.hpp"

namespace slaterlab {

double VmcRunConfig::cell_length() const {
  return electron_gas() ? electron_gas_cell_length(n, rs, polarised) : 0.0;
}

VmcConfig sampler_config(const VmcRunConfig& v) {
  VmcConfig c;
  c.scheme = parse_scheme(v.scheme);
  c.omega = v.omega;
  if (v.electron_gas()) c.hamiltonian = std::make_shared<const ElectronGasPotential>(v.cell_length(), v.interacting);
  if (v.molecule()) c.hamiltonian = std::make_shared<const MolecularPotential>(load_molecule(v.file)->nuclei);
  c.spins = v.spins();
  c.walkers = v.walkers;
  c.initial_width = v.molecule() ? kNuclearStartWidth : 1.0 / std::sqrt(v.alpha);
  c.equilibration_sweeps = v.equilibration;
  c.sweeps = v.sweeps;
  c.step = v.step;
  c.tune_step = v.target_acceptance > 0;
  if (c.tune_step) c.tuner.target = v.target_acceptance;
  return c;
}

}  // namespace slaterlab
