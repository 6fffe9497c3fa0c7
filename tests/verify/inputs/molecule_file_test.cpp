// The shipped molecules (data/molecules/, Psi4 1.3.2; README.md there) read
// through read_molecule in both formats and held to Psi4's own numbers: the
// MO values at Psi4's cube grid points within the cube's printed digits, the
// nuclear repulsion, the electron counts; C^T S C = I and our S against the
// TREXIO file's stored (Psi4) overlap (the reader's checks, their ratios
// recorded); the Molden and TREXIO renderings of one molecule give the same
// MOs, within what Molden's printed digits allow.
//
// Tolerances, per value, first order in eps:
// - the cube prints %12.5E: half a unit of the 6th significant digit;
// - Psi4 leaves out basis functions below 1e-12 at a point
//   (CUBIC_BASIS_TOLERANCE): at most 1e-12 |C_psi4,i| per AO, C_psi4,i =
//   C_i N'_i (Psi4's cartesian AOs are ours / N'_i, N'_i =
//   sqrt((2l-1)!! / prod (2a_d-1)!!); 1 for spherical);
// - the evaluation's rounding, ours and Psi4's alike: eps times the sum of
//   |terms| times their chain (the exponential's 5 alpha s + 2, the
//   contraction n_k + 4, the polynomial l + cartesians + 4, the MO's sum
//   n_ao + 2), as in the float bound of tests/orbitals/gaussian_orbitals_test.cpp;
// - Molden only, its printed basis (README: exponents and contraction
//   coefficients %20.10f, coordinates 12 decimals; MO coefficients %.17e):
//   per AO, |delta phi| <= sum_m |T_m x^m| sum_k e^{-a_k s} (|delta d_k| N_k +
//   |w_k| delta a_k |(2l+3)/(4 a_k) - s|) (the primitives), + eta/2 |phi|_abs
//   (the contraction's norm: eta bounds the printed AO's distance, as the
//   reader derives it), + delta_R sum_x |d phi / d x|_abs (the centre).

#include <gtest/gtest.h>

#include <hdf5.h>

#include <Eigen/Dense>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"
#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"
#include "verify/inputs/molecule_file.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kPsi4BasisCutoff = 1e-12;
constexpr double kMoldenBasisHalfUnit = 0.5e-10;   // %20.10f
constexpr double kMoldenCoordinateHalfUnit = 0.5e-12;  // 12 decimals, bohr

const std::string kData = std::string(SLATERLAB_SOURCE_DIR) + "/data/molecules/";

// Psi4's numbers for one molecule (NAME-BASIS.ref.h5).
struct Reference {
  double hf_energy = 0.0, nuclear_repulsion = 0.0;
  long electrons_up = 0, electrons_down = 0;
  Eigen::Matrix3Xd points;        // 3 x M
  std::vector<int> mo_indices;    // K
  Eigen::MatrixXd mo_values;      // K x M
  int significant_digits = 0;
};

template <class T>
std::vector<T> read_dataset(hid_t file, const char* name, hid_t type) {
  const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT_GE(set, 0) << name;
  const hid_t space = H5Dget_space(set);
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  std::vector<T> out(n);
  EXPECT_GE(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0) << name;
  H5Sclose(space);
  H5Dclose(set);
  return out;
}

Reference read_reference(const std::string& path) {
  Reference r;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(file, 0) << path;
  r.hf_energy = read_dataset<double>(file, "hf_energy", H5T_NATIVE_DOUBLE).at(0);
  r.nuclear_repulsion = read_dataset<double>(file, "nuclear_repulsion", H5T_NATIVE_DOUBLE).at(0);
  r.electrons_up = read_dataset<long>(file, "electrons_up", H5T_NATIVE_LONG).at(0);
  r.electrons_down = read_dataset<long>(file, "electrons_down", H5T_NATIVE_LONG).at(0);
  const auto points = read_dataset<double>(file, "grid/points", H5T_NATIVE_DOUBLE);
  r.points = Eigen::Map<const Eigen::Matrix3Xd>(points.data(), 3, static_cast<Eigen::Index>(points.size() / 3));
  r.mo_indices = read_dataset<int>(file, "grid/mo_indices", H5T_NATIVE_INT);
  const auto values = read_dataset<double>(file, "grid/mo_values", H5T_NATIVE_DOUBLE);
  r.mo_values = Eigen::Map<const Eigen::MatrixXd>(values.data(), static_cast<Eigen::Index>(r.mo_indices.size()),
                                                  r.points.cols());
  const hid_t grid = H5Gopen2(file, "grid", H5P_DEFAULT);
  const hid_t attribute = H5Aopen(grid, "significant_digits", H5P_DEFAULT);
  long digits = 0;
  EXPECT_GE(H5Aread(attribute, H5T_NATIVE_LONG, &digits), 0);
  r.significant_digits = static_cast<int>(digits);
  H5Aclose(attribute);
  H5Gclose(grid);
  H5Fclose(file);
  return r;
}

