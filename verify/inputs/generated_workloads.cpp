#include "verify/inputs/generated_workloads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "verify/inputs/random_matrices.hpp"
#include "verify/inputs/workload_base.hpp"

// The workload kinds (the contract is in the header).
//
// Random streams: Rng(seed, kWorkloadStreams + i) with i = 0 for the
// initial matrix (and randsvd's U, Sigma, V), 1 for the new-column
// variates, 2 for the electron choice and the adversarial cycle layout. So
// the initial matrix does not depend on the electron order, and the columns
// drawn do not depend on which electrons were picked (except where a kind
// reads the current column). The ids sit far from small integers so that
// other users of the same seed (say an acceptance stream 1) stay
// independent of the workload.
//
// Electron order: "sweep" moves electron (move index mod N), as a QMC sweep;
// "random" draws it uniformly (Rng::index). The adversarial kind lays its
// cycles out by the same rule (see below).
//
// Kinds:
// - gaussian: A iid N(0,1); new columns iid N(0,1).
// - randsvd: A = U diag(sigma) V^T, U and V Haar-random orthogonal
//   (randsvd, random_matrices.hpp), sigma from randsvd_singular_values(n, kappa, mode),
//   so the initial matrix has cond_2 = kappa exactly (to rounding).
//   New column a' = U diag(sigma) g / sqrt(N), g iid N(0,1): a column of
//   the same scale as A's own (V^T's columns have unit norm, g / sqrt(N)
//   unit expected norm) that keeps the left singular structure U Sigma.
//   Then A' = U Sigma W, W = V^T with some columns replaced by g / sqrt(N), and
//       kappa ||W^T e_1|| / ||W^T e_N|| <= cond_2(A') <= kappa cond_2(W)
//   (submultiplicativity; ||Sigma W|| >= sigma_1 ||W^T e_1|| and
//   sigma_min(Sigma W) <= sigma_N ||W^T e_N||). The rows of W have norms near
//   1, so cond_2(A') >= ~kappa. Once every column has been replaced, W is a
//   Gaussian matrix of variance 1/N: cond_2(W) = O(N), with the tail
//   P(cond_2(W) > x N) < 5.6 / x (Azais-Wschebor). Each move can bring such
//   a near-dependence, so over a long run cond_2(A) is typically ~kappa N / 2
//   (measured at sweep ends) with rare excursions to 1e3-1e4 kappa N. The
//   ratio rho = e_k^T W^{-1} g / sqrt(N) does not depend on kappa: the
//   workload stresses the conditioning of the inverse, not the ratios.
// - small-step: A iid N(0,1); a' = a_k + delta * g, g iid N(0,1) (DMC-like).
// - randsvd-step: the randsvd initial matrix (kappa, mode) and steps of its
//   columns' law, a' = a_k + delta U Sigma g / sqrt(N): ratios near 1 at any
//   kappa.
//   rho - 1 = delta * (row k of A^{-1}) . g. For a Gaussian column a_k of
//   entry variance s^2, independent of the others, this is delta / s times
//   a standard Cauchy variate (a ratio of two independent normals), whatever
//   N: the median of |rho - 1| is delta / s, and P(|rho - 1| > delta t / s) =
//   (2/pi) atan(1/t). Columns random-walk, s^2 = 1 + m delta^2 after m moves
//   of that column.
// - adversarial: chained near-singular updates, in cycles of
//   chain + hold + chain moves on distinct columns c_0 .. c_chain:
//     collapse, t = 1..chain: a'_{c_t} = a_{c_{t-1}} + eta ||a_{c_{t-1}}|| g/||g||
//       (a_{c_{t-1}} read from `current`, so the chain builds on itself);
//       rho = eta ||a_{c_{t-1}}|| (row c_t of A^{-1}) . g/||g||, i.e. eta times a
//       typical ratio; afterwards cond_2(A) >= sqrt(2) / eta (A (e_{c_t} -
//       e_{c_{t-1}}) has norm eta ||a_{c_{t-1}}|| <= eta ||A||);
//     hold, `hold` moves: fresh N(0,1) columns into columns outside the chain
//       while the matrix is near-singular;
//     release, t = chain..1: a'_{c_t} = fresh N(0,1) column; rho ~ 1/eta.
//   After a cycle every column touched holds a fresh Gaussian column, so the
//   matrix is again an iid N(0,1) matrix in distribution: well conditioned
//   (cond_2 = O(N)), with the intermediate ratios near the breakdown
//   threshold. Layout: "sweep" takes c_i = (s + i) mod N with s = cycle *
//   (chain + 1) mod N and the hold columns cycling through the rest in
//   increasing order after c_chain; "random" takes c_0..c_chain distinct
//   uniform (partial Fisher-Yates) and each hold column uniform among the
//   rest. Designed for forced acceptance: a Metropolis test would reject the
//   collapses (|rho|^2 ~ eta^2).
// - excitation-cycles: update cycles as a multi-determinant expansion makes
//   them (next_cycle, not next_move). A iid N(0,1). Each cycle has rank m
//   uniform in 1..`rank` and acts on the columns p..p+m-1, p uniform in
//   0..N-m. With probability `shift` (and m >= 2) it inserts a fresh N(0,1)
//   column at p and shifts the block by one, dropping column p+m-1, in the
//   order an expansion writes it: a_{p+t} := a_{p+t-1} for t = 1..m-1 (each
//   a copy of its left neighbour: every intermediate matrix is exactly
//   singular), then a_p := the fresh column. Otherwise the m columns get
//   fresh N(0,1) columns in order. A_after is again iid N(0,1) up to a
//   permutation of columns: well conditioned. electron_order is not used.
// - singular flag (any kind): column N-1 of the initial matrix is set to a
//   copy of column 0 (for N = 1 the matrix is set to 0), so the initial
//   matrix is exactly singular. Note that LU in floating point generally
//   meets a pivot of order eps ||A|| rather than an exact 0.
// - slater and electron-gas walk electrons through orbitals
//   (walk_workloads.cpp); replay reads a file (replay_workload.cpp).

