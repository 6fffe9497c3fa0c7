#pragma once
// A study's entries as plain values: the experiments (workload instances),
// the strategies that run on each of them in lockstep, the VMC runs, the
// reference settings and the checks. config.hpp reads them from TOML and
// validates them completely before anything runs; docs/experiment-files.md
// documents every key.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "slaterlab/strategies/sampling/vmc.hpp"
#include "verify/inputs/workload.hpp"

namespace slaterlab {

struct StrategyConfig {
  std::string label;   // unique, e.g. "sm-float" or "delayed-16-double"
  std::string name;    // factory name
  UpdaterOptions options;
};

struct ExperimentConfig {
  std::string name;
  WorkloadSpec workload;
  std::int64_t moves = 0;
  std::int64_t checkpoint_every = 0;
  std::string acceptance = "metropolis";  // "metropolis" | "forced"
  double acceptance_rate = 1.0;           // used by "forced"
};

/// One VMC run (docs/vmc.md): a system's electrons sampled with a scheme,
/// an orbital set and a determinant strategy. Systems: "harmonic-trap", N
/// fermions in a trap (n electrons, alpha, omega); "electron-gas", the
/// homogeneous electron gas in a periodic cube (docs/electron-gas.md: n
/// electrons per spin, a closed shell; rs, polarised, interacting);
/// "molecule", the reference determinant of a wavefunction file with the
/// molecular Coulomb Hamiltonian (docs/molecules.md: n spin-up and
/// n_down spin-down electrons, from the file).
struct VmcRunConfig {
  std::string name;
  std::string system = "harmonic-trap";  // harmonic-trap | electron-gas | molecule
  Eigen::Index n = 0;                  // electrons (trap), per spin (gas), spin-up (molecule)
  Eigen::Index n_down = 0;             // molecule: spin-down electrons
  std::string file;                    // molecule: the wavefunction file, absolute
  double exact_energy = 0.0;           // molecule: the study's exact energy, or the file's
  double alpha = 1.0;                  // trap: trial-orbital frequency
  double omega = 1.0;                  // trap: trap frequency
  double rs = 1.0;                     // gas: Wigner-Seitz radius (bohr)
  bool polarised = false;              // gas: one spin (n electrons) or two (2n)
  bool interacting = true;             // gas: Ewald electron-electron energy, or none
  std::string orbitals = "analytic";   // analytic | bspline-double | bspline-float (| -cuda);
                                       // molecule: double | float
  Eigen::Index grid = 0;               // B-spline points per dimension; 0 = the box rule's default
  std::string scheme = "pbp";          // pbp | qs | qs-batched
  double step = 1.0;                   // fixed step, or where tuning starts
  double target_acceptance = 0.0;      // > 0: tune the step in equilibration, then freeze it
  StrategyConfig strategy;             // the determinant strategy
  int walkers = 4;
  std::int64_t sweeps = 2000;          // measured sweeps per walker
  std::int64_t equilibration = 200;    // discarded sweeps per walker
  std::uint64_t seed = 0;
  /// Shadow each walker with an analytic-orbital, sm-double twin on the same
  /// random streams to find where the decisions part (path divergence).
  bool divergence = true;

  bool electron_gas() const { return system == "electron-gas"; }
  bool molecule() const { return system == "molecule"; }
  /// Determinants sampled: 2 for the unpolarised gas and a molecule with
  /// spin-down electrons, else 1.
  int spins() const {
    return (electron_gas() && !polarised) || (molecule() && n_down > 0) ? 2 : 1;
  }
  /// Side of the gas's cell, (4 pi N_total / 3)^(1/3) rs; 0 for the trap.
  double cell_length() const;
};

struct ReferenceConfig {
  int digits = 50;            // Boost.Multiprecision decimal digits: 50 or 100
  int recompute_every = 0;    // mp refactorisation cadence (accepted moves), 0 = never
  long certified_bits = 128;  // Arb working precision
  bool certify = true;        // certified log-det of the initial and final matrices
  /// true: an mp ratio for every move (the mp inverse follows each accepted
  /// move by an mp Sherman-Morrison update, O(N^2) mp work per move).
  /// false: checkpoint-only references for large N (docs/compared.md, References): no mp work
  /// between checkpoints; each checkpoint takes a fresh mp LU of the exact
  /// current matrix (O(N^3) mp). Ratio errors, flips and kappa_rho are then
  /// not measured (NaN), and experiments must use forced acceptance.
  bool per_move = true;
  /// The lockstep reference: "mp", "fast" (FastReference, mp for every result
  /// it does not trust), or "auto": fast from N = 256 on (reference/lockstep_reference.hpp).
  std::string engine = "auto";
};

/// Pass/fail criteria of `slaterlab run` (exit code 1 when one fails).
struct ChecksConfig {
  /// Every checkpoint's sign(det) must agree with the reference.
  bool sign_agreement = true;
  /// Upper limit on the per-move ratio error in units of N eps kappa_rho
  /// (the backward-stable bound; docs/experiment-files.md, [checks]). Unset = no limit.
  std::optional<double> max_ratio_error_normalised;
  /// Every delayed strategy's max normalised ratio error and worst log-det
  /// error stay within its growth guard's factor 16 sqrt(K+1) of sm's at the
  /// same precision in the same experiment (docs/experiment-files.md, [checks]).
  bool delayed_within_guard_of_sm = false;
  /// A strategy that cannot continue (singular to its precision) fails the run.
  bool strategy_must_finish = false;
  /// Precisions the checks apply to (empty = all).
  std::vector<std::string> precisions;
  /// VMC: |E - E_exact| / error must stay below this for every run. Unset = no check.
  std::optional<double> max_z_exact;
};

struct StudyConfig {
  std::string name = "study";
  std::string description;
  std::uint64_t seed = 1;
  std::vector<ExperimentConfig> experiments;
  std::vector<StrategyConfig> strategies;
  std::vector<VmcRunConfig> vmc;
  ReferenceConfig reference;
  ChecksConfig checks;
  /// The fully resolved definition (lists expanded, defaults filled) as TOML.
  std::string resolved_toml;
};

/// The sampler's settings of a VMC run (scheme, Hamiltonian, spins, walkers,
/// sweeps, step and its tuner). Its validate() is part of the checks before any work.
VmcConfig sampler_config(const VmcRunConfig& v);

}  // namespace slaterlab
