#pragma once
// Hydrogenic orbitals of nuclear charge Z at the origin, as an OrbitalSet,
// for tests of the molecular Hamiltonian against textbook energies:
//   1s: e^{-Z r},   2s: (1 - Z r / 2) e^{-Z r / 2},
// unnormalised (a determinant's scale cancels in every ratio and local
// energy). Both are f(r) = (1 - a r) e^{-b r}, whose derivatives are
//   f'  = e^{-br} (a b r - a - b),
//   lap f = f'' + 2 f' / r = e^{-br} (4 a b + b^2 - a b^2 r - 2 (a + b) / r),
// gradient f' r / r. Exact solutions of -lap/2 - Z/r with energies -Z^2/2
// and -Z^2/8, and orthogonal to each other.

#include <Eigen/Core>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/strategies/orbitals/orbital_set.hpp"

namespace slaterlab::testing {

class HydrogenicOrbitals final : public OrbitalSet {
 public:
  /// shells: 1 (1s) or 2 (2s) per orbital, e.g. {1, 2}.
  HydrogenicOrbitals(double z, std::vector<int> shells) : z_(z), shells_(std::move(shells)) {
    for (int s : shells_)
      if (s != 1 && s != 2) throw std::invalid_argument("HydrogenicOrbitals: shells are 1 or 2");
  }
  Eigen::Index size() const override { return Eigen::Index(shells_.size()); }
  std::string label() const override { return "hydrogenic"; }

  void evaluate_values(const Eigen::Matrix3Xd& r, Eigen::MatrixXd& values) const override {
    OrbitalVGL vgl;
    evaluate_vgl(r, vgl);
    values = vgl.value;
  }

  void evaluate_vgl(const Eigen::Matrix3Xd& r, OrbitalVGL& out) const override {
    const Eigen::Index n = size();
    out.value.resize(n, r.cols());
    out.gradient.resize(3 * n, r.cols());
    out.laplacian.resize(n, r.cols());
    for (Eigen::Index m = 0; m < r.cols(); ++m) {
      const double d = r.col(m).norm();
      for (Eigen::Index i = 0; i < n; ++i) {
        // 1s: a = 0, b = Z; 2s: a = b = Z / 2.
        const bool two = shells_[std::size_t(i)] == 2;
        const double b = two ? z_ / 2 : z_;
        const double a = two ? b : 0.0;
        const double e = std::exp(-b * d);
        out.value(i, m) = (1 - a * d) * e;
        const double radial = e * (a * b * d - a - b);
        for (int k = 0; k < 3; ++k) out.gradient(3 * i + k, m) = radial * r(k, m) / d;
        out.laplacian(i, m) = e * (4 * a * b + b * b - a * b * b * d - 2 * (a + b) / d);
      }
    }
  }

 private:
  double z_;
  std::vector<int> shells_;
};

}  // namespace slaterlab::testing
