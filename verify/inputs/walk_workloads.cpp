// Workloads that walk electrons (walk_workloads.hpp). Both kinds share one
// walk, in one of two schemes (spec.scheme):
// - pbp: electron k (by the electron order) proposes r_k' = r_k + delta g, g
//   three N(0, 1) variates from the column stream, and the column phi(r_k').
//   Whether the proposal was taken is read from `current` (its column k
//   equals the proposed column exactly when the caller accepted it), so the
//   walk follows the caller's decisions: with Metropolis acceptance on the
//   reference's ratio it samples |det A|^2, as a particle-by-particle VMC of
//   that determinant does.
// - qs (quasi-simultaneous, Uejima and Maezono's Eq. 11): a sweep proposes a
//   move for every electron (3N normals, electron 0's first), decides each
//   against the configuration before the sweep, u_j < |rho_j|^2 with
//   rho_j = (A^{-1} phi(r_j'))_j from a partial-pivot LU of `current` in
//   double and u_j from the order stream, and hands the accepted columns on
//   as one update cycle (next_cycle), applied whole: the rank-m update a qs
//   code makes, whose intermediate ratios are sequential. A sweep with no
//   accepted move proposes again (up to 1000 sweeps, then std::runtime_error:
//   a step so large that nothing moves is no walk).
//
// - slater: harmonic-oscillator orbitals of frequency alpha; the initial
//   positions are N(0, 1/alpha) per coordinate, the ground state's spread.
// - electron-gas: n plane waves of a closed shell in the periodic cube of
//   side L (rs, polarised: the cell holds n or 2n electrons; this matrix is
//   one spin's), analytic or interpolated by B-splines in float or double on
//   the grid of gas_bspline_box; the initial positions are uniform in the
//   cell, and proposals are wrapped into it. Ratios cluster near 1 for steps
//   below the interparticle distance, the matrix's conditioning comes from
//   the orbitals, as in a QMC run of a solid.
// - molecule: the occupied MOs of one spin of a wavefunction file (its
//   reference determinant) in double or float; the initial positions are
//   around the nuclei (positions_near_nuclei). Without a Jastrow factor
//   |D_up D_down|^2 factorises, so the walk of one spin's determinant
//   samples that spin's part of |D_up D_down|^2. With cycles = true the
//   expansion's determinants instead (molecule_cycles.hpp).

#include "verify/inputs/walk_workloads.hpp"

#include <Eigen/LU>

#include <cmath>
#include <stdexcept>
#include <functional>
#include <numbers>
#include <numeric>

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "slaterlab/strategies/sampling/molecular_start.hpp"
#include "verify/inputs/molecule_cache.hpp"
#include "verify/inputs/molecule_cycles.hpp"
#include "verify/inputs/orbital_registry.hpp"
#include "verify/inputs/workload_base.hpp"

namespace slaterlab {
namespace {

using namespace workload_detail;

/// Builds the orbital set when the walk starts: a B-spline table may take
/// seconds and gigabytes, and a study builds every workload once to
/// validate it before any work.
using OrbitalBuilder = std::function<std::shared_ptr<const OrbitalSet>()>;

/// The walk of the file comment, over any orbital set; cell > 0 wraps
/// positions into [-cell/2, cell/2)^3; walkers start around `nuclei` when
/// there are any.
class OrbitalWalkWorkload final : public WorkloadBase {
 public:
  OrbitalWalkWorkload(const WorkloadSpec& spec, OrbitalBuilder build, double cell,
                      std::vector<std::pair<std::string, std::string>> parameters,
                      std::vector<Nucleus> nuclei = {})
      : WorkloadBase(spec), build_(std::move(build)), cell_(cell),
        parameters_(std::move(parameters)), nuclei_(std::move(nuclei)) {
    // Only where it is not the default, so that a pbp walk's parameters, and
    // a baseline recorded before there were schemes, stay what they were.
    if (spec.scheme != "pbp") parameters_.emplace_back("scheme", spec.scheme);
  }

  bool cycles() const override { return spec_.scheme == "qs"; }

