#pragma once
// Workloads: what moves the Slater matrix in a lockstep run.
//
// Convention (DESIGN.md): A(i, j) = phi_i(r_j); electron k owns COLUMN k; a
// move replaces column k by a new column, and its ratio is
// rho = det(A') / det(A) = e_k^T A^{-1} a_k'.
//
// Contract of every workload:
// - initial_matrix() is called first. It is computed once; calling it again
//   returns the same matrix and does not restart the move sequence.
// - next_move(current) gets the exact current matrix (accepted moves
//   applied) and returns the next proposal. Workloads whose new column
//   depends on the matrix (small-step, adversarial) read it from `current`,
//   so rejected moves are handled by whoever owns the matrix.
// - Deterministic: the same WorkloadSpec and the same sequence of `current`
//   matrices give the same proposals, bit for bit, on the same build. (The
//   random variates are bit-identical on every platform, see rng.hpp; the
//   randsvd QR and products go through Eigen, whose kernels may round
//   differently on another instruction set.)
// - Random streams: Rng(seed, kWorkloadStreams + i) with i = 0 for the
//   initial matrix (and randsvd's U, Sigma, V), 1 for the new-column
//   variates, 2 for the electron choice and the adversarial cycle layout. So
//   the initial matrix does not depend on the electron order, and the columns
//   drawn do not depend on which electrons were picked (except where a kind
//   reads the current column). The ids sit far from small integers so that
//   other users of the same seed (say an acceptance stream 1) stay
//   independent of the workload.
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
//   (verify/inputs/replay.hpp; schema in README "Replay files"). n must equal the
//   file's N; the other parameters are not used. Moves may carry the
//   recorded decision (Move::accept, Move::uniform).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "verify/inputs/rng.hpp"

namespace slaterlab {

/// First of the three stream ids a workload draws from: ASCII "WORKLOAD".
inline constexpr std::uint64_t kWorkloadStreams = 0x574F524B4C4F4144ULL;

/// A proposal: replace column k of the current matrix by `column`.
struct Move {
  Eigen::Index k = 0;
  Eigen::VectorXd column;
  /// Set only by workloads that replay a recorded run (kind "replay"): the
  /// decision the recording took, which the runner then applies instead of
  /// the reference's, and the uniform variate it used (for decision flips).
  std::optional<bool> accept = std::nullopt;
  std::optional<double> uniform = std::nullopt;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;
  /// Called once, first (idempotent, see the file comment).
  virtual Eigen::MatrixXd initial_matrix() = 0;
  /// `current` is the exact current matrix (accepted moves applied). Throws
  /// std::invalid_argument if it is not N x N, std::logic_error if
  /// initial_matrix() has not been called.
  virtual Move next_move(const Eigen::MatrixXd& current) = 0;
  /// True when the workload moves the matrix in update cycles (next_cycle())
  /// rather than in single proposals (next_move()).
  virtual bool cycles() const { return false; }
  /// The next update cycle: column replacements applied in order as one
  /// unit, always (no decision). Same contract as next_move() otherwise;
  /// std::logic_error for a workload without cycles.
  virtual std::vector<Move> next_cycle(const Eigen::MatrixXd& current);
  /// (key, value as text) for the results file; doubles round-trip exactly.
  virtual std::vector<std::pair<std::string, std::string>> parameters() const = 0;
};

/// What to build. Fields a kind does not use are still validated.
struct WorkloadSpec {
  std::string kind;                     // one of known_workloads(), known_cycle_workloads()
  Eigen::Index n = 0;                   // matrix size, >= 1
  std::uint64_t seed = 0;
  std::string electron_order = "sweep"; // "sweep", "random" or "burst" (one random
                                        // electron moves 4 times in a row)
  double kappa = 1e8;                   // randsvd: condition number, finite, >= 1
  std::string mode = "geometric";       // randsvd: see randsvd_singular_values
  double delta = 0.05;                  // small-step: step size, finite, > 0
  double eta = 1e-6;                    // adversarial: relative perturbation, finite, > 0
  Eigen::Index chain = 2;               // adversarial: columns collapsed per cycle, >= 1
  Eigen::Index hold = 2;                // adversarial: moves made while collapsed, >= 0
  double alpha = 1.0;                   // slater: frequency of the HO orbitals, finite, > 0
  bool singular = false;                // exactly singular initial matrix
  std::string file;                     // replay: the HDF5 file (verify/inputs/replay.hpp)
  std::int64_t replay_moves = -1;       // replay: moves the run uses, read from the file's
                                        // start (the plan counts them); -1: all
  Eigen::Index rank = 2;                // excitation-cycles: largest cycle rank, 1..n
  double shift = 0.5;                   // excitation-cycles: fraction of shifting cycles, [0, 1]
};

/// Builds the workload. Throws std::invalid_argument with a one-line message
/// naming the bad value (an unknown kind lists the valid ones). Adversarial
/// needs n >= chain + 1, and n >= chain + 2 when hold > 0.
std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec);

/// The valid `kind` values, in a stable order: the kinds generated from a
/// seed. "replay", which reads its file, is valid too and not listed here.
std::vector<std::string> known_workloads();

/// The valid `kind` values of workloads that make update cycles
/// (next_cycle), generated from a seed.
std::vector<std::string> known_cycle_workloads();

/// The valid randsvd `mode` values, in a stable order.
std::vector<std::string> known_randsvd_modes();

/// Haar-distributed n x n orthogonal matrix: Q of the Householder QR of an
/// n x n rng.normal_matrix, times diag(sign(R_ii)) (sign(0) = +1) so that R
/// has a positive diagonal; the QR with that normalisation is unique, which
/// makes the distribution of Q exactly Haar (Stewart 1980; Mezzadri 2007).
Eigen::MatrixXd haar_orthogonal(Rng& rng, Eigen::Index n);

/// Singular values sigma_1 >= ... >= sigma_n, sigma_1 = 1, cond = kappa
/// (for n >= 2), as LAPACK dlatms' modes, i = 1..n:
///   "geometric" (mode 3):       sigma_i = kappa^(-(i-1)/(n-1))
///   "arithmetic" (mode 4):      sigma_i = 1 - (i-1)/(n-1) * (1 - 1/kappa)
///   "clustered-small" (mode 1): sigma_1 = 1, the rest 1/kappa
///   "clustered-large" (mode 2): all 1 except sigma_n = 1/kappa
/// n = 1 gives {1}. Throws std::invalid_argument on a bad mode, n < 1, or
/// kappa not finite or < 1.
Eigen::VectorXd randsvd_singular_values(Eigen::Index n, double kappa, const std::string& mode);

}  // namespace slaterlab
