#include "verify/inputs/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <Eigen/Householder>
#include <Eigen/QR>

#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "verify/inputs/replay.hpp"

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
//   (haar_orthogonal), sigma from randsvd_singular_values(n, kappa, mode),
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
// - replay: the initial matrix and the moves of a user's HDF5 file, in order
//   (verify/inputs/replay.hpp; schema in docs/replay.md). n must equal the
//   file's N; the other parameters are not used. Moves may carry the
//   recorded decision (Move::accept, Move::uniform).

namespace slaterlab {

namespace {

// Stream ids of Rng(seed, .), fixed so that results stay reproducible.
constexpr std::uint64_t kInitialStream = kWorkloadStreams + 0;
constexpr std::uint64_t kColumnStream = kWorkloadStreams + 1;
constexpr std::uint64_t kOrderStream = kWorkloadStreams + 2;

const std::vector<std::string> kKinds = {"gaussian", "randsvd", "small-step", "randsvd-step",
                                          "adversarial", "slater"};
const std::vector<std::string> kCycleKinds = {"excitation-cycles"};
const std::vector<std::string> kModes = {"geometric", "arithmetic", "clustered-small",
                                         "clustered-large"};
const std::vector<std::string> kOrders = {"sweep", "random", "burst"};
// "burst": one random electron moves this many times in a row.
constexpr Eigen::Index kBurst = 4;

// Shortest text that reads back to the same double.
std::string to_text(double x) {
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return std::string(buf.data(), res.ptr);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& s : names) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& s) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument("workload: " + what);
}

void check_positive_finite(const char* name, double x) {
  if (!(std::isfinite(x) && x > 0.0)) {
    bad(std::string(name) + " must be finite and > 0, got " + to_text(x));
  }
}

void check_kappa(double kappa) {
  if (!(std::isfinite(kappa) && kappa >= 1.0)) {
    bad("kappa must be finite and >= 1, got " + to_text(kappa));
  }
}

void check_mode(const std::string& mode) {
  if (!contains(kModes, mode)) {
    bad("unknown randsvd mode '" + mode + "' (valid: " + join(kModes) + ")");
  }
}

void validate(const WorkloadSpec& s) {
  if (!contains(kKinds, s.kind) && !contains(kCycleKinds, s.kind)) {
    bad("unknown kind '" + s.kind + "' (valid: " + join(kKinds) + ", " + join(kCycleKinds) +
        ", replay)");
  }
  if (s.n < 1) bad("n must be >= 1, got " + std::to_string(s.n));
  if (!contains(kOrders, s.electron_order)) {
    bad("unknown electron_order '" + s.electron_order + "' (valid: " + join(kOrders) + ")");
  }
  check_kappa(s.kappa);
  check_mode(s.mode);
  check_positive_finite("delta", s.delta);
  check_positive_finite("eta", s.eta);
  check_positive_finite("alpha", s.alpha);
  if (s.chain < 1) bad("chain must be >= 1, got " + std::to_string(s.chain));
  if (s.hold < 0) bad("hold must be >= 0, got " + std::to_string(s.hold));
  if (s.rank < 1 || (s.kind == "excitation-cycles" && s.rank > s.n)) {
    bad("rank must lie in [1, n = " + std::to_string(s.n) + "], got " + std::to_string(s.rank));
  }
  if (!(s.shift >= 0.0 && s.shift <= 1.0)) bad("shift must lie in [0, 1], got " + to_text(s.shift));
  if (s.kind == "adversarial") {
    // The chain needs chain + 1 distinct columns; hold moves need one more.
    const Eigen::Index need = s.chain + 1 + (s.hold > 0 ? 1 : 0);
    if (s.n < need) {
      bad("adversarial with chain " + std::to_string(s.chain) + " and hold " +
          std::to_string(s.hold) + " needs n >= " + std::to_string(need) + ", got " +
          std::to_string(s.n));
    }
  }
}