namespace slaterlab {
namespace {

using namespace workload_detail;

class GaussianWorkload final : public WorkloadBase {
 public:
  using WorkloadBase::WorkloadBase;

 protected:
  Eigen::MatrixXd make_initial() override { return initial_rng_.normal_matrix(spec_.n, spec_.n); }
  Move make_move(const Eigen::MatrixXd&) override {
    const Eigen::Index k = next_electron();
    return {k, gaussian_column()};
  }
};

class SmallStepWorkload final : public WorkloadBase {
 public:
  using WorkloadBase::WorkloadBase;

 protected:
  Eigen::MatrixXd make_initial() override { return initial_rng_.normal_matrix(spec_.n, spec_.n); }
  Move make_move(const Eigen::MatrixXd& current) override {
    const Eigen::Index k = next_electron();
    Eigen::VectorXd step = gaussian_column();
    step *= spec_.delta;
    return {k, current.col(k) + step};
  }
  std::vector<std::pair<std::string, std::string>> kind_parameters() const override {
    return {{"delta", to_text(spec_.delta)}};
  }
};

class RandsvdWorkload : public WorkloadBase {
 public:
  using WorkloadBase::WorkloadBase;

 protected:
  Eigen::MatrixXd make_initial() override {
    const Eigen::MatrixXd gaussian_u = initial_rng_.normal_matrix(spec_.n, spec_.n);
    const Eigen::MatrixXd gaussian_v = initial_rng_.normal_matrix(spec_.n, spec_.n);
    const RandsvdFactors factors = randsvd(
        gaussian_u, gaussian_v, randsvd_singular_values(spec_.n, spec_.kappa, spec_.mode));
    u_sigma_ = factors.u_sigma;
    return factors.matrix();
  }
  // a' = U Sigma g / sqrt(N): a column of the same law as U Sigma V^T's
  // columns up to the orthogonality between them (see the header).
  Move make_move(const Eigen::MatrixXd&) override {
    const Eigen::Index k = next_electron();
    return {k, randsvd_column()};
  }
  std::vector<std::pair<std::string, std::string>> kind_parameters() const override {
    std::vector<std::pair<std::string, std::string>> p = {{"kappa", to_text(spec_.kappa)},
                                                          {"mode", spec_.mode}};
    if (spec_.kind == "randsvd-step") p.emplace_back("delta", to_text(spec_.delta));
    return p;
  }