  std::vector<Move> next_cycle(const Eigen::MatrixXd& current) override {
    if (!cycles()) return Workload::next_cycle(current);
    require_current(current, "next_cycle");
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(current);
    for (int attempt = 0; attempt < kMaxEmptySweeps; ++attempt) {
      Eigen::Matrix3Xd trials = positions_;
      for (Eigen::Index j = 0; j < spec_.n; ++j) trials.col(j) = propose(j);
      Eigen::MatrixXd columns;
      orbitals_->evaluate_values(trials, columns);
      const Eigen::MatrixXd solved = lu.solve(columns);  // column j: A^{-1} phi(r_j')
      std::vector<Move> cycle;
      for (Eigen::Index j = 0; j < spec_.n; ++j) {
        const double rho = solved(j, j);
        if (order_rng_.uniform() < rho * rho) {
          cycle.push_back({j, columns.col(j)});
          positions_.col(j) = trials.col(j);
        }
      }
      moves_ += spec_.n;
      if (!cycle.empty()) return cycle;
    }
    throw std::runtime_error("workload: " + std::to_string(kMaxEmptySweeps) +
                             " quasi-simultaneous sweeps in a row accepted no move: the step "
                             "delta is too large for this walk");
  }

 protected:
  Eigen::MatrixXd make_initial() override {
    orbitals_ = build_();
    positions_.resize(3, spec_.n);
    const double width = 1.0 / std::sqrt(spec_.alpha);  // the trap's ground-state spread
    if (!nuclei_.empty()) {
      positions_ = positions_near_nuclei(spec_.n, nuclei_, kNuclearStartWidth, initial_rng_);
    } else {
      for (Eigen::Index j = 0; j < spec_.n; ++j)
        for (int d = 0; d < 3; ++d)
          positions_(d, j) = cell_ > 0 ? cell_ * (initial_rng_.uniform() - 0.5)
                                       : width * initial_rng_.normal();
    }
    Eigen::MatrixXd a;
    orbitals_->evaluate_values(positions_, a);
    return a;
  }

  Move make_move(const Eigen::MatrixXd& current) override {
    if (pending_ && current.col(pending_->k) == pending_->column) {
      positions_.col(pending_->k) = pending_position_;
    }
    const Eigen::Index k = next_electron();
    pending_position_ = propose(k);
    Eigen::MatrixXd column;
    orbitals_->evaluate_values(pending_position_, column);
    pending_ = Move{k, column.col(0)};
    return *pending_;
  }

  std::vector<std::pair<std::string, std::string>> kind_parameters() const override {
    return parameters_;
  }

 private:
  static constexpr int kMaxEmptySweeps = 1000;

  /// r_k + delta g (three normals of the column stream), wrapped into the cell.
  Eigen::Vector3d propose(Eigen::Index k) {
    Eigen::Vector3d r = positions_.col(k);
    for (int d = 0; d < 3; ++d) r(d) += spec_.delta * column_rng_.normal();
    if (cell_ > 0)
      for (int d = 0; d < 3; ++d) r(d) -= cell_ * std::floor(r(d) / cell_ + 0.5);
    return r;
  }

