#include "slaterlab/strategies/orbitals/orbital_accuracy.hpp"


#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace slaterlab {

namespace {

/// Running max / sum of squares of one quantity.
struct Accumulator {
  double max_abs = 0.0, sum_sq = 0.0, max_exact = 0.0;
  double count = 0.0;

  void add(const Eigen::MatrixXd& approx, const Eigen::MatrixXd& exact) {
    const Eigen::ArrayXXd diff = (approx - exact).array();
    max_abs = std::max(max_abs, diff.abs().maxCoeff());
    sum_sq += diff.square().sum();
    max_exact = std::max(max_exact, exact.cwiseAbs().maxCoeff());
    count += static_cast<double>(diff.size());
  }

  QuantityError finish(double epsilon) const {
    QuantityError e;
    e.max_abs = max_abs;
    e.rms_abs = std::sqrt(sum_sq / count);
    e.max_exact = max_exact;
    // An identically zero quantity has no scale: report relative errors as
    // absolute ones rather than divide by zero.
    const double scale = max_exact > 0.0 ? max_exact : 1.0;
    e.max_rel = e.max_abs / scale;
    e.rms_rel = e.rms_abs / scale;
    e.max_eps = e.max_rel / epsilon;
    e.rms_eps = e.rms_rel / epsilon;
    return e;
  }
};

}  // namespace

double orbital_set_epsilon(const OrbitalSet& set) { return set.computing_epsilon(); }

OrbitalAccuracy measure_orbital_accuracy(const OrbitalSet& approx, const OrbitalSet& exact,
                                         const Eigen::Matrix3Xd& sample_points) {
  return measure_orbital_accuracy(approx, exact, sample_points, orbital_set_epsilon(approx));
}

OrbitalAccuracy measure_orbital_accuracy(const OrbitalSet& approx, const OrbitalSet& exact,
                                         const Eigen::Matrix3Xd& sample_points, double epsilon) {
  if (approx.size() != exact.size())
    throw std::invalid_argument("measure_orbital_accuracy: the sets differ in size (" +
                                std::to_string(approx.size()) + " vs " + std::to_string(exact.size()) + ")");
  if (sample_points.cols() == 0) throw std::invalid_argument("measure_orbital_accuracy: no sample points");
  if (!(epsilon > 0.0)) throw std::invalid_argument("measure_orbital_accuracy: epsilon must be > 0");

  // Chunks keep the 2 x 5N x chunk doubles of results small whatever M is.
  constexpr Eigen::Index kChunk = 1024;
  Accumulator value, gradient, laplacian;
  OrbitalVGL a, e;
  for (Eigen::Index start = 0; start < sample_points.cols(); start += kChunk) {
    const Eigen::Index m = std::min(kChunk, sample_points.cols() - start);
    const Eigen::Matrix3Xd chunk = sample_points.middleCols(start, m);
    approx.evaluate_vgl(chunk, a);
    exact.evaluate_vgl(chunk, e);
    value.add(a.value, e.value);
    gradient.add(a.gradient, e.gradient);
    laplacian.add(a.laplacian, e.laplacian);
  }

  OrbitalAccuracy r;
  r.value = value.finish(epsilon);
  r.gradient = gradient.finish(epsilon);
  r.laplacian = laplacian.finish(epsilon);
  r.epsilon = epsilon;
  r.orbitals = approx.size();
  r.samples = sample_points.cols();
  r.approx_label = approx.label();
  r.exact_label = exact.label();
  return r;
}

}  // namespace slaterlab