// Shared machinery: streams, electron order, the singular flag, the
// call-order checks and the common parameters.
class WorkloadBase : public Workload {
 public:
  explicit WorkloadBase(const WorkloadSpec& spec)
      : spec_(spec),
        initial_rng_(spec.seed, kInitialStream),
        column_rng_(spec.seed, kColumnStream),
        order_rng_(spec.seed, kOrderStream) {}

  std::string name() const override { return spec_.kind; }

  Eigen::MatrixXd initial_matrix() final {
    if (!initial_) {
      Eigen::MatrixXd a = make_initial();
      if (spec_.singular) make_singular(a);
      initial_ = std::move(a);
    }
    return *initial_;
  }

  Move next_move(const Eigen::MatrixXd& current) final {
    require_current(current, "next_move");
    Move m = make_move(current);
    ++moves_;
    return m;
  }

  std::vector<std::pair<std::string, std::string>> parameters() const final {
    std::vector<std::pair<std::string, std::string>> p = {
        {"kind", spec_.kind},
        {"n", std::to_string(spec_.n)},
        {"seed", std::to_string(spec_.seed)},
        {"electron_order", spec_.electron_order},
        {"singular", spec_.singular ? "true" : "false"},
        {"rng", "mt19937_64 seeded by splitmix64(splitmix64(seed) ^ stream); polar normals"},
    };
    for (auto& kv : kind_parameters()) p.push_back(std::move(kv));
    return p;
  }

 protected:
  virtual Eigen::MatrixXd make_initial() = 0;
  virtual Move make_move(const Eigen::MatrixXd& current) = 0;
  virtual std::vector<std::pair<std::string, std::string>> kind_parameters() const { return {}; }

  void require_current(const Eigen::MatrixXd& current, const char* what) const {
    if (!initial_) throw std::logic_error(std::string("workload: ") + what + " called before initial_matrix");
    if (current.rows() != spec_.n || current.cols() != spec_.n) {
      bad(std::string(what) + " expects a " + std::to_string(spec_.n) + " x " +
          std::to_string(spec_.n) + " matrix, got " + std::to_string(current.rows()) + " x " +
          std::to_string(current.cols()));
    }
  }

  // The electron moved by proposal number moves_.
  Eigen::Index next_electron() {
    if (spec_.electron_order == "sweep") return moves_ % spec_.n;
    if (spec_.electron_order == "burst" && moves_ % kBurst != 0) return burst_electron_;
    burst_electron_ =
        static_cast<Eigen::Index>(order_rng_.index(static_cast<std::uint64_t>(spec_.n)));
    return burst_electron_;
  }

  Eigen::VectorXd gaussian_column() { return column_rng_.normal_vector(spec_.n); }

  const WorkloadSpec spec_;
  Rng initial_rng_;
  Rng column_rng_;
  Rng order_rng_;
  Eigen::Index moves_ = 0;  // proposals returned so far
  Eigen::Index burst_electron_ = 0;

 private:
  static void make_singular(Eigen::MatrixXd& a) {
    if (a.cols() == 1) {
      a.setZero();  // a 1 x 1 matrix has no second column to duplicate
    } else {
      a.col(a.cols() - 1) = a.col(0);
    }
  }

  std::optional<Eigen::MatrixXd> initial_;
};

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
    const Eigen::MatrixXd u = haar_orthogonal(initial_rng_, spec_.n);
    const Eigen::MatrixXd v = haar_orthogonal(initial_rng_, spec_.n);
    const Eigen::VectorXd sigma = randsvd_singular_values(spec_.n, spec_.kappa, spec_.mode);
    u_sigma_ = u * sigma.asDiagonal();
    return u_sigma_ * v.transpose();
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
class SlaterWorkload final : public WorkloadBase {
 public:
  explicit SlaterWorkload(const WorkloadSpec& spec)
      : WorkloadBase(spec), orbitals_(spec.n, spec.alpha) {}

