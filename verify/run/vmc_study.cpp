#include "verify/run/vmc_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "slaterlab/reference/electron_gas.hpp"
#include "slaterlab/reference/harmonic_trap.hpp"
#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "slaterlab/strategies/orbitals/orbital_accuracy.hpp"
#include "slaterlab/strategies/sampling/molecular_start.hpp"
#include "slaterlab/strategies/sampling/random_source.hpp"
#include "slaterlab/strategies/sampling/vmc.hpp"
#include "verify/inputs/molecule_cache.hpp"
#include "verify/inputs/orbital_registry.hpp"
#include "verify/inputs/rng.hpp"
#include "verify/stats/statistics.hpp"

namespace slaterlab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The exact energy of a run and its kinetic part: for the trap E(alpha)
/// and alpha S / 2 (the trial orbitals' own virial), for the gas the
/// Hartree-Fock energy of the plane-wave determinants (docs/electron-gas.md),
/// for a molecule the study's or its file's energy, kinetic part unknown.
struct ExactEnergy {
  double total = kNaN;
  double kinetic = kNaN;
};

ExactEnergy exact_energy_of(const VmcRunConfig& v) {
  if (v.molecule()) return {v.exact_energy, kNaN};
  if (!v.electron_gas())
    return {reference::exact_energy(v.n, v.alpha, v.omega),
            0.5 * v.alpha * reference::trap_energy_sum(v.n)};
  const auto e = reference::hartree_fock_energy(v.n, v.polarised ? 0 : v.n, v.rs);
  return {v.interacting ? e.total : e.kinetic, e.kinetic};
}

/// The orbitals a run's reference and lockstep twin use: analytic, or a
/// molecule's in double.
std::string exact_orbitals(const VmcRunConfig& v) { return v.molecule() ? "double" : "analytic"; }

bool is_reference_like(const VmcRunConfig& v) {
  return v.orbitals == exact_orbitals(v) && v.scheme == "pbp" &&
         v.strategy.options.precision == Precision::double_;
}

/// The box and grid the system's B-spline rule gives for the run's `grid`
/// key (0: the rule's own).
BsplineBox orbital_box(const VmcRunConfig& v) {
  if (v.electron_gas()) return gas_bspline_box(v.n, v.cell_length(), kGasPointsPerWavelength, v.grid);
  BsplineBoxRule rule;
  rule.grid = v.grid;
  return ho_bspline_box(v.n, v.alpha, rule);
}

/// Grid points per dimension a run's orbital set tabulates on, 0 for a set
/// that tabulates nothing (a molecule's among them).
Eigen::Index grid_of(const VmcRunConfig& v) {
  if (v.molecule()) return 0;
  return orbital_set_kind(v.orbitals).gridded ? orbital_box(v).grid : 0;
}

/// Orbital sets built once per system, kind, size and grid (a molecule's
/// per file, kind and spin), and shared by runs; a trap's or a gas's
/// through the orbital-set registry (orbital_registry.hpp), from the
/// system's analytic orbitals on the box its B-spline rule gives.
class OrbitalCache {
 public:
  const OrbitalSet& get(const VmcRunConfig& v, const std::string& kind) {
    if (v.molecule()) return molecular(v, kind, 0);
    return *share(v, kind);
  }

  /// The set of each spin's determinant: a molecule's spins have their own
  /// (other sizes, other orbitals), the other systems' share one.
  SpinOrbitals spins(const VmcRunConfig& v, const std::string& kind) {
    if (!v.molecule()) return SpinOrbitals(std::size_t(v.spins()), &get(v, kind));
    SpinOrbitals sets{&molecular(v, kind, 0)};
    if (v.spins() == 2) sets.push_back(&molecular(v, kind, 1));
    return sets;
  }

 private:
  /// The reference determinant's orbitals of spin 0 (up) or 1 (down): the
  /// first electrons of that spin's MO columns. The down spin shares the up
  /// spin's set where its electrons and MO coefficients are the same.
  const OrbitalSet& molecular(const VmcRunConfig& v, const std::string& kind, int spin) {
    const auto molecule = load_molecule(v.file);
    const Eigen::MatrixXd& up = molecule->mo_up;
    const Eigen::MatrixXd& down = molecule->mo_down;
    const bool same = molecule->electrons_down == molecule->electrons_up &&
                      down.rows() == up.rows() && down.cols() == up.cols() && down == up;
    if (spin == 1 && same) spin = 0;
    const std::string key = fmt::format("molecule/{}/{}/{}", kind, spin, v.file);
    auto it = sets_.find(key);
    if (it == sets_.end()) {
      const Eigen::Index n = spin == 0 ? molecule->electrons_up : molecule->electrons_down;
      std::vector<int> occupied(static_cast<std::size_t>(n));
      std::iota(occupied.begin(), occupied.end(), 0);
      const auto precision = molecule_orbital_precision(kind);
      it = sets_.emplace(key, std::make_unique<MolecularOrbitals>(
                                  molecule, spin == 0 ? molecule->mo_up : molecule->mo_down,
                                  std::move(occupied), precision))
               .first;
    }
    return *it->second;
  }