  OrbitalBuilder build_;
  std::shared_ptr<const OrbitalSet> orbitals_;
  double cell_;
  std::vector<std::pair<std::string, std::string>> parameters_;
  std::vector<Nucleus> nuclei_;
  Eigen::Matrix3Xd positions_;
  Eigen::Vector3d pending_position_;
  std::optional<Move> pending_;
};

}  // namespace

double electron_gas_cell_length(Eigen::Index n, double rs, bool polarised) {
  const double electrons = double(n) * (polarised ? 1.0 : 2.0);
  return std::cbrt(4.0 * std::numbers::pi * electrons / 3.0) * rs;
}

namespace {

std::unique_ptr<Workload> make_slater_workload(const WorkloadSpec& spec) {
  const Eigen::Index n = spec.n;
  const double alpha = spec.alpha;
  return std::make_unique<OrbitalWalkWorkload>(
      spec, [n, alpha] { return std::make_unique<HarmonicOscillatorOrbitals>(n, alpha); }, 0.0,
      std::vector<std::pair<std::string, std::string>>{
          {"alpha", to_text(spec.alpha)}, {"delta", to_text(spec.delta)},
          {"orbitals", "analytic harmonic oscillator"}});
}

std::unique_ptr<Workload> make_electron_gas_workload(const WorkloadSpec& spec) {
  const OrbitalSetKind& orbitals = orbital_set_kind(spec.orbitals);  // the orbital-set registry's
  if (!orbitals.walks) bad("orbitals '" + spec.orbitals + "' cannot drive a walk (electron-gas)");
  const double cell = electron_gas_cell_length(spec.n, spec.rs, spec.polarised);
  ElectronGasOrbitals(spec.n, cell);  // refuses an open shell, naming the nearest closed ones
  const Eigen::Index grid = orbitals.gridded ? gas_bspline_box(spec.n, cell, kGasPointsPerWavelength, spec.grid).grid : 0;
  const Eigen::Index n = spec.n;
  const std::string kind = spec.orbitals;
  const OrbitalBuilder build = [n, cell, kind, grid] {
    return make_orbital_set(kind, {std::make_shared<ElectronGasOrbitals>(n, cell),
                                   gas_bspline_box(n, cell, kGasPointsPerWavelength, grid)});
  };
  return std::make_unique<OrbitalWalkWorkload>(
      spec, build, cell,
      std::vector<std::pair<std::string, std::string>>{
          {"rs", to_text(spec.rs)}, {"polarised", spec.polarised ? "true" : "false"},
          {"cell_length", to_text(cell)}, {"delta", to_text(spec.delta)},
          {"orbitals", "electron-gas plane waves, " + spec.orbitals},
          {"grid", std::to_string(grid)}});
}

std::unique_ptr<Workload> make_molecule_from_file(const WorkloadSpec& spec) {
  return make_molecule_workload(spec, load_molecule(spec.file));
}

}  // namespace

Eigen::Index molecule_electrons(const MolecularWavefunction& molecule, const std::string& spin) {
  return spin == "down" ? molecule.electrons_down : molecule.electrons_up;
}

std::unique_ptr<Workload> make_molecule_workload(const WorkloadSpec& spec,
                                                 std::shared_ptr<const MolecularWavefunction> molecule) {
  if (!contains(molecule_orbital_keys(), spec.orbitals))
    bad("unknown orbitals '" + spec.orbitals + "' for molecule (valid: " + join(molecule_orbital_keys()) + ")");
  const Eigen::Index electrons = molecule_electrons(*molecule, spec.spin);
  if (electrons != spec.n)
    bad(spec.file + " has " + std::to_string(electrons) + " spin-" + spec.spin + " electrons, not n = " +
        std::to_string(spec.n));
  if (spec.excitations) return make_molecule_cycles(spec, std::move(molecule));
  const auto precision = molecule_orbital_precision(spec.orbitals);
  std::vector<int> occupied(static_cast<std::size_t>(spec.n));
  std::iota(occupied.begin(), occupied.end(), 0);
  const OrbitalBuilder build = [molecule, spin = spec.spin, occupied, precision]() {
    const Eigen::MatrixXd& mo = spin == "up" ? molecule->mo_up : molecule->mo_down;
    return std::make_unique<MolecularOrbitals>(molecule, mo, occupied, precision);
  };
  return std::make_unique<OrbitalWalkWorkload>(
      spec, build, 0.0,
      std::vector<std::pair<std::string, std::string>>{
          {"file", spec.file}, {"source", molecule->source}, {"spin", spec.spin},
          {"delta", to_text(spec.delta)}, {"orbitals", "gaussian-" + spec.orbitals}},
      molecule->nuclei);
}

std::vector<WorkloadKind> walk_workloads() {
  return {{"slater", make_slater_workload, false},
          {"electron-gas", make_electron_gas_workload, false},
          {"molecule", make_molecule_from_file, false, true}};
}

}  // namespace slaterlab
