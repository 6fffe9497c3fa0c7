#pragma once
// Workloads: what moves the Slater matrix in a lockstep run. Convention:
// A(i, j) = phi_i(r_j); electron k owns column k; a move replaces column k
// and its ratio is rho = det(A') / det(A) = e_k^T A^{-1} a_k'.
//
// Contract of every workload (the kinds, and what each guarantees about
// conditioning, are derived in workload.cpp; docs/compared.md tabulates them):
// - initial_matrix() is called first; it is computed once, and calling it
//   again returns the same matrix without restarting the moves.
// - next_move(current) gets the exact current matrix (accepted moves
//   applied) and returns the next proposal; kinds whose column depends on
//   the matrix read it from `current`, so rejects are the caller's business.
// - Deterministic: the same WorkloadSpec and the same `current` matrices
//   give the same proposals bit for bit on one build (the variates are
//   bit-identical on every platform, rng.hpp; Eigen's kernels may round
//   differently on another instruction set).
// - Streams Rng(seed, kWorkloadStreams + i): i = 0 the initial matrix, 1 the
//   new-column variates, 2 the electron choice and the adversarial layout,
//   so each ingredient is independent of the others and of other users of
//   the seed. Errors: make_workload's std::invalid_argument (below).

#include <cstdint>
#include <functional>
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
  double rs = 1.0;                      // electron-gas: Wigner-Seitz radius, finite, > 0
  bool polarised = false;               // electron-gas: one spin (cell of n electrons) or two (2n)
  std::string orbitals = "analytic";    // electron-gas: analytic, bspline-double or bspline-float;
                                        // molecule: double or float
  Eigen::Index grid = 0;                // electron-gas: B-spline points per dimension, 0 = the rule's
  std::string scheme = "pbp";           // slater, electron-gas, molecule: "pbp" (single moves) or
                                        // "qs" (a sweep's accepted moves as one update cycle)
  bool singular = false;                // exactly singular initial matrix
  std::string file;                     // replay: the HDF5 file (verify/inputs/replay.hpp);
                                        // molecule: the wavefunction file (molecule_file.hpp)
  std::string spin = "up";              // molecule: whose Slater matrices, "up" or "down"
  bool excitations = false;             // molecule: the expansion's determinants as update
                                        // cycles (molecule_cycles.hpp), not walk moves
  std::int64_t replay_moves = -1;       // replay: moves the run uses, read from the file's
                                        // start (the plan counts them); -1: all
  Eigen::Index rank = 2;                // excitation-cycles: largest cycle rank, 1..n
  double shift = 0.5;                   // excitation-cycles: fraction of shifting cycles, [0, 1]
};

/// Builds a workload of a registered kind from a validated spec.
using WorkloadFactory = std::function<std::unique_ptr<Workload>(const WorkloadSpec&)>;

/// A workload kind: its name, its factory, whether it makes update cycles
/// (next_cycle) rather than single moves, and whether it reads a file
/// (spec.file), so that it cannot be built from the other fields alone.
struct WorkloadKind {
  std::string name;
  WorkloadFactory make;
  bool cycles = false;
  bool reads_file = false;
};

/// Checks every field a kind may use (ranges, names), whatever the kind, so
/// a spec never carries a value that means nothing. Throws
/// std::invalid_argument with a one-line message naming the bad value.
void validate_workload_fields(const WorkloadSpec& spec);

/// The valid randsvd `mode` values, in a stable order.
std::vector<std::string> known_randsvd_modes();

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