  std::shared_ptr<const OrbitalSet> share(const VmcRunConfig& v, const std::string& kind) {
    const std::string key =
        fmt::format("{}/{}/{}/{:.17g}/{:.17g}/{}", v.system, kind, v.n, v.alpha, v.cell_length(),
                    orbital_set_kind(kind).gridded ? v.grid : 0);
    auto it = sets_.find(key);
    if (it == sets_.end()) it = sets_.emplace(key, build(v, kind)).first;
    return it->second;
  }

  std::shared_ptr<const OrbitalSet> build(const VmcRunConfig& v, const std::string& kind) {
    if (kind == kAnalyticOrbitals) {
      if (v.electron_gas()) return std::make_shared<ElectronGasOrbitals>(v.n, v.cell_length());
      return std::make_shared<HarmonicOscillatorOrbitals>(v.n, v.alpha);
    }
    return make_orbital_set(kind, {share(v, kAnalyticOrbitals), orbital_box(v)});
  }

  std::map<std::string, std::shared_ptr<const OrbitalSet>> sets_;
};

/// Sample points for the orbital accuracy. Trap: Gaussian with the spread
/// of the highest occupied shell (<x^2> = (n_max + 1/2) / alpha for h_n),
/// where the orbitals are large and the sampling spends its time. Gas:
/// uniform in the cell, where the electrons are. Molecule: where its
/// walkers start, around the nuclei.
Eigen::Matrix3Xd accuracy_points(const VmcRunConfig& v) {
  Rng rng = Rng::stream(v.seed, 0x4f524249ull);  // "ORBI"
  if (v.molecule())
    return positions_near_nuclei(4096, load_molecule(v.file)->nuclei, kNuclearStartWidth, rng);
  Eigen::Matrix3Xd points(3, 4096);
  if (v.electron_gas()) {
    const double l = v.cell_length();
    for (Eigen::Index m = 0; m < points.cols(); ++m)
      for (int d = 0; d < 3; ++d) points(d, m) = l * (rng.uniform() - 0.5);
    return points;
  }
  int n_max = 0;
  while ((n_max + 1) * (n_max + 2) * (n_max + 3) / 6 < v.n) ++n_max;
  const double width = std::sqrt((n_max + 0.5) / v.alpha);
  for (Eigen::Index m = 0; m < points.cols(); ++m)
    for (int d = 0; d < 3; ++d) points(d, m) = width * rng.normal();
  return points;
}

OrbitalAccuracyRecord accuracy_record(const VmcRunConfig& v, const OrbitalSet& approx,
                                      const OrbitalSet& exact) {
  // A molecule's float set states its epsilon itself; the other systems'
  // sets are the registry's kinds, which state theirs.
  const double epsilon = v.molecule() ? approx.computing_epsilon() : orbital_set_kind(v.orbitals).epsilon;
  const OrbitalAccuracy a = measure_orbital_accuracy(approx, exact, accuracy_points(v), epsilon);
  OrbitalAccuracyRecord r;
  r.orbitals = v.orbitals;
  r.n = v.n;
  r.alpha = v.alpha;
  r.grid = grid_of(v);
  r.label = v.molecule()       ? fmt::format("{}-{}-n{}", v.orbitals, molecule_stem(v.file), v.n)
            : v.electron_gas() ? fmt::format("{}-gas-n{}-rs{:g}-grid{}", v.orbitals, v.n, v.rs, r.grid)
                               : fmt::format("{}-n{}-alpha{:g}-grid{}", v.orbitals, v.n, v.alpha, r.grid);
  r.samples = a.samples;
  r.epsilon = a.epsilon;
  const auto copy = [](const QuantityError& q, double& max_abs, double& rms_abs, double& max_rel,
                       double& max_eps) {
    max_abs = q.max_abs;
    rms_abs = q.rms_abs;
    max_rel = q.max_rel;
    max_eps = q.max_eps;
  };
  copy(a.value, r.value_max_abs, r.value_rms_abs, r.value_max_rel, r.value_max_eps);
  copy(a.gradient, r.gradient_max_abs, r.gradient_rms_abs, r.gradient_max_rel, r.gradient_max_eps);
  copy(a.laplacian, r.laplacian_max_abs, r.laplacian_rms_abs, r.laplacian_max_rel,
       r.laplacian_max_eps);
  return r;
}


