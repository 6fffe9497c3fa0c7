#include "verify/inputs/molecule_cycles.hpp"

// The walk is the pbp walk of walk_workloads.cpp, decided here instead of by
// the runner (a cycle is always applied): electron j proposes r_j + delta g
// (three normals of the column stream) and is accepted when u < rho^2, u
// from the order stream, rho = (A^{-1} phi_ref(r_j'))_j from a partial-pivot
// LU of the reference matrix in double, refactorised after each accepted
// move (N^3 per move: a molecule's N is tens). The initial positions are
// those of the other molecule walks (positions_near_nuclei).

#include <Eigen/LU>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "slaterlab/strategies/sampling/molecular_start.hpp"
#include "verify/inputs/molecule_cache.hpp"
#include "verify/inputs/workload_base.hpp"

namespace slaterlab {
namespace {

using namespace workload_detail;

const std::vector<int>& occupation(const DeterminantOccupation& d, const std::string& spin) {
  return spin == "up" ? d.up : d.down;
}

class MoleculeCyclesWorkload final : public WorkloadBase {
 public:
  MoleculeCyclesWorkload(const WorkloadSpec& spec, std::shared_ptr<const MolecularWavefunction> molecule,
                         std::vector<std::vector<int>> excitations)
      : WorkloadBase(spec), molecule_(std::move(molecule)), excitations_(std::move(excitations)) {
    // The orbitals the cycles use: the reference's first, then the others
    // in increasing order; row_of_ maps an MO index to its row.
    std::set<int> others;
    for (const auto& d : excitations_)
      for (int o : d)
        if (o >= spec_.n) others.insert(o);
    for (int o = 0; o < spec_.n; ++o) used_.push_back(o);
    used_.insert(used_.end(), others.begin(), others.end());
    for (std::size_t r = 0; r < used_.size(); ++r) row_of_[used_[r]] = Eigen::Index(r);
  }

  bool cycles() const override { return true; }

  std::vector<Move> next_cycle(const Eigen::MatrixXd& current) override {
    require_current(current, "next_cycle");
    std::vector<Move> cycle;
    if (next_ == 2 * excitations_.size()) {
      walk_sweep();
      for (Eigen::Index t = 0; t < spec_.n; ++t) cycle.push_back({t, column(t)});
      next_ = 0;
    } else {
      const std::vector<int>& d = excitations_[next_ / 2];
      const bool restore = next_ % 2 == 1;
      for (const OrbitalReplacement& r : excitation_of(d))
        cycle.push_back({r.column, column(restore ? int(r.column) : r.orbital)});
      ++next_;
    }
    moves_ += Eigen::Index(cycle.size());
    return cycle;
  }

 protected:
  Eigen::MatrixXd make_initial() override {
    const Eigen::MatrixXd& mo = spec_.spin == "up" ? molecule_->mo_up : molecule_->mo_down;
    orbitals_ = std::make_unique<MolecularOrbitals>(molecule_, mo, used_,
                                                    molecule_orbital_precision(spec_.orbitals));
    positions_ = positions_near_nuclei(spec_.n, molecule_->nuclei, kNuclearStartWidth, initial_rng_);
    orbitals_->evaluate_values(positions_, values_);
    return values_.topRows(spec_.n).transpose();
  }

  Move make_move(const Eigen::MatrixXd&) override {
    throw std::logic_error("workload: molecule with cycles makes cycles (next_cycle), not moves");
  }

  std::vector<std::pair<std::string, std::string>> kind_parameters() const override {
    return {{"file", spec_.file},
            {"source", molecule_->source},
            {"spin", spec_.spin},
            {"orbitals", "gaussian-" + spec_.orbitals},
            {"delta", to_text(spec_.delta)},
            {"cycles", "excitations of the expansion"},
            {"excited_determinants", std::to_string(excitations_.size())},
            {"orientation", "M(j, t) = phi_t(r_j): a column per orbital"}};
  }

 private:
  static constexpr int kMaxEmptySweeps = 1000;

  /// Orbital o at every electron: a column of M.
  Eigen::VectorXd column(int orbital) const { return values_.row(row_of_.at(orbital)).transpose(); }