  /// U Sigma g / sqrt(N): a column of the initial matrix's law.
  Eigen::VectorXd randsvd_column() {
    Eigen::VectorXd g = gaussian_column();
    g *= 1.0 / std::sqrt(static_cast<double>(spec_.n));
    return u_sigma_ * g;
  }

 private:
  Eigen::MatrixXd u_sigma_;
};

// randsvd-step: the randsvd initial matrix, and small steps of the same law,
// a' = a_k + delta U Sigma g / sqrt(N): ratios near 1 at any kappa (the
// high-kappa, high-acceptance regime of a DMC-like walk).
class RandsvdStepWorkload final : public RandsvdWorkload {
 public:
  using RandsvdWorkload::RandsvdWorkload;

 protected:
  Move make_move(const Eigen::MatrixXd& current) override {
    const Eigen::Index k = next_electron();
    return {k, current.col(k) + spec_.delta * randsvd_column()};
  }
};

// Cycles of collapse / hold / release moves; see the header for the design.
class AdversarialWorkload final : public WorkloadBase {
 public:
  using WorkloadBase::WorkloadBase;

 protected:
  Eigen::MatrixXd make_initial() override { return initial_rng_.normal_matrix(spec_.n, spec_.n); }

  Move make_move(const Eigen::MatrixXd& current) override {
    const Eigen::Index cycle_length = 2 * spec_.chain + spec_.hold;
    const Eigen::Index p = moves_ % cycle_length;
    if (p == 0) lay_out_cycle(moves_ / cycle_length);
    if (p < spec_.chain) return collapse(current, p + 1);
    if (p < spec_.chain + spec_.hold) {
      return {hold_[static_cast<std::size_t>(p - spec_.chain)], gaussian_column()};
    }
    const Eigen::Index t = spec_.chain - (p - spec_.chain - spec_.hold);
    return {chain_[static_cast<std::size_t>(t)], gaussian_column()};
  }

  std::vector<std::pair<std::string, std::string>> kind_parameters() const override {
    return {{"eta", to_text(spec_.eta)},
            {"chain", std::to_string(spec_.chain)},
            {"hold", std::to_string(spec_.hold)}};
  }

 private:
  // Column c_t becomes c_{t-1} plus a perturbation of relative size eta in a
  // uniformly random direction.
  Move collapse(const Eigen::MatrixXd& current, Eigen::Index t) {
    const Eigen::Index k = chain_[static_cast<std::size_t>(t)];
    const auto anchor = current.col(chain_[static_cast<std::size_t>(t - 1)]);
    Eigen::VectorXd g = gaussian_column();
    const double g_norm = g.norm();  // > 0 unless all N variates are exactly 0
    g *= spec_.eta * anchor.norm() / g_norm;
    return {k, anchor + g};
  }

  void lay_out_cycle(Eigen::Index cycle) {
    const Eigen::Index n = spec_.n;
    const auto links = static_cast<std::size_t>(spec_.chain + 1);
    std::vector<Eigen::Index> rest;  // columns outside the chain
    chain_.assign(links, 0);
    if (spec_.electron_order == "sweep") {
      const Eigen::Index s = (cycle % n) * (spec_.chain + 1) % n;
      for (std::size_t i = 0; i < links; ++i) chain_[i] = (s + static_cast<Eigen::Index>(i)) % n;
      for (Eigen::Index i = spec_.chain + 1; i < n; ++i) rest.push_back((s + i) % n);
    } else {
      std::vector<Eigen::Index> perm(static_cast<std::size_t>(n));
      std::iota(perm.begin(), perm.end(), Eigen::Index{0});
      for (std::size_t i = 0; i < links; ++i) {
        const auto j = i + order_rng_.index(static_cast<std::uint64_t>(n) - i);
        std::swap(perm[i], perm[j]);
        chain_[i] = perm[i];
      }
      rest.assign(perm.begin() + static_cast<std::ptrdiff_t>(links), perm.end());
    }
    hold_.assign(static_cast<std::size_t>(spec_.hold), 0);
    for (std::size_t m = 0; m < hold_.size(); ++m) {
      hold_[m] = spec_.electron_order == "sweep"
                     ? rest[m % rest.size()]
                     : rest[order_rng_.index(static_cast<std::uint64_t>(rest.size()))];
    }
  }