/// Blocking table of the run: per level, the walkers' errors combined as
/// for their means (plain average: err = sqrt(sum err_w^2) / n_w).
std::vector<BlockingRow> blocking_rows(const std::vector<std::vector<double>>& series) {
  std::vector<Blocking> per_walker;
  std::size_t levels = std::numeric_limits<std::size_t>::max();
  int chosen = 0;
  for (const auto& s : series) {
    if (s.size() < 2) continue;
    per_walker.push_back(block_analysis(s));
    levels = std::min(levels, per_walker.back().levels.size());
    chosen = std::max(chosen, per_walker.back().chosen_level);
  }
  std::vector<BlockingRow> rows;
  if (per_walker.empty()) return rows;
  const double walkers = double(per_walker.size());
  for (std::size_t k = 0; k < levels; ++k) {
    BlockingRow row;
    row.level = std::int64_t(k);
    row.block_size = per_walker[0].levels[k].block_size;
    row.blocks = per_walker[0].levels[k].blocks;
    double err2 = 0, unc2 = 0;
    for (const auto& b : per_walker) {
      err2 += b.levels[k].error * b.levels[k].error;
      unc2 += b.levels[k].error_uncertainty * b.levels[k].error_uncertainty;
    }
    row.error = std::sqrt(err2) / walkers;
    row.error_uncertainty = std::sqrt(unc2) / walkers;
    row.chosen = int(k) == chosen;
    rows.push_back(row);
  }
  return rows;
}

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size() / 2;
  return values.size() % 2 ? values[m] : 0.5 * (values[m - 1] + values[m]);
}

VmcRunInfo describe(const VmcRunConfig& v, const std::string& reference) {
  VmcRunInfo i;
  i.name = v.name;
  i.system = v.system;
  i.n = std::int64_t(v.n);
  i.spins = v.spins();
  const bool trap = !v.electron_gas() && !v.molecule();
  i.alpha = trap ? v.alpha : 0.0;
  i.omega = trap ? v.omega : 0.0;
  i.n_down = v.molecule() ? std::int64_t(v.n_down) : 0;
  if (v.molecule()) {
    i.file = v.file;
    i.source = load_molecule(v.file)->source;
  }
  i.rs = v.electron_gas() ? v.rs : 0.0;
  i.cell_length = v.cell_length();
  i.interacting = v.electron_gas() && v.interacting;
  i.orbitals = v.orbitals;
  i.grid = grid_of(v);
  i.scheme = v.scheme;
  i.strategy = v.strategy.label;
  i.step = v.step;
  i.target_acceptance = v.target_acceptance;
  i.walkers = v.walkers;
  i.equilibration_sweeps = v.equilibration;
  i.sweeps = v.sweeps;
  i.seed = v.seed;
  i.reference_run = reference;
  return i;
}

/// Mean and blocked error of one series per walker, combined over walkers.
std::pair<double, double> combined_mean(const std::vector<std::vector<double>>& series) {
  std::vector<std::vector<double>> usable;
  for (const auto& s : series)
    if (s.size() >= 2) usable.push_back(s);
  if (usable.empty()) return {kNaN, kNaN};
  const WalkerCombination c = combine_walkers(usable);
  return {c.combined.mean, c.combined.error};
}

class VmcStudy {
 public:
  VmcStudy(const StudyConfig& study, ResultWriter* writer, const RunOptions& options)
      : study_(study), writer_(writer), options_(options) {}

  void run(RunReport& report) {
    const auto& runs = study_.vmc;
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    // References first: the others' z_reference needs their estimates.
    std::stable_partition(order.begin(), order.end(),
                          [&](std::size_t i) { return reference_run_index(runs, i) < 0; });
    for (std::size_t i : order) {
      if (options_.interrupt && options_.interrupt->load()) {
        report.interrupted = true;
        return;
      }
      run_one(i, report);
    }
  }

