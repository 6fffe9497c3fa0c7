#pragma once
// Molecules made for the tests, whose MOs are orthonormal exactly: one atom
// carrying an s, a p and a spherical d shell (1 + 3 + 5 AOs, orthogonal by
// their angular parts, each normalised), with the AOs themselves as the MOs
// (identity coefficients). As a wavefunction in memory (with an optional
// determinant expansion) or as the Molden text of the same thing, with
// occupations 2, 2, 2, 1 (four spin-up, three spin-down electrons).
// Also the one-Gaussian atoms whose energies are closed forms (Molden text):
// an s Gaussian exp(-a r^2) per electron gives the kinetic energy 3a/2, the
// attraction -2 Z sqrt(2a/pi) and, for two electrons in it, the repulsion
// 2 sqrt(a/pi) (the Coulomb energy of two Gaussian densities of exponent 2a).

#include <Eigen/Core>

#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

namespace slaterlab::testing {

inline constexpr double kAtomCharge = 7.0;

inline std::shared_ptr<MolecularWavefunction> spd_atom(std::vector<DeterminantOccupation> expansion = {}) {
  auto wf = std::make_shared<MolecularWavefunction>();
  wf->nuclei = {{kAtomCharge, Eigen::Vector3d(0.1, -0.2, 0.3), "N"}};
  wf->electrons_up = 4;
  wf->electrons_down = 3;
  const auto shell = [](int l, bool spherical, double exponent) {
    GaussianShell s;
    s.nucleus = 0;
    s.l = l;
    s.spherical = spherical;
    s.exponents = {exponent};
    s.coefficients = {1.0};
    return s;
  };
  wf->shells = {shell(0, false, 1.2), shell(1, false, 0.9), shell(2, true, 0.7)};
  wf->mo_up = Eigen::MatrixXd::Identity(9, 9);
  wf->mo_down = wf->mo_up;
  wf->determinants = std::move(expansion);
  wf->source = "test";
  return wf;
}

inline std::string spd_atom_molden() {
  std::string text =
      "[Molden Format]\n[Atoms] AU\nN 1 7 0.1 -0.2 0.3\n[5D]\n[GTO]\n1 0\n"
      "s 1 1.00\n 1.2 1.0\np 1 1.00\n 0.9 1.0\nd 1 1.00\n 0.7 1.0\n\n[MO]\n";
  for (int m = 0; m < 9; ++m) {
    const double occupation = m < 3 ? 2.0 : m == 3 ? 1.0 : 0.0;
    text += fmt::format(" Sym= A\n Ene= {}\n Spin= Alpha\n Occup= {}\n", -1.0 + 0.1 * m, occupation);
    for (int a = 0; a < 9; ++a) text += fmt::format(" {} {}\n", a + 1, a == m ? 1.0 : 0.0);
  }
  return text;
}

/// One atom of charge z with `electrons` (1 or 2) in exp(-a r^2).
inline std::string gaussian_atom_molden(double z, double a, int electrons) {
  return fmt::format(
      "[Molden Format]\n[Atoms] AU\n{} 1 {} 0.0 0.0 0.0\n[GTO]\n1 0\ns 1 1.00\n {:.17g} 1.0\n\n"
      "[MO]\n Sym= A\n Ene= -0.5\n Spin= Alpha\n Occup= {}\n 1 1.0\n",
      z == 1 ? "H" : "He", z, a, electrons);
}

/// Its exact energy (see the file comment).
inline double gaussian_atom_energy(double z, double a, int electrons) {
  const double pi = std::numbers::pi;
  const double one = 1.5 * a - 2 * z * std::sqrt(2 * a / pi);
  return electrons * one + (electrons == 2 ? 2 * std::sqrt(a / pi) : 0.0);
}

}  // namespace slaterlab::testing