 protected:
  Eigen::MatrixXd make_initial() override {
    positions_.resize(3, spec_.n);
    const double width = 1.0 / std::sqrt(spec_.alpha);  // the ground state's spread
    for (Eigen::Index j = 0; j < spec_.n; ++j)
      for (int d = 0; d < 3; ++d) positions_(d, j) = width * initial_rng_.normal();
    Eigen::MatrixXd a;
    orbitals_.evaluate_values(positions_, a);
    return a;
  }

  Move make_move(const Eigen::MatrixXd& current) override {
    if (pending_ && current.col(pending_->k) == pending_->column) {
      positions_.col(pending_->k) = pending_position_;
    }
    const Eigen::Index k = next_electron();
    pending_position_ = positions_.col(k);
    for (int d = 0; d < 3; ++d) pending_position_(d) += spec_.delta * column_rng_.normal();
    Eigen::MatrixXd column;
    orbitals_.evaluate_values(pending_position_, column);
    pending_ = Move{k, column.col(0)};
    return *pending_;
  }

  std::vector<std::pair<std::string, std::string>> kind_parameters() const override {
    return {{"alpha", to_text(spec_.alpha)}, {"delta", to_text(spec_.delta)},
            {"orbitals", "analytic harmonic oscillator"}};
  }

 private:
  HarmonicOscillatorOrbitals orbitals_;
  Eigen::Matrix3Xd positions_;
  Eigen::Vector3d pending_position_;
  std::optional<Move> pending_;
};

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

namespace fs = std::filesystem;

// ---- the replay workload (its file format is replay.hpp) --------------------

/// FNV-1a, 64 bits, of the file's bytes, as 16 hex digits.
std::string checksum(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t h = 1469598103934665603ull;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h = (h ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
    }
  }
  return fmt::format("{:016x}", h);
}

class ReplayWorkload final : public Workload {
 public:
  ReplayWorkload(const WorkloadSpec& spec, ReplayData data)
      : spec_(spec), data_(std::move(data)), checksum_(checksum(spec.file)) {}

  std::string name() const override { return "replay"; }

  Eigen::MatrixXd initial_matrix() override {
    started_ = true;
    return data_.initial;
  }

  Move next_move(const Eigen::MatrixXd& current) override {
    if (!started_) throw std::logic_error("workload: next_move called before initial_matrix");
    if (current.rows() != data_.n() || current.cols() != data_.n()) {
      throw std::invalid_argument(
          fmt::format("workload: next_move expects a {0} x {0} matrix, "
                      "got {1} x {2}",
                      data_.n(), current.rows(), current.cols()));
    }
    if (next_ >= data_.moves()) {
      throw std::logic_error(
          fmt::format("workload: replay file {} holds only {} moves", spec_.file, data_.moves()));
    }
    const auto t = std::size_t(next_);
    Move move{data_.electron[t], data_.columns.col(next_)};
    if (data_.accept) move.accept = (*data_.accept)[t];
    if (data_.uniform) move.uniform = (*data_.uniform)[t];
    ++next_;
    return move;
  }

  bool cycles() const override { return data_.cycle.has_value(); }

  /// The moves of the next cycle (consecutive moves with one cycle index).
  std::vector<Move> next_cycle(const Eigen::MatrixXd& current) override {
    if (!cycles()) return Workload::next_cycle(current);
    std::vector<Move> cycle{next_move(current)};
    const auto& index = *data_.cycle;
    while (next_ < data_.moves() && index[std::size_t(next_)] == index[std::size_t(next_ - 1)]) {
      cycle.push_back(next_move(current));
    }
    return cycle;
  }

  std::vector<std::pair<std::string, std::string>> parameters() const override {
    std::vector<std::pair<std::string, std::string>> p = {
        {"kind", "replay"},
        {"file", spec_.file},
        {"n", std::to_string(data_.n())},
        {"moves_in_file", std::to_string(data_.file_moves)},
        {"layout", data_.layout},
        {"recorded_accept", data_.accept ? "true" : "false"},
        {"recorded_uniform", data_.uniform ? "true" : "false"},

        {"content_fnv1a64", checksum_},
    };
    if (data_.cycle) {
      p.emplace_back("cycles", std::to_string(data_.cycle->empty() ? 0 : data_.cycle->back() + 1));
    }
    for (const auto& [key, value] : data_.metadata) p.emplace_back("meta." + key, value);
    return p;
  }

