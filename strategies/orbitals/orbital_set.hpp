#pragma once
// The one interface every orbital set implements: N single-particle orbitals
// phi_i(r), r in R^3, evaluated at one position or at a batch of positions.
//
// Convention: the Slater matrix is A(i, j) = phi_i(r_j), so the
// values at one position form one column of A. Results are returned in
// double whatever the set computes in (a float B-spline rounds its float
// results up to double): strategies round inputs to their own precision.

#include <Eigen/Core>

#include <limits>
#include <string>

namespace slaterlab {

/// Values, gradients and Laplacians of N orbitals at M positions.
/// value(i, m), laplacian(i, m); gradient(3 i + d, m) for direction d.
struct OrbitalVGL {
  Eigen::MatrixXd value;      // N x M
  Eigen::MatrixXd gradient;   // 3N x M
  Eigen::MatrixXd laplacian;  // N x M
};

class OrbitalSet {
 public:
  virtual ~OrbitalSet() = default;

  /// Number of orbitals N.
  virtual Eigen::Index size() const = 0;
  /// e.g. "analytic", "bspline-float".
  virtual std::string label() const = 0;
  /// Machine epsilon of the arithmetic the set computes in (a float set
  /// returns float's, whatever type it hands its results over in): the unit
  /// in which its errors are reported.
  virtual double computing_epsilon() const { return std::numeric_limits<double>::epsilon(); }

  /// Values at each column of `positions` (3 x M) into `values` (N x M,
  /// resized by the callee). One position is the M = 1 case.
  virtual void evaluate_values(const Eigen::Matrix3Xd& positions,
                               Eigen::MatrixXd& values) const = 0;
  /// Values, gradients and Laplacians at each column of `positions`.
  virtual void evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const = 0;
};

}  // namespace slaterlab