 private:
  void run_one(std::size_t index, RunReport& report);
  VmcRun measure(const VmcRunConfig& v, const OrbitalSet& orbitals, const VmcResult& result,
                 double seconds);

  const StudyConfig& study_;
  ResultWriter* writer_;
  const RunOptions& options_;
  OrbitalCache orbitals_;
  std::map<std::size_t, Estimate> estimates_;
};

VmcRun VmcStudy::measure(const VmcRunConfig& v, const OrbitalSet& orbitals, const VmcResult& result,
                         double seconds) {
  VmcRun run;
  std::vector<double> divergence_sweeps;
  std::int64_t proposed = 0, accepted = 0;
  double steps = 0;
  for (std::size_t w = 0; w < result.walkers.size(); ++w) {
    const WalkerResult& r = result.walkers[w];
    run.energy.push_back(r.energy);
    // Field by field, not over record_fields.hpp: a WalkerResult is not a
    // results record, and each row and summary field has its own source and
    // rule (min, max, sum, or an estimate of the series).
    VmcWalkerRow row;
    row.walker = std::int64_t(w);
    row.stream = std::int64_t(r.stream);
    const Estimate e = r.energy.size() >= 2 ? estimate(r.energy) : Estimate{kNaN, kNaN, kNaN, kNaN, 0, 0, 0};
    row.energy = e.mean;
    row.error = e.error;
    row.tau = e.tau;
    row.acceptance = r.acceptance();
    row.step = r.step;
    row.divergence_sweep = r.divergence.sweep;
    row.divergence_move = r.divergence.move;
    row.expected_flips = r.divergence.expected_flips;
    row.max_ratio_difference = r.divergence.max_ratio_rel_difference;
    row.max_energy_difference = r.divergence.max_energy_difference;
    row.breakdowns = r.counters.breakdowns;
    row.recomputes = r.counters.recomputes;
    row.failed = !r.failure.empty();
    run.walkers.push_back(row);

    VmcRunSummary& s = run.summary;
    if (r.divergence.sweep >= 0) {
      divergence_sweeps.push_back(double(r.divergence.sweep));
      s.divergence_sweep_min = s.divergence_sweep_min < 0
                                   ? r.divergence.sweep
                                   : std::min(s.divergence_sweep_min, r.divergence.sweep);
    }
    s.max_energy_difference = std::max(s.max_energy_difference, r.divergence.max_energy_difference);
    s.breakdowns += r.counters.breakdowns;
    s.failed_walkers += row.failed;
    proposed += r.proposed;
    accepted += r.accepted;
    steps += r.step;
  }
  VmcRunSummary& s = run.summary;
  const ExactEnergy exact_energy = exact_energy_of(v);
  s.exact_energy = exact_energy.total;
  s.exact_kinetic = exact_energy.kinetic;
  std::vector<std::vector<double>> kinetic, potential;
  for (const WalkerResult& r : result.walkers) {
    if (r.kinetic.size() != r.energy.size())
      throw std::logic_error("VMC walker: " + std::to_string(r.kinetic.size()) +
                             " kinetic energies for " + std::to_string(r.energy.size()) + " sweeps");
    kinetic.push_back(r.kinetic);
    potential.emplace_back(r.energy.size());
    for (std::size_t k = 0; k < r.energy.size(); ++k) potential.back()[k] = r.energy[k] - r.kinetic[k];
  }
  std::tie(s.kinetic, s.kinetic_error) = combined_mean(kinetic);
  std::tie(s.potential, s.potential_error) = combined_mean(potential);
  std::vector<std::vector<double>> usable;
  for (const auto& series : run.energy)
    if (series.size() >= 2) usable.push_back(series);
  if (!usable.empty()) {
    const WalkerCombination c = combine_walkers(usable);
    s.energy = c.combined.mean;
    s.error = c.combined.error;
    s.variance = c.combined.variance;
    s.tau = c.combined.tau;
    s.effective_samples = c.combined.effective_samples;
    s.samples = c.combined.samples;
    s.walker_scatter_p = c.p_value;
  } else {
    s.energy = s.error = s.variance = s.tau = kNaN;
  }
  s.acceptance = proposed ? double(accepted) / double(proposed) : kNaN;
  s.final_step = steps / double(result.walkers.size());
  const double threshold = study_.checks.max_z_exact.value_or(3.0);
  const Agreement exact = agreement(s.energy, s.error, s.exact_energy, 0.0, threshold);
  s.z_exact = exact.z;
  s.detectable_bias_exact = 3 * exact.sigma;
  s.z_reference = s.detectable_bias_reference = kNaN;
  s.walkers_diverged = std::int64_t(divergence_sweeps.size());
  s.divergence_sweep_median = median(divergence_sweeps);
  s.elapsed_s = seconds;
  run.blocking = blocking_rows(run.energy);
  (void)orbitals;
  return run;
}

