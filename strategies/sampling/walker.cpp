#include "slaterlab/strategies/sampling/walker.hpp"

// The variates each scheme reads are the header's contract.
// For N = 1 all three schemes read the same sequence and make the same moves.
//
// Strategy calls per sweep:
//   pbp:         N x [ratio(j, phi(r_j')); accept() | reject()]
//   qs:          N x [ratio(j, phi(r_j')); reject()]   (all against the same state)
//                then for each accepted j in increasing order
//                [ratio(j, phi(r_j')); accept()], then flush().
//   qs-batched:  N x [ratio(j, phi(r_j')); accept() | reject()]
// then flush() if flush_each_sweep (default; QMCPACK likewise completes the
// delayed updates before measuring), always for qs.
//
// The local energy is measured from the strategy's maintained state
// (local_energy.hpp).

#include <cmath>
#include <stdexcept>
#include <string>

#include "slaterlab/strategies/sampling/local_energy.hpp"
#include "slaterlab/strategies/sampling/molecular_start.hpp"

namespace slaterlab {

Walker::Walker(const OrbitalSet& orbitals, std::unique_ptr<DeterminantUpdater> updater,
               std::unique_ptr<RandomSource> random, double omega)
    : orbitals_(&orbitals), updater_(std::move(updater)), random_(std::move(random)), omega_(omega) {
  if (!updater_) throw std::invalid_argument("Walker: null determinant strategy");
  if (!random_) throw std::invalid_argument("Walker: null random source");
  if (!(std::isfinite(omega) && omega > 0.0))
    throw std::invalid_argument("Walker: omega must be finite and > 0, got " + std::to_string(omega));
  const Eigen::Index n = orbitals.size();
  positions_.setZero(3, n);
  trials_.setZero(3, n);
  one_.setZero(3, 1);
  uniforms_.assign(std::size_t(n), 0.0);
  decisions_.assign(std::size_t(n), 0);
  ratios_.assign(std::size_t(n), 0.0);
}

void Walker::place(const Eigen::Matrix3Xd& positions) {
  if (positions.cols() != size())
    throw std::invalid_argument("Walker::place: " + std::to_string(positions.cols()) +
                                " positions for " + std::to_string(size()) + " orbitals");
  positions_ = positions;
  Eigen::MatrixXd a;
  orbitals_->evaluate_values(positions_, a);
  updater_->reset(a);
  counts_ = {};
  placed_ = true;
}

void Walker::place_random(double width) {
  if (!(std::isfinite(width) && width > 0.0))
    throw std::invalid_argument("Walker::place_random: width must be finite and > 0");
  Eigen::Matrix3Xd r(3, size());
  for (Eigen::Index j = 0; j < size(); ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = width * random_->normal();
  place(r);
}

void Walker::place_uniform(double cell_length) {
  if (!(std::isfinite(cell_length) && cell_length > 0.0))
    throw std::invalid_argument("Walker::place_uniform: the cell length must be finite and > 0");
  Eigen::Matrix3Xd r(3, size());
  for (Eigen::Index j = 0; j < size(); ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = cell_length * (random_->uniform() - 0.5);
  place(r);
}

void Walker::place_near_nuclei(const std::vector<Nucleus>& nuclei, double width) {
  place(positions_near_nuclei(size(), nuclei, width, *random_));
}

void Walker::set_cell(double cell_length) {
  if (!(std::isfinite(cell_length) && cell_length >= 0.0))
    throw std::invalid_argument("Walker::set_cell: the cell length must be finite and >= 0");
  cell_ = cell_length;
}

void Walker::require_placed() const {
  if (!placed_) throw std::logic_error("Walker: place() must come first");
}

void Walker::draw_trial(Eigen::Index j, double step) {
  for (int d = 0; d < 3; ++d) trials_(d, j) = positions_(d, j) + step * random_->normal();
  // Periodic orbitals take any position, but cos(k.r) of a walker that has
  // drifted many cells away loses |k.r| eps of accuracy: keep r in the cell.
  if (cell_ > 0.0)
    for (int d = 0; d < 3; ++d) trials_(d, j) -= cell_ * std::floor(trials_(d, j) / cell_ + 0.5);
}

void Walker::draw_all_trials(double step) {
  for (Eigen::Index j = 0; j < size(); ++j) draw_trial(j, step);
}

void Walker::draw_uniforms() {
  for (auto& u : uniforms_) u = random_->uniform();
}

Ratio Walker::propose(Eigen::Index j, const Eigen::MatrixXd& values, Eigen::Index col) {
  column_ = values.col(col);
  return updater_->ratio(j, column_);
}

void Walker::decide(Eigen::Index j, const Ratio& ratio, double u) {
  // u < |rho|^2 accepts with probability min(1, |rho|^2); an infinite |rho|^2
  // accepts, a zero one (a reported breakdown with no finite value) never does.
  const double r2 = ratio.value * ratio.value;
  decisions_[std::size_t(j)] = u < r2 ? 1 : 0;
  ratios_[std::size_t(j)] = ratio.value;
  ++counts_.proposed;
  if (ratio.breakdown) ++counts_.decision_breakdowns;
}

void Walker::commit(Eigen::Index j) {
  updater_->accept();
  positions_.col(j) = trials_.col(j);
  ++counts_.accepted;
}

void Walker::sweep(Scheme scheme, double step) {
  require_placed();
  if (!(std::isfinite(step) && step >= 0.0))
    throw std::invalid_argument("Walker::sweep: step must be finite and >= 0");
  switch (scheme) {
    case Scheme::pbp: sweep_pbp(step); break;
    case Scheme::qs: sweep_qs(step); break;
    case Scheme::qs_batched: sweep_qs_batched(step); break;
  }
}

void Walker::sweep_pbp(double step) {
  for (Eigen::Index j = 0; j < size(); ++j) {
    draw_trial(j, step);
    one_.col(0) = trials_.col(j);
    orbitals_->evaluate_values(one_, values_);
    const Ratio ratio = propose(j, values_, 0);
    decide(j, ratio, random_->uniform());
    if (decisions_[std::size_t(j)]) {
      commit(j);
    } else {
      updater_->reject();
    }
  }
  if (flush_each_sweep_) updater_->flush();
}

void Walker::sweep_qs(double step) {
  draw_all_trials(step);
  orbitals_->evaluate_values(trials_, batch_);
  draw_uniforms();
  // Decision pass: every ratio against the fixed configuration of the
  // previous sweep (reject() leaves the strategy bit-for-bit unchanged).
  for (Eigen::Index j = 0; j < size(); ++j) {
    const Ratio ratio = propose(j, batch_, j);
    updater_->reject();
    decide(j, ratio, uniforms_[std::size_t(j)]);
  }
  // Application pass: the accepted columns as one rank-m update. Each ratio
  // here is sequential (against the partly updated determinant): the
  // strategy needs it to update, and it is NOT the decision ratio.
  for (Eigen::Index j = 0; j < size(); ++j) {
    if (!decisions_[std::size_t(j)]) continue;
    if (propose(j, batch_, j).breakdown) ++counts_.apply_breakdowns;
    commit(j);
  }
  updater_->flush();
}

void Walker::sweep_qs_batched(double step) {
  draw_all_trials(step);
  orbitals_->evaluate_values(trials_, batch_);
  draw_uniforms();
  for (Eigen::Index j = 0; j < size(); ++j) {
    const Ratio ratio = propose(j, batch_, j);
    decide(j, ratio, uniforms_[std::size_t(j)]);
    if (decisions_[std::size_t(j)]) {
      commit(j);
    } else {
      updater_->reject();
    }
  }
  if (flush_each_sweep_) updater_->flush();
}

double Walker::local_energy() const {
  return kinetic_energy() + trap_potential(positions_, omega_);
}

double Walker::kinetic_energy() const {
  require_placed();
  OrbitalVGL vgl;
  orbitals_->evaluate_vgl(positions_, vgl);
  return slaterlab::kinetic_energy(updater_->maintained(), vgl.laplacian);
}

}  // namespace slaterlab