double odd_factorial(int a) {  // (2a - 1)!!
  double r = 1.0;
  for (int k = 2 * a - 1; k > 1; k -= 2) r *= k;
  return r;
}

// Per AO at one point: the size of its terms with their rounding chains,
// the size of its terms, the size of its gradient's terms, and (Molden) the
// printed primitives' effect; see the top of the file.
struct AoBounds {
  Eigen::VectorXd rounding, absolute, gradient, primitives, psi4_scale;
};

AoBounds ao_bounds(const GaussianBasis& basis, const Eigen::Vector3d& point) {
  const Eigen::Index n = basis.size();
  AoBounds b{Eigen::VectorXd::Zero(n), Eigen::VectorXd::Zero(n), Eigen::VectorXd::Zero(n),
             Eigen::VectorXd::Zero(n), Eigen::VectorXd::Ones(n)};
  for (const auto& shell : basis.shells()) {
    const Eigen::Vector3d d = point - shell.centre;
    const double s = d.squaredNorm();
    const auto powers = cartesian_powers(shell.l);
    const double fixed = static_cast<double>(shell.exponents.size()) + shell.l + powers.size() + static_cast<double>(n) + 12;
    const auto mono = [&](int a, int x, int c) {
      return (a < 0 || x < 0 || c < 0) ? 0.0 : std::pow(std::abs(d(0)), a) * std::pow(std::abs(d(1)), x) * std::pow(std::abs(d(2)), c);
    };
    for (Eigen::Index i = 0; i < shell.angular.rows(); ++i) {
      const Eigen::Index ao = shell.first_ao + i;
      if (!shell.spherical) {
        const auto& q = powers[static_cast<std::size_t>(i)];
        b.psi4_scale(ao) = std::sqrt(odd_factorial(shell.l) / (odd_factorial(q[0]) * odd_factorial(q[1]) * odd_factorial(q[2])));
      }
      double polynomial = 0.0, polynomial_gradient = 0.0;
      for (std::size_t m = 0; m < powers.size(); ++m) {
        const double t = std::abs(shell.angular(i, static_cast<Eigen::Index>(m)));
        const int a = powers[m][0], x = powers[m][1], c = powers[m][2];
        polynomial += t * mono(a, x, c);
        polynomial_gradient += t * (a * mono(a - 1, x, c) + x * mono(a, x - 1, c) + c * mono(a, x, c - 1));
      }
      for (std::size_t k = 0; k < shell.exponents.size(); ++k) {
        const double alpha = shell.exponents[k], e = std::exp(-alpha * s), w = std::abs(shell.weights[k]);
        const double norm = primitive_norm(shell.l, alpha);
        b.absolute(ao) += polynomial * w * e;
        b.rounding(ao) += polynomial * w * e * (5 * alpha * s + 2 + fixed);
        b.gradient(ao) += polynomial_gradient * w * e + polynomial * w * e * 2 * alpha * d.cwiseAbs().sum();
        const double delta_d = shell.exponents.size() > 1 ? kMoldenBasisHalfUnit * norm : 0.0;
        b.primitives(ao) +=
            polynomial * e * (delta_d + w * kMoldenBasisHalfUnit * std::abs((2 * shell.l + 3) / (4 * alpha) - s));
      }
    }
  }
  return b;
}

// The reader's eta per AO, without the centre's part (bounded pointwise here).
Eigen::VectorXd contraction_deviation(const MolecularWavefunction& wf) {
  std::vector<double> eta;
  for (const auto& shell : wf.shells) {
    double distance = 0.0, norm2 = 0.0;
    for (std::size_t k = 0; k < shell.exponents.size(); ++k) {
      const double relative = kMoldenBasisHalfUnit / shell.exponents[k], f = 1 + relative;
      const double overlap = std::pow(2 * std::sqrt(f) / (1 + f), shell.l + 1.5);
      distance += std::abs(shell.coefficients[k]) * std::sqrt(2 - 2 * overlap) +
                  (shell.exponents.size() > 1 ? kMoldenBasisHalfUnit : 0.0);
      for (std::size_t q = 0; q < shell.exponents.size(); ++q) {
        const double a = shell.exponents[k], c = shell.exponents[q];
        norm2 += shell.coefficients[k] * shell.coefficients[q] * std::pow(2 * std::sqrt(a * c) / (a + c), shell.l + 1.5);
      }
    }
    for (int c = 0; c < shell_size(shell.l, shell.spherical); ++c) eta.push_back(2 * distance / std::sqrt(norm2));
  }
  return Eigen::Map<Eigen::VectorXd>(eta.data(), static_cast<Eigen::Index>(eta.size()));
}