  /// Sweeps until a move is accepted (see the file comment); values_ then
  /// holds the orbitals at the new positions.
  void walk_sweep() {
    const Eigen::Index n = spec_.n;
    for (int sweep = 0; sweep < kMaxEmptySweeps; ++sweep) {
      bool moved = false;
      for (Eigen::Index j = 0; j < n; ++j) {
        Eigen::Matrix3Xd trial = positions_.col(j);
        for (int d = 0; d < 3; ++d) trial(d, 0) += spec_.delta * column_rng_.normal();
        Eigen::MatrixXd at_trial;
        orbitals_->evaluate_values(trial, at_trial);
        if (!lu_) lu_.emplace(values_.topRows(n));
        const double rho = lu_->solve(at_trial.topRows(n))(j);
        if (order_rng_.uniform() < rho * rho) {
          positions_.col(j) = trial.col(0);
          values_.col(j) = at_trial.col(0);
          lu_.reset();
          moved = true;
        }
      }
      if (moved) return;
    }
    throw std::runtime_error("workload: " + std::to_string(kMaxEmptySweeps) +
                             " sweeps in a row accepted no move: the step delta is too large "
                             "for this molecule");
  }

  std::shared_ptr<const MolecularWavefunction> molecule_;
  std::vector<std::vector<int>> excitations_;
  std::vector<int> used_;
  std::map<int, Eigen::Index> row_of_;
  std::unique_ptr<MolecularOrbitals> orbitals_;
  Eigen::Matrix3Xd positions_;
  Eigen::MatrixXd values_;  // used_ orbitals x electrons at positions_
  std::optional<Eigen::PartialPivLU<Eigen::MatrixXd>> lu_;  // of the reference rows of values_
  std::size_t next_ = 0;    // 2k: excite k, 2k + 1: restore k, 2K: move on
};

}  // namespace

std::vector<OrbitalReplacement> excitation_of(const std::vector<int>& occupied) {
  std::vector<OrbitalReplacement> r;
  for (std::size_t t = 0; t < occupied.size(); ++t)
    if (occupied[t] != int(t)) r.push_back({Eigen::Index(t), occupied[t]});
  return r;
}

std::vector<std::vector<int>> spin_excitations(const MolecularWavefunction& molecule,
                                               const std::string& spin) {
  const Eigen::Index n = spin == "up" ? molecule.electrons_up : molecule.electrons_down;
  const Eigen::Index mos = (spin == "up" ? molecule.mo_up : molecule.mo_down).cols();
  std::vector<std::vector<int>> distinct;
  for (std::size_t k = 0; k < molecule.determinants.size(); ++k) {
    const std::vector<int>& d = occupation(molecule.determinants[k], spin);
    if (Eigen::Index(d.size()) != n)
      bad("determinant " + std::to_string(k) + " has " + std::to_string(d.size()) + " spin-" +
          spin + " orbitals for " + std::to_string(n) + " electrons");
    for (int o : d)
      if (o < 0 || o >= mos)
        bad("determinant " + std::to_string(k) + " occupies MO " + std::to_string(o) + " of " +
            std::to_string(mos));
    if (!excitation_of(d).empty() && std::find(distinct.begin(), distinct.end(), d) == distinct.end())
      distinct.push_back(d);
  }
  return distinct;
}

std::unique_ptr<Workload> make_molecule_cycles(const WorkloadSpec& spec,
                                               std::shared_ptr<const MolecularWavefunction> molecule) {
  if (molecule->determinants.empty())
    bad(spec.file + " holds one determinant, no expansion: cycles = true needs a determinant "
                    "expansion (a TREXIO file with a determinant list)");
  auto excitations = spin_excitations(*molecule, spec.spin);
  if (excitations.empty())
    bad("no determinant of the expansion in " + spec.file + " differs from the reference in spin " +
        spec.spin + ": there are no cycles to make");
  return std::make_unique<MoleculeCyclesWorkload>(spec, std::move(molecule), std::move(excitations));
}

}  // namespace slaterlab