  std::vector<Eigen::Index> chain_;  // c_0 .. c_chain of the current cycle
  std::vector<Eigen::Index> hold_;   // columns moved while collapsed
};

/// Slater matrices of the lowest N harmonic-oscillator orbitals of
/// frequency alpha at walker positions: A(i, j) = phi_i(r_j). A move
/// displaces electron k by delta * g (g ~ N(0, I_3)); the new column is
/// phi(r_k'). Whether the previous proposal was accepted is read off the
/// current matrix: its column k is then bit-for-bit the proposed column
/// (columns are carried exactly), and the walker moves there.
// The excitation-cycles workload (see the header).
class ExcitationCyclesWorkload final : public WorkloadBase {
 public:
  using WorkloadBase::WorkloadBase;

  bool cycles() const override { return true; }

  std::vector<Move> next_cycle(const Eigen::MatrixXd& current) override {
    require_current(current, "next_cycle");
    const auto draw = [&](Eigen::Index count) {
      return Eigen::Index(order_rng_.index(std::uint64_t(count)));
    };
    const Eigen::Index m = 1 + draw(spec_.rank);
    const Eigen::Index p = draw(spec_.n - m + 1);
    const bool shift = order_rng_.uniform() < spec_.shift && m >= 2;
    std::vector<Move> cycle;
    if (shift) {
      for (Eigen::Index t = 1; t < m; ++t) cycle.push_back({p + t, current.col(p + t - 1)});
      cycle.push_back({p, gaussian_column()});
    } else {
      for (Eigen::Index t = 0; t < m; ++t) cycle.push_back({p + t, gaussian_column()});
    }
    moves_ += m;
    return cycle;
  }

 protected:
  Eigen::MatrixXd make_initial() override { return initial_rng_.normal_matrix(spec_.n, spec_.n); }
  Move make_move(const Eigen::MatrixXd&) override {
    throw std::logic_error("workload: excitation-cycles makes cycles (next_cycle), not moves");
  }
  std::vector<std::pair<std::string, std::string>> kind_parameters() const override {
    return {{"rank", std::to_string(spec_.rank)}, {"shift", to_text(spec_.shift)}};
  }
};

template <class Kind>
std::unique_ptr<Workload> make(const WorkloadSpec& spec) {
  return std::make_unique<Kind>(spec);
}

std::unique_ptr<Workload> make_adversarial(const WorkloadSpec& s) {
  // The chain needs chain + 1 distinct columns; hold moves need one more.
  const Eigen::Index need = s.chain + 1 + (s.hold > 0 ? 1 : 0);
  if (s.n < need) {
    bad("adversarial with chain " + std::to_string(s.chain) + " and hold " +
        std::to_string(s.hold) + " needs n >= " + std::to_string(need) + ", got " +
        std::to_string(s.n));
  }
  return std::make_unique<AdversarialWorkload>(s);
}

std::unique_ptr<Workload> make_excitation_cycles(const WorkloadSpec& s) {
  if (s.rank > s.n)
    bad("rank must lie in [1, n = " + std::to_string(s.n) + "], got " + std::to_string(s.rank));
  return std::make_unique<ExcitationCyclesWorkload>(s);
}

}  // namespace

std::vector<WorkloadKind> generated_workloads() {
  return {{"gaussian", make<GaussianWorkload>, false},
          {"randsvd", make<RandsvdWorkload>, false},
          {"small-step", make<SmallStepWorkload>, false},
          {"randsvd-step", make<RandsvdStepWorkload>, false},
          {"adversarial", make_adversarial, false},
          {"excitation-cycles", make_excitation_cycles, true}};
}

}  // namespace slaterlab
