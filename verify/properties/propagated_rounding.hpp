#pragma once
// Rounding propagated through inverse updates: the error model's estimate of
// what a later ratio inherits from every earlier update's rounding.
//
// Sample forward errors E of an updated inverse: each accepted move maps E
// by the exact first-order map of Sherman-Morrison, E <- P E Q with
// P = I - y e_k^T / rho, Q = I - a' r^T / rho, and adds that update's own
// rounding with random signs at its bound's magnitude: the product
// y = Ainv a' (sqrt(N) eps ||x_i|| ||a'|| per entry, N roundings adding as
// a random walk), the ratio (sqrt(N) eps ||r|| ||a'||), and the rank-1
// update (eps (|x_ij| + |y_i r_j / rho|) per entry, with |x_ij| taken as
// ||x_i|| / sqrt(N) and the signs as an outer product of random sign
// vectors: the same magnitude in any norm, at O(N^2) cost). The spread of
// e_k^T E a' over the samples estimates what a later ratio inherits. Double
// precision suffices: an estimate needs one correct digit. The signs come
// from a fixed seed, so a property's bound is reproducible. Why this term
// exists: docs/properties.md.

#include <Eigen/Core>

#include <random>
#include <vector>

#include "verify/properties/oracle.hpp"

namespace slaterlab::properties {

class PropagatedRounding {
 public:
  static constexpr int kSamples = 8;

  PropagatedRounding(double eps, Eigen::Index n) : eps_(eps), n_(n) {}

  void clear() { samples_.clear(); }

  /// Starts from a factorisation: getri's rows are each backward stable for
  /// a different nearby matrix, X A = I + R with |R| <= gamma |X||L||U| row
  /// by row, so E = R A^{-1}; R's entries take random signs at the size
  /// sqrt(N) eps (|X||L||U|)_ij (N roundings adding as a random walk).
  /// Exact updates preserve one backward error but mix these different
  /// rows, which is what propagates.
  void seed(const InverseState& s);

  /// Propagates the samples through accepted proposal `o` and adds its rounding.
  void accept(const OracleStep& o);

  /// RMS over the samples of |e_k^T E a| (absolute).
  double product_error(Eigen::Index k, const Eigen::VectorXd& a) const;

  /// RMS over the samples of |e_k^T E a'| / |rho| for proposal `o`.
  double ratio_error(const OracleStep& o) const;

  /// RMS over the samples of ||E A||_F (the left residual E leaves).
  double left_residual(const MatrixLongDouble& a) const;

 private:
  double sign() { return (rng_() & 1) ? -1.0 : 1.0; }
  Eigen::VectorXd signs();

  double eps_;
  Eigen::Index n_;
  std::vector<Eigen::MatrixXd> samples_;  // empty while no update was propagated
  std::mt19937_64 rng_{0x5105a7e5ULL};    // fixed: a property's bound is reproducible
};

}  // namespace slaterlab::properties