void VmcStudy::run_one(std::size_t index, RunReport& report) {
  const VmcRunConfig& v = study_.vmc[index];
  if (options_.progress) fmt::print(stderr, "[vmc] {}\n", v.name);
  const SpinOrbitals orbitals = orbitals_.spins(v, v.orbitals);
  const SpinOrbitals exact = orbitals_.spins(v, exact_orbitals(v));

  const std::uint64_t seed = v.seed;
  const RandomFactory random = [seed](std::uint64_t stream) {
    return make_random_source(Rng::stream(seed, stream));
  };
  ReferenceSpec twin{exact, {baseline_strategy(), {}}};
  // A run that is itself analytic sm-double would shadow an identical twin.
  const bool twin_identical = v.orbitals == exact_orbitals(v) &&
                              v.strategy.name == baseline_strategy() &&
                              v.strategy.options.precision == Precision::double_ &&
                              v.strategy.options.recompute_every == 0;
  const bool shadow = v.divergence && !twin_identical;
  const StrategySpec strategy{v.strategy.name, v.strategy.options};
  const auto t0 = std::chrono::steady_clock::now();
  const auto run_walkers = [&](const VmcConfig& config) {
    try {
      return run_vmc(config, orbitals, strategy, random, shadow ? &twin : nullptr);
    } catch (const SingularMatrixError& error) {
      throw InputError("VMC run '" + v.name + "': the initial configuration is singular (" +
                       error.what() + ")");
    }
  };
  const std::optional<VmcResult> gathered =
      options_.schedule ? options_.schedule->run_walkers(sampler_config(v), run_walkers)
                        : std::optional<VmcResult>(run_walkers(sampler_config(v)));
  if (!gathered) return;  // this process ran walkers for another one
  const VmcResult& result = *gathered;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (orbitals != exact) writer_->add_orbital_accuracy(accuracy_record(v, *orbitals[0], *exact[0]));

  const int reference = reference_run_index(study_.vmc, index);
  VmcRun run = measure(v, *orbitals[0], result, seconds);
  run.info = describe(v, reference >= 0 ? study_.vmc[reference].name : "");
  if (auto it = estimates_.find(std::size_t(reference)); reference >= 0 && it != estimates_.end()) {
    const Agreement a = agreement(run.summary.energy, run.summary.error, it->second.mean,
                                  it->second.error);
    run.summary.z_reference = a.z;
    run.summary.detectable_bias_reference = 3 * a.sigma;
  }
  estimates_[index] = Estimate{run.summary.energy, run.summary.error, run.summary.variance,
                               run.summary.tau, run.summary.effective_samples,
                               run.summary.samples, 0};
  writer_->add_vmc_run(run);

  if (study_.checks.max_z_exact && !(run.summary.z_exact < *study_.checks.max_z_exact)) {
    report.failures.push_back(
        {"vmc", v.name,
         fmt::format("E = {} vs exact {:.10g}: z = {:.2f} exceeds {:.2f}",
                     format_mean_error(run.summary.energy, run.summary.error),
                     run.summary.exact_energy, run.summary.z_exact, *study_.checks.max_z_exact)});
  }
}

}  // namespace

int reference_run_index(const std::vector<VmcRunConfig>& runs, std::size_t run) {
  const VmcRunConfig& v = runs[run];
  if (is_reference_like(v)) return -1;  // a reference is compared with the exact energy only
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const VmcRunConfig& r = runs[i];
    const bool same_system =
        r.system == v.system && r.n == v.n &&
        (v.molecule()       ? r.file == v.file && r.exact_energy == v.exact_energy
         : v.electron_gas() ? r.rs == v.rs && r.polarised == v.polarised && r.interacting == v.interacting
                            : r.alpha == v.alpha && r.omega == v.omega);
    if (i != run && is_reference_like(r) && same_system && r.step == v.step &&
        r.target_acceptance == v.target_acceptance) {
      return int(i);
    }
  }
  return -1;
}

void run_vmc_study(const StudyConfig& study, ResultWriter* writer, const RunOptions& options,
                   RunReport& report) {
  VmcStudy(study, writer, options).run(report);
}

}  // namespace slaterlab