std::vector<std::string> shipped() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kData)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > 7 && file.substr(file.size() - 7) == ".ref.h5") names.push_back(file.substr(0, file.size() - 7));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Eigen::MatrixXd values_of(const MolecularWavefunction& wf, const std::vector<int>& columns, const Eigen::Matrix3Xd& points) {
  const MolecularOrbitals orbitals(std::make_shared<MolecularWavefunction>(wf), wf.mo_up, columns, OrbitalPrecision::kDouble);
  Eigen::MatrixXd out;
  orbitals.evaluate_values(points, out);
  return out;
}

TEST(ShippedMolecules, EveryFileMatchesPsi4sOwnNumbers) {
  const auto names = shipped();
  ASSERT_GE(names.size(), 13u);
  std::printf("%-18s %5s %9s %9s %9s %10s %10s %10s %9s\n", "molecule", "AOs", "CSC-I M", "CSC-I T", "S-S_psi4",
              "cube M", "cube T", "M vs T", "V_nn");
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const Reference ref = read_reference(kData + name + ".ref.h5");
    MoleculeChecks molden_checks, trexio_checks;
    const MolecularWavefunction molden = read_molecule(kData + name + ".molden", &molden_checks);
    const MolecularWavefunction trexio = read_molecule(kData + name + ".trexio.h5", &trexio_checks);
    for (const auto* wf : {&molden, &trexio}) {
      EXPECT_EQ(wf->electrons_up, ref.electrons_up);
      EXPECT_EQ(wf->electrons_down, ref.electrons_down);
    }
    // The reader's checks passed; the stored overlap was there and agreed.
    EXPECT_LE(molden_checks.orthonormality_ratio, 1.0);
    EXPECT_LE(trexio_checks.orthonormality_ratio, 1.0);
    ASSERT_TRUE(trexio_checks.stored_overlap_ratio.has_value());
    EXPECT_LE(*trexio_checks.stored_overlap_ratio, 1.0);

    // Nuclear repulsion: sum over pairs of 3 squares, 2 sums, a square root,
    // a product and a division (8 roundings) and the sum over pairs, ours
    // and Psi4's; Molden's coordinates move each distance by at most
    // 2 sqrt(3) delta_R.
    const double pairs = static_cast<double>(trexio.nuclei.size() * (trexio.nuclei.size() - 1) / 2);
    const double vnn = trexio.nuclear_repulsion();
    EXPECT_NEAR(vnn, ref.nuclear_repulsion, 2 * (pairs + 8) * kEps * vnn);
    double moved = 0.0;
    for (std::size_t a = 0; a < molden.nuclei.size(); ++a)
      for (std::size_t b = 0; b < a; ++b)
        moved += molden.nuclei[a].charge * molden.nuclei[b].charge /
                 (molden.nuclei[a].position - molden.nuclei[b].position).squaredNorm() * 2 * std::sqrt(3.0) *
                 kMoldenCoordinateHalfUnit;
    EXPECT_NEAR(molden.nuclear_repulsion(), ref.nuclear_repulsion, 2 * (pairs + 8) * kEps * vnn + moved);

    // MO values at the cube's points: the K MOs of the reference, and every
    // MO for Molden against TREXIO.
    const GaussianBasis basis_m(molden.shells, molden.nuclei), basis_t(trexio.shells, trexio.nuclei);
    std::vector<int> all(static_cast<std::size_t>(trexio.mo_up.cols()));
    for (std::size_t j = 0; j < all.size(); ++j) all[j] = static_cast<int>(j);
    const Eigen::MatrixXd vm = values_of(molden, all, ref.points), vt = values_of(trexio, all, ref.points);
    const Eigen::VectorXd eta = contraction_deviation(molden);
    // The reference files hold a few hundred cube points and several MOs:
    // a file with none would compare nothing.
    ASSERT_GE(ref.points.cols(), 100) << name;
    ASSERT_GE(ref.mo_indices.size(), 2u) << name;
    double worst_m = 0.0, worst_t = 0.0, worst_mt = 0.0;
    for (Eigen::Index p = 0; p < ref.points.cols(); ++p) {
      const AoBounds bm = ao_bounds(basis_m, ref.points.col(p)), bt = ao_bounds(basis_t, ref.points.col(p));
      const Eigen::VectorXd printed = bm.primitives + 0.5 * eta.cwiseProduct(bm.absolute) +
                                      std::sqrt(3.0) * kMoldenCoordinateHalfUnit * bm.gradient;
      for (Eigen::Index j = 0; j < vt.rows(); ++j) {
        const Eigen::VectorXd cm = molden.mo_up.col(j).cwiseAbs(), ct = trexio.mo_up.col(j).cwiseAbs();
        // The printed MO coefficients: 17 digits, relative 5e-17.
        const double molden_error = cm.dot(printed) + 5e-17 * cm.dot(bm.absolute);
        const double rounding_m = kEps * cm.dot(bm.rounding), rounding_t = kEps * ct.dot(bt.rounding);
        const double mt = std::abs(vm(j, p) - vt(j, p)) / (molden_error + rounding_m + rounding_t);
        EXPECT_LE(mt, 1.0) << "MO " << j << " point " << p;
        worst_mt = std::max(worst_mt, mt);
      }
      for (std::size_t k = 0; k < ref.mo_indices.size(); ++k) {
        const int j = ref.mo_indices[k];
        const double cube = ref.mo_values(static_cast<Eigen::Index>(k), p);
        const double digit = cube == 0.0 ? 0.0
                                         : 0.5 * std::pow(10.0, std::floor(std::log10(std::abs(cube))) -
                                                                    (ref.significant_digits - 1));
        const Eigen::VectorXd cm = molden.mo_up.col(j).cwiseAbs(), ct = trexio.mo_up.col(j).cwiseAbs();
        const double cutoff = kPsi4BasisCutoff * ct.dot(bt.psi4_scale);
        const double psi4_rounding = kEps * ct.dot(bt.rounding);  // as large as ours
        const double bound_t = digit + cutoff + psi4_rounding + kEps * ct.dot(bt.rounding);
        const double bound_m = digit + cutoff + psi4_rounding + kEps * cm.dot(bm.rounding) + cm.dot(printed) +
                               5e-17 * cm.dot(bm.absolute);
        const double rt = std::abs(vt(j, p) - cube) / bound_t, rm = std::abs(vm(j, p) - cube) / bound_m;
        EXPECT_LE(rt, 1.0) << "TREXIO MO " << j << " point " << p << ": " << vt(j, p) << " vs " << cube;
        EXPECT_LE(rm, 1.0) << "Molden MO " << j << " point " << p << ": " << vm(j, p) << " vs " << cube;
        worst_t = std::max(worst_t, rt);
        worst_m = std::max(worst_m, rm);
      }
    }
    std::printf("%-18s %5ld %9.2g %9.2g %9.2g %10.3g %10.3g %10.3g %9.2g\n", name.c_str(), static_cast<long>(trexio.ao_count()),
                molden_checks.orthonormality_error, trexio_checks.orthonormality_error,
                *trexio_checks.stored_overlap_error, worst_m, worst_t, worst_mt,
                std::abs(vnn - ref.nuclear_repulsion) / ref.nuclear_repulsion);
  }
}

