#pragma once
// Where the electrons of a molecule start: near its nuclei, so that the
// first determinant is built where the orbitals live (a Gaussian cloud at
// the origin would put the electrons of a large molecule where every
// orbital has decayed, and its Slater matrix would be nearly singular).
//
// What: for each of n electrons, in order, one uniform u picks the nucleus
// a, the first with u Z_total < Z_0 + ... + Z_a (so each nucleus in
// proportion to its charge; an uncharged ghost centre never), then three
// normals g (x, y, z) place the electron at R_a + width g.
// Variates: n x (1 uniform, 3 normals), electron 0's first, whatever the
// nuclei: a pure function of the stream (the VMC walker's or a workload's).
// Preconditions: nuclei whose charges are finite, >= 0, with a positive
// sum (MolecularPotential's checks); width > 0. Errors: std::invalid_argument
// when they do not hold.

#include <Eigen/Core>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

namespace slaterlab {

/// The width a molecule's electrons start with (bohr): the extent of a
/// valence orbital; core electrons, a few times closer to their nucleus,
/// fall in within the first sweeps.
inline constexpr double kNuclearStartWidth = 1.0;

/// A generator with `double uniform()` in [0, 1) and `double normal()`
/// (RandomSource, verify's Rng).
template <class Random>
Eigen::Matrix3Xd positions_near_nuclei(Eigen::Index n, const std::vector<Nucleus>& nuclei,
                                       double width, Random& random) {
  double total = 0.0;
  for (const Nucleus& a : nuclei) {
    if (!(std::isfinite(a.charge) && a.charge >= 0.0))
      throw std::invalid_argument("positions_near_nuclei: a charge is not finite and >= 0");
    total += a.charge;
  }
  if (!(total > 0.0)) throw std::invalid_argument("positions_near_nuclei: no positive charge");
  if (!(std::isfinite(width) && width > 0.0))
    throw std::invalid_argument("positions_near_nuclei: width must be finite and > 0");
  Eigen::Matrix3Xd r(3, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    const double target = random.uniform() * total;
    // The last charged nucleus catches a target that rounding put at the sum.
    std::size_t chosen = 0;
    double below = 0.0;
    for (std::size_t a = 0; a < nuclei.size(); ++a) {
      if (nuclei[a].charge == 0.0) continue;
      chosen = a;
      below += nuclei[a].charge;
      if (target < below) break;
    }
    for (int d = 0; d < 3; ++d) r(d, j) = nuclei[chosen].position(d) + width * random.normal();
  }
  return r;
}

}  // namespace slaterlab
