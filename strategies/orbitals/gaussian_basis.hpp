#pragma once
// Contracted Gaussian atomic orbitals (s to g, cartesian or real solid
// harmonics), each normalised to 1, evaluated with their gradients and
// Laplacians in double or in float.
//
// What: the angular conventions of slaterlab's AOs (docs/molecules.md,
// "Formats and conventions"): cartesian components x^a y^b z^c in
// alphabetical order (a descending, then b descending: xx, xy, xz, yy, yz,
// zz); real solid harmonics S_lm in the order m = 0, +1, -1, ..., +l, -l,
// built from the cartesians by one general formula (Helgaker, Jorgensen and
// Olsen, "Molecular Electronic-Structure Theory", eq. 6.4.47; the same
// functions as Schlegel and Frisch, Int. J. Quantum Chem. 54, 83 (1995)), with
// Racah's normalisation: S_lm = sqrt(4 pi / (2l + 1)) r^l Y_lm, no
// Condon-Shortley phase, so S_10 = z, S_11 = x, S_1-1 = y, S_22 =
// sqrt(3)/2 (x^2 - y^2). GaussianBasis prepares the shells of a wavefunction:
// per AO, sum_m T(i, m) x^a y^b z^c times sum_k w_k exp(-alpha_k r^2) about
// its nucleus, T and w carrying every normalisation.
// Preconditions: as MolecularOrbitals (molecular_orbitals.hpp).
// Guarantees: evaluation is const and thread-safe; a shell whose every
// exponential underflows to 0 at a point is skipped, which changes nothing.
// Errors: std::invalid_argument with a one-line message.

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

#include <Eigen/Core>

#include <array>
#include <vector>

namespace slaterlab {

/// (l + 1)(l + 2) / 2.
int cartesian_count(int l);
/// 2l + 1 for a spherical shell, cartesian_count(l) otherwise.
int shell_size(int l, bool spherical);
/// The powers (a, b, c) of the cartesian components, in slaterlab's order.
std::vector<std::array<int, 3>> cartesian_powers(int l);
/// m of the spherical component `index` (0, +1, -1, +2, -2, ...).
int spherical_m(int index);
/// S_lm (Racah normalisation) as coefficients over cartesian_powers(l).
std::vector<double> solid_harmonic(int l, int m);
/// The angular polynomial of a shell's component `index` over
/// cartesian_powers(l), unnormalised: a monomial or solid_harmonic.
std::vector<double> angular_polynomial(int l, bool spherical, int index);

/// The L2 norm of sum_m angular[m] x^a y^b z^c * sum_k weights[k]
/// exp(-exponents[k] r^2) (angular over cartesian_powers(l)), exact up to
/// rounding (Gaussian moments).
/// `magnitude`, when given, receives the sum of the absolute values of the
/// terms of the norm squared (its rounding is <= eps terms * magnitude).
double gaussian_function_norm(int l, const std::vector<double>& angular,
                              const std::vector<double>& exponents,
                              const std::vector<double>& weights, double* magnitude = nullptr);
/// The norm of one primitive x^l exp(-alpha r^2) (its x^l component), by
/// which a weight of an unnormalised primitive becomes one of a normalised.
double primitive_norm(int l, double alpha);

/// One shell ready to evaluate; T is (shell size) x cartesian_count(l).
struct PreparedShell {
  int l = 0;
  bool spherical = false;
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  std::vector<double> exponents;
  std::vector<double> weights;  // w_k: contraction and normalisation
  Eigen::MatrixXd angular;      // T
  Eigen::Index first_ao = 0;
  // The relative rounding of an AO's normalisation, in eps (to first order):
  // the chain of the norm's sum times its cancellation, the largest over the
  // shell's AOs.
  double normalisation_rounding = 0.0;
};

/// Where the values, gradients and Laplacians of the AOs at one point go:
/// five arrays of the basis size.
template <class Real>
struct AoVgl {
  Real* value;
  Real* dx;
  Real* dy;
  Real* dz;
  Real* laplacian;
};

/// A shell in the arithmetic it is evaluated in (gaussian_basis.cpp).
template <class Real>
struct EvaluationShell;

class GaussianBasis {
 public:
  /// Throws std::invalid_argument for a shell naming a missing nucleus, l
  /// outside 0..kMaxAngularMomentum, no or unequal exponents and
  /// coefficients, an exponent not finite and positive, or a contraction of
  /// norm 0.
  GaussianBasis(const std::vector<GaussianShell>& shells, const std::vector<Nucleus>& nuclei);

  ~GaussianBasis();
  GaussianBasis(GaussianBasis&&) noexcept;

  Eigen::Index size() const { return size_; }
  const std::vector<PreparedShell>& shells() const { return shells_; }

  /// The AO values at `point` (bohr) into `values` (size() entries).
  template <class Real>
  void values(const Real* point, Real* values) const;
  /// Values, gradients and Laplacians at `point`.
  template <class Real>
  void vgl(const Real* point, const AoVgl<Real>& out) const;

 private:
  template <class Real>
  const std::vector<EvaluationShell<Real>>& evaluation_shells() const;

  std::vector<PreparedShell> shells_;
  Eigen::Index size_ = 0;
  std::vector<EvaluationShell<double>> double_shells_;
  std::vector<EvaluationShell<float>> float_shells_;
};

}  // namespace slaterlab