TEST(ShippedMolecules, DeterminantListsAndTheTextBackEnd) {
  const MolecularWavefunction h2o = read_molecule(kData + "h2o-cc-pvdz.trexio.h5");
  ASSERT_EQ(h2o.determinants.size(), 36u);  // CAS(4,4): C(4,2)^2
  const MolecularWavefunction benzene = read_molecule(kData + "benzene-cc-pvdz.trexio.h5");
  ASSERT_EQ(benzene.determinants.size(), 400u);  // CAS(6,6): C(6,3)^2
  for (const auto* wf : {&h2o, &benzene}) {
    // The leading determinant is the RHF reference: the first MOs.
    std::vector<int> reference(static_cast<std::size_t>(wf->electrons_up));
    for (std::size_t i = 0; i < reference.size(); ++i) reference[i] = static_cast<int>(i);
    EXPECT_EQ(wf->determinants.front().up, reference);
    EXPECT_EQ(wf->determinants.front().down, reference);
    double norm2 = 0.0;
    for (const auto& d : wf->determinants) norm2 += d.coefficient * d.coefficient;
    // DETCI normalises its vector in double: the sum of n squares, then the
    // division, each within n eps; ours adds n eps more.
    const double n = static_cast<double>(wf->determinants.size());
    EXPECT_NEAR(norm2, 1.0, 4 * n * kEps);
    std::printf("determinants %zu: |sum c^2 - 1| = %.3g\n", wf->determinants.size(), std::abs(norm2 - 1.0));
  }
  // The text back end holds the same data.
  const MolecularWavefunction text = read_molecule(kData + "h2o-cc-pvdz.trexio");
  EXPECT_EQ(text.mo_up, h2o.mo_up);
  EXPECT_EQ(text.determinants.size(), h2o.determinants.size());
}

}  // namespace
}  // namespace slaterlab
