#pragma once
// One VMC walker: N electron positions, an orbital set, a determinant
// strategy holding the Slater matrix A(i, j) = phi_i(r_j) (electron j owns
// column j), and its own random stream. local_energy() is that of N
// non-interacting fermions in the trap V = w^2 r^2 / 2 (docs/vmc.md);
// kinetic_energy() alone serves any Hamiltonian (hamiltonian.hpp), which
// adds its potential over all spins. In a periodic cell (set_cell) every
// trial position is wrapped into [-L/2, L/2)^3.
//
// A sweep gives every electron one Gaussian trial move r_j' = r_j + step g_j
// and decides it with the Metropolis rule u < |rho|^2 (u uniform in [0, 1),
// so the acceptance probability is min(1, |rho|^2)). Schemes: scheme.hpp.
//
// Variates read, in this order and whatever the decisions (the contract that
// lets two walkers with equal streams run in lockstep):
//   place_random:     3N normals, electron 0's x, y, z first.
//   place_uniform:    3N uniforms, electron 0's x, y, z first.
//   place_near_nuclei: per electron 1 uniform, 3 normals (molecular_start.hpp).
//   pbp:              per electron j = 0..N-1: 3 normals (x, y, z), 1 uniform.
//   qs, qs-batched:   3N normals (electron 0's x, y, z first), then N uniforms.
// The strategy calls per sweep of each scheme are listed in walker.cpp.
// Errors: place() propagates SingularMatrixError from the strategy's reset();
// a sweep propagates it when an accepted breakdown cannot be refactorised.

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <vector>

#include "slaterlab/strategies/determinant/determinant_updater.hpp"
#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"
#include "slaterlab/strategies/orbitals/orbital_set.hpp"
#include "slaterlab/strategies/sampling/random_source.hpp"
#include "slaterlab/strategies/sampling/scheme.hpp"

namespace slaterlab {

/// Running totals since place().
struct WalkerCounts {
  std::int64_t proposed = 0;
  std::int64_t accepted = 0;
  /// Decision ratios the strategy flagged as breakdown.
  std::int64_t decision_breakdowns = 0;
  /// qs only: ratios of the application pass (sequential, against the partly
  /// updated determinant) flagged as breakdown; the joint configuration is
  /// then near a node although each move alone was not.
  std::int64_t apply_breakdowns = 0;
};

class Walker {
 public:
  /// The orbital set must outlive the walker and have as many orbitals as the
  /// strategy will see columns. Throws std::invalid_argument for a null
  /// strategy or random source, or an omega that is not finite and positive.
  Walker(const OrbitalSet& orbitals, std::unique_ptr<DeterminantUpdater> updater,
         std::unique_ptr<RandomSource> random, double omega);

  /// Starts from the given positions (3 x N, N = orbitals.size()): builds A
  /// and resets the strategy and the counts.
  void place(const Eigen::Matrix3Xd& positions);
  /// Starts from positions width * N(0, 1) per coordinate from the walker's
  /// stream (3N normals).
  void place_random(double width);
  /// Starts from positions uniform in the cube [-L/2, L/2)^3, L =
  /// cell_length (3N uniforms). Throws std::invalid_argument for an L that
  /// is not finite and positive.
  void place_uniform(double cell_length);
  /// Starts each electron at width * N(0, 1) around a nucleus drawn in
  /// proportion to its charge (positions_near_nuclei, molecular_start.hpp).
  void place_near_nuclei(const std::vector<Nucleus>& nuclei, double width);
  /// Wraps every trial position into [-L/2, L/2)^3 (L > 0), or not (L = 0).
  /// Throws std::invalid_argument for a negative or non-finite L.
  void set_cell(double cell_length);

  /// One sweep: every electron gets one trial move. Throws std::logic_error
  /// before place(), std::invalid_argument for a step that is not finite and >= 0.
  void sweep(Scheme scheme, double step);

  /// E_L = -1/2 trace(A^{-1} L) + sum_j w^2 |r_j|^2 / 2 at the current
  /// positions, A^{-1} from the strategy's maintained state.
  double local_energy() const;
  /// -1/2 trace(A^{-1} L) at the current positions: the kinetic energy of
  /// the determinant, from the strategy's maintained state.
  double kinetic_energy() const;

  /// Whether to flush() the strategy after every pbp/qs-batched sweep.
  void set_flush_each_sweep(bool flush) { flush_each_sweep_ = flush; }

  Eigen::Index size() const { return orbitals_->size(); }
  double omega() const { return omega_; }
  const Eigen::Matrix3Xd& positions() const { return positions_; }
  /// Per electron, for the last sweep: decided accept (1) or reject (0), and
  /// the ratio the decision used.
  const std::vector<std::uint8_t>& decisions() const { return decisions_; }
  const std::vector<double>& ratios() const { return ratios_; }
  const WalkerCounts& counts() const { return counts_; }
  const OrbitalSet& orbitals() const { return *orbitals_; }
  const DeterminantUpdater& updater() const { return *updater_; }
  DeterminantUpdater& updater() { return *updater_; }

 private:
  void require_placed() const;
  void draw_trial(Eigen::Index j, double step);  // 3 normals into trials_.col(j)
  void draw_all_trials(double step);             // 3N normals
  void draw_uniforms();                          // N uniforms into uniforms_
  /// ratio() for electron j's trial column (batch_ column j, or values_ for pbp).
  Ratio propose(Eigen::Index j, const Eigen::MatrixXd& values, Eigen::Index col);
  void decide(Eigen::Index j, const Ratio& ratio, double u);
  void commit(Eigen::Index j);  // accept() and move r_j
  void sweep_pbp(double step);
  void sweep_qs(double step);
  void sweep_qs_batched(double step);

  const OrbitalSet* orbitals_;
  std::unique_ptr<DeterminantUpdater> updater_;
  std::unique_ptr<RandomSource> random_;
  double omega_;
  bool flush_each_sweep_ = true;
  bool placed_ = false;
  double cell_ = 0.0;  // periodic cube side; 0: open

  Eigen::Matrix3Xd positions_;
  Eigen::Matrix3Xd trials_;    // trial positions of the current sweep
  Eigen::Matrix3Xd one_;       // 3 x 1: the single trial position of a pbp move
  Eigen::MatrixXd batch_;      // N x N orbital values at trials_ (qs schemes)
  Eigen::MatrixXd values_;     // N x 1 orbital values at one trial position (pbp)
  Eigen::VectorXd column_;     // the column handed to ratio()
  std::vector<double> uniforms_;
  std::vector<std::uint8_t> decisions_;
  std::vector<double> ratios_;
  WalkerCounts counts_;
};

}  // namespace slaterlab
