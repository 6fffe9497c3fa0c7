#pragma once
// Deterministic random numbers: the same (seed, stream id) gives the same
// bits on every platform and compiler. Nothing here uses the standard
// library's distributions (std::normal_distribution and friends are
// implementation-defined) or the C library's log (not correctly rounded, and
// different between libms).
//
// The exact recipe (seeding, uniform, normal, index, the order of vector
// and matrix draws, the floating-point requirements), enough to reproduce a
// stream in Python, is the contract: docs/experiment-files.md, "The stream
// recipe". rng_test checks it bit for bit against a reference written from
// that recipe. Bit-identical streams need IEEE-754 binary64 without FMA
// contraction in rng.cpp (turned off there by pragma).

#include <cstdint>
#include <random>

#include <Eigen/Core>

namespace slaterlab {

/// Natural logarithm built only from frexp, +, -, *, / (all exactly
/// specified by IEEE-754), so its result is the same on every platform (the
/// recipe is in docs/experiment-files.md). A few ulp for positive finite x;
/// it only has to be deterministic. x = 0 gives -inf, +inf gives +inf,
/// negative or NaN gives NaN.
double portable_log(double x);

/// One independent, reproducible stream of random numbers (the exact
/// algorithm is in docs/experiment-files.md). Copyable: a copy continues the same
/// stream independently.
class Rng {
 public:
  /// Stream `stream_id` of `seed`.
  explicit Rng(std::uint64_t seed, std::uint64_t stream_id = 0);

  /// Same as Rng(seed, stream_id); reads better at call sites.
  static Rng stream(std::uint64_t seed, std::uint64_t stream_id) { return Rng(seed, stream_id); }

  /// The 64-bit value std::mt19937_64 is constructed from: sm(sm(seed) ^ stream_id).
  static std::uint64_t engine_seed(std::uint64_t seed, std::uint64_t stream_id);

  /// SplitMix64's first output from state x (the bijection sm above).
  static std::uint64_t splitmix64(std::uint64_t x);

  /// Next raw 64-bit engine output.
  std::uint64_t next_u64();

  /// Uniform double in [0, 1), a multiple of 2^-53.
  double uniform();

  /// Standard normal variate (polar method, no caching).
  double normal();

  /// Uniform integer in [0, n), unbiased. Throws std::invalid_argument if n == 0.
  std::uint64_t index(std::uint64_t n);

  /// n iid N(0,1) variates. Throws std::invalid_argument if n < 0.
  Eigen::VectorXd normal_vector(Eigen::Index n);

  /// r x c matrix of iid N(0,1) variates filled column by column. Throws
  /// std::invalid_argument if r < 0 or c < 0.
  Eigen::MatrixXd normal_matrix(Eigen::Index rows, Eigen::Index cols);

 private:
  std::mt19937_64 engine_;
};

}  // namespace slaterlab
