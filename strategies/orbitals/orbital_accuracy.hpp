#pragma once
// Orbital accuracy, measured: an approximate orbital set (e.g. a float or
// double B-spline) against an exact one (e.g. the analytic harmonic
// oscillator) at caller-chosen sample points, for values, gradients and
// Laplacians.
//
// Units: absolute errors are in the orbitals' own units (value: length^{-3/2},
// gradient: length^{-5/2}, Laplacian: length^{-7/2}). Relative errors divide by
// the largest magnitude of the exact quantity over all orbitals, samples (and,
// for the gradient, components): one scale per quantity, so orbitals with
// small amplitude are not over-weighted. "eps" figures divide the relative
// errors by the approximate set's machine epsilon (float 2^-23, double 2^-52),
// the way Boost.Math reports accuracy. RMS is over every entry (N orbitals x
// M samples, x3 components for the gradient).

#include "slaterlab/strategies/orbitals/orbital_set.hpp"

#include <string>

namespace slaterlab {

/// Errors of one quantity (value, gradient or Laplacian).
struct QuantityError {
  double max_abs = 0.0;    ///< max |approx - exact| over all entries
  double rms_abs = 0.0;    ///< sqrt(mean (approx - exact)^2) over all entries
  double max_exact = 0.0;  ///< max |exact| over all entries: the scale of the relative errors
  double max_rel = 0.0;    ///< max_abs / max_exact
  double rms_rel = 0.0;    ///< rms_abs / max_exact
  double max_eps = 0.0;    ///< max_rel / epsilon
  double rms_eps = 0.0;    ///< rms_rel / epsilon
};

struct OrbitalAccuracy {
  QuantityError value;
  QuantityError gradient;   ///< all three components pooled
  QuantityError laplacian;
  double epsilon = 0.0;     ///< machine epsilon of the approximate set (2^-23 or 2^-52)
  Eigen::Index orbitals = 0;
  Eigen::Index samples = 0;
  std::string approx_label;
  std::string exact_label;
};

/// Machine epsilon of the precision an orbital set computes in:
/// set.computing_epsilon() (2^-23 for the float sets, CPU and CUDA alike).
double orbital_set_epsilon(const OrbitalSet& set);

/// Errors of `approx` against `exact` at the columns of `sample_points`
/// (3 x M), with epsilon = orbital_set_epsilon(approx). Throws
/// std::invalid_argument when the sets differ in size or M = 0. Evaluates in
/// chunks, so M may be large.
OrbitalAccuracy measure_orbital_accuracy(const OrbitalSet& approx, const OrbitalSet& exact,
                                         const Eigen::Matrix3Xd& sample_points);
/// The same with an explicit epsilon for the "eps" figures.
OrbitalAccuracy measure_orbital_accuracy(const OrbitalSet& approx, const OrbitalSet& exact,
                                         const Eigen::Matrix3Xd& sample_points, double epsilon);

}  // namespace slaterlab