 private:
  WorkloadSpec spec_;
  ReplayData data_;
  std::string checksum_;
  std::int64_t next_ = 0;
  bool started_ = false;
};

/// The "replay" workload: spec.file read with read_replay (so a bad file is
/// reported when the workload is built, before any run); spec.n must be the
/// file's N. Moves are served in file order, with the recorded decision and
/// uniform when the file has them. parameters(): file, n, moves_in_file,
/// layout, recorded_accept, recorded_uniform, content_fnv1a64 (a checksum
/// of the file's bytes, so that results name the exact data) and the
/// metadata attributes as "meta.<name>".
std::unique_ptr<Workload> make_replay_workload(const WorkloadSpec& spec) {
  if (spec.file.empty()) throw std::invalid_argument("workload: replay needs a 'file'");
  ReplayData data = read_replay(spec.file, spec.replay_moves);
  if (spec.n != data.n()) {
    throw std::invalid_argument(fmt::format("workload: replay file {} holds N = {}, but n = {}",
                                            spec.file, data.n(), spec.n));
  }
  return std::make_unique<ReplayWorkload>(spec, std::move(data));
}

}  // namespace

std::vector<Move> Workload::next_cycle(const Eigen::MatrixXd&) {
  throw std::logic_error("workload: " + name() + " makes single moves, not cycles");
}

std::vector<std::string> known_workloads() { return kKinds; }

std::vector<std::string> known_cycle_workloads() { return kCycleKinds; }

std::vector<std::string> known_randsvd_modes() { return kModes; }

std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec) {
  if (spec.kind == "replay") return make_replay_workload(spec);  // validates its file
  validate(spec);
  if (spec.kind == "gaussian") return std::make_unique<GaussianWorkload>(spec);
  if (spec.kind == "randsvd") return std::make_unique<RandsvdWorkload>(spec);
  if (spec.kind == "small-step") return std::make_unique<SmallStepWorkload>(spec);
  if (spec.kind == "randsvd-step") return std::make_unique<RandsvdStepWorkload>(spec);
  if (spec.kind == "slater") return std::make_unique<SlaterWorkload>(spec);
  if (spec.kind == "excitation-cycles") return std::make_unique<ExcitationCyclesWorkload>(spec);
  return std::make_unique<AdversarialWorkload>(spec);
}

Eigen::MatrixXd haar_orthogonal(Rng& rng, Eigen::Index n) {
  if (n < 0) bad("haar_orthogonal: negative size " + std::to_string(n));
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(rng.normal_matrix(n, n));
  Eigen::MatrixXd q = qr.householderQ();
  for (Eigen::Index j = 0; j < n; ++j) {
    if (qr.matrixQR()(j, j) < 0.0) q.col(j) = -q.col(j);
  }
  return q;
}

Eigen::VectorXd randsvd_singular_values(Eigen::Index n, double kappa, const std::string& mode) {
  if (n < 1) bad("n must be >= 1, got " + std::to_string(n));
  check_kappa(kappa);
  check_mode(mode);
  Eigen::VectorXd sigma = Eigen::VectorXd::Ones(n);
  if (n == 1) return sigma;
  const double last = 1.0 / kappa;
  const double span = static_cast<double>(n - 1);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double x = static_cast<double>(i) / span;  // (i-1)/(n-1) in 1-based terms
    if (mode == "geometric") {
      sigma(i) = std::pow(kappa, -x);
    } else if (mode == "arithmetic") {
      sigma(i) = 1.0 - x * (1.0 - last);
    } else if (mode == "clustered-small") {
      sigma(i) = i == 0 ? 1.0 : last;
    } else {  // clustered-large
      sigma(i) = i == n - 1 ? last : 1.0;
    }
  }
  sigma(n - 1) = last;  // exactly 1/kappa, so cond = kappa to rounding of the division
  return sigma;
}

}  // namespace slaterlab
