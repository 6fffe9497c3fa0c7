#pragma once
// Molecules the reader tests write in each format: a wavefunction in
// slaterlab's convention whose orbitals are orthonormal by construction.

#include <Eigen/Dense>

#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"
#include "slaterlab/strategies/orbitals/gaussian_overlap.hpp"
#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

namespace slaterlab::testing {

/// Two centres, every l on each (2 primitives), all shells cartesian or all
/// spherical; orthonormal orbitals C = L^-T for S = L L^T; 5 + 4 electrons.
inline MolecularWavefunction two_centres(bool spherical) {
  MolecularWavefunction wf;
  wf.nuclei = {{7.0, Eigen::Vector3d(0.1, -0.2, 0.0), "N"}, {8.0, Eigen::Vector3d(0.3, -0.4, 1.9), "O"}};
  for (int atom = 0; atom < 2; ++atom)
    for (int l = 0; l <= kMaxAngularMomentum; ++l)
      wf.shells.push_back({atom, l, spherical, {2.0 + l + atom, 0.35 + 0.1 * l}, {0.45, 0.7 - 0.2 * atom}});
  const Eigen::MatrixXd s = gaussian_overlap(GaussianBasis(wf.shells, wf.nuclei));
  const Eigen::MatrixXd lower = s.llt().matrixL();
  wf.mo_up = lower.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(s.rows(), s.cols())).transpose();
  wf.mo_down = wf.mo_up;
  wf.electrons_up = 5;
  wf.electrons_down = 4;
  return wf;
}

}  // namespace slaterlab::testing
