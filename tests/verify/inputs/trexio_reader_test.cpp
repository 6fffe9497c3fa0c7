// The TREXIO reader through read_molecule: files written here with libtrexio
// (HDF5 and text back ends) in two normalisation conventions the format
// allows (GAMESS's normalised AOs, and bare unnormalised primitives) read back
// to the wavefunction they were written from; determinants and the stored
// overlap are checked; bad files are refused with one line naming the file.
//
// The file's AO scale is computed here from Gaussian moments alone:
// ||x^a y^b z^c sum_k w_k e^{-a_k r^2}||^2 = sum_kq w_k w_q prod_d M(2a_d, a_k + a_q),
// M(n, p) = int x^n e^{-p x^2} dx; a Racah solid harmonic has the norm of z^l.

#include <gtest/gtest.h>

#include <hdf5.h>

#include <Eigen/Dense>

#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

extern "C" {
#include <trexio.h>
}

#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"
#include "slaterlab/strategies/orbitals/gaussian_overlap.hpp"
#include "tests/verify/inputs/molecule_refusal.hpp"
#include "tests/verify/inputs/molecule_test_support.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/config_error.hpp"
#include "verify/inputs/molecule_file.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

double moment(int n, double p) {
  if (n % 2 != 0) return 0.0;
  double value = std::sqrt(std::numbers::pi / p);
  for (int k = 1; k < n; k += 2) value *= k / (2.0 * p);
  return value;
}

// ||x^a y^b z^c sum_k w_k e^{-alpha_k r^2}|| and the sum of its terms'
// absolute values over the sum (its cancellation).
struct Norm {
  double value;
  double cancellation;
};

Norm component_norm(const std::array<int, 3>& q, const std::vector<double>& alpha, const std::vector<double>& w) {
  double sum = 0.0, absolute = 0.0;
  for (std::size_t k = 0; k < alpha.size(); ++k)
    for (std::size_t p = 0; p < alpha.size(); ++p) {
      const double e = alpha[k] + alpha[p];
      const double term = w[k] * w[p] * moment(2 * q[0], e) * moment(2 * q[1], e) * moment(2 * q[2], e);
      sum += term;
      absolute += std::abs(term);
    }
  return {std::sqrt(sum), absolute / sum};
}

// The normalised primitive x^l e^{-alpha r^2}'s factor.
double primitive_factor(int l, double alpha) { return 1.0 / std::sqrt(moment(2 * l, 2 * alpha) * std::pow(moment(0, 2 * alpha), 2)); }

enum class Convention { kNormalised, kRaw };

struct TrexioData {
  std::vector<double> charge, coord;
  std::vector<std::string> label;
  int up = 0, dn = 0;
  std::string basis_type = "Gaussian";
  std::vector<int32_t> nucleus_index, ang_mom, shell_index;
  std::vector<double> shell_factor, exponent, coefficient, prim_factor;
  int32_t cartesian = 1;
  std::vector<int32_t> ao_shell;
  std::vector<double> ao_normalization;
  int32_t mo_num = 0;
  std::vector<double> mo_coefficient;  // [mo][ao]
  std::vector<int32_t> mo_spin;
  std::vector<int64_t> determinants;
  std::vector<double> determinant_coefficients;
  std::optional<std::vector<double>> overlap;
  int32_t ecp_num = 0;
  bool periodic = false;
  Eigen::VectorXd scale;        // n_i: file AO i = n_i * slaterlab's AO i
  Eigen::VectorXd scale_error;  // its relative rounding bound, in eps
};

// The file of `wf` (all shells cartesian or all spherical) in `convention`.
TrexioData trexio_data(const MolecularWavefunction& wf, Convention convention) {
  TrexioData d;
  for (const auto& n : wf.nuclei) {
    d.charge.push_back(n.charge);
    for (int x = 0; x < 3; ++x) d.coord.push_back(n.position(x));
    d.label.push_back(n.symbol);
  }
  d.up = wf.electrons_up;
  d.dn = wf.electrons_down;
  d.cartesian = wf.shells.front().spherical ? 0 : 1;
  std::vector<double> scale, scale_error;
  for (std::size_t s = 0; s < wf.shells.size(); ++s) {
    const auto& shell = wf.shells[s];
    d.nucleus_index.push_back(shell.nucleus);
    d.ang_mom.push_back(shell.l);
    std::vector<double> w;  // weights of unnormalised primitives
    for (std::size_t k = 0; k < shell.exponents.size(); ++k) {
      const double f = primitive_factor(shell.l, shell.exponents[k]);
      w.push_back(shell.coefficients[k] * f);
      d.shell_index.push_back(static_cast<int32_t>(s));
      d.exponent.push_back(shell.exponents[k]);
      d.coefficient.push_back(convention == Convention::kNormalised ? shell.coefficients[k] : w.back());
      d.prim_factor.push_back(convention == Convention::kNormalised ? f : 1.0);
    }
    const Norm axis = component_norm({shell.l, 0, 0}, shell.exponents, w);
    d.shell_factor.push_back(convention == Convention::kNormalised ? 1.0 / axis.value : 1.0);
    const auto powers = cartesian_powers(shell.l);
    for (int c = 0; c < shell_size(shell.l, shell.spherical); ++c) {
      d.ao_shell.push_back(static_cast<int32_t>(s));
      // Racah's solid harmonics have the norm of z^l (hence of x^l).
      const Norm own = shell.spherical ? axis : component_norm(powers[static_cast<std::size_t>(c)], shell.exponents, w);
      const double terms = static_cast<double>(shell.exponents.size() * shell.exponents.size()) * powers.size() *
                           powers.size();
      if (convention == Convention::kNormalised) {
        d.ao_normalization.push_back(axis.value / own.value);  // GAMESS: each component normalised
        scale.push_back(1.0);
      } else {
        d.ao_normalization.push_back(1.0);
        scale.push_back(own.value);
      }
      scale_error.push_back((terms + 8) * (own.cancellation + axis.cancellation) + 8);
    }
  }
  d.scale = Eigen::Map<Eigen::VectorXd>(scale.data(), static_cast<Eigen::Index>(scale.size()));
  d.scale_error = Eigen::Map<Eigen::VectorXd>(scale_error.data(), static_cast<Eigen::Index>(scale_error.size()));
  d.mo_num = static_cast<int32_t>(wf.mo_up.cols());
  for (Eigen::Index j = 0; j < wf.mo_up.cols(); ++j)
    for (Eigen::Index i = 0; i < wf.mo_up.rows(); ++i) d.mo_coefficient.push_back(wf.mo_up(i, j) / d.scale(i));
  return d;
}

void write_trexio(const std::string& path, back_end_t back_end, const TrexioData& d) {
  trexio_exit_code rc = TREXIO_SUCCESS;
  trexio_t* f = trexio_open(path.c_str(), 'w', back_end, &rc);
  ASSERT_EQ(rc, TREXIO_SUCCESS) << trexio_string_of_error(rc);
  const auto ok = [](trexio_exit_code code) { EXPECT_EQ(code, TREXIO_SUCCESS) << trexio_string_of_error(code); };
  ok(trexio_write_nucleus_num(f, static_cast<int32_t>(d.charge.size())));
  ok(trexio_write_nucleus_charge(f, d.charge.data()));
  ok(trexio_write_nucleus_coord(f, d.coord.data()));
  std::vector<const char*> labels;
  for (const auto& l : d.label) labels.push_back(l.c_str());
  ok(trexio_write_nucleus_label(f, labels.data(), 8));
  ok(trexio_write_electron_up_num(f, d.up));
  ok(trexio_write_electron_dn_num(f, d.dn));
  ok(trexio_write_basis_type(f, d.basis_type.c_str(), static_cast<int32_t>(d.basis_type.size() + 1)));
  ok(trexio_write_basis_shell_num(f, static_cast<int32_t>(d.ang_mom.size())));
  ok(trexio_write_basis_prim_num(f, static_cast<int32_t>(d.exponent.size())));
  ok(trexio_write_basis_nucleus_index(f, d.nucleus_index.data()));
  ok(trexio_write_basis_shell_ang_mom(f, d.ang_mom.data()));
  ok(trexio_write_basis_shell_factor(f, d.shell_factor.data()));
  ok(trexio_write_basis_shell_index(f, d.shell_index.data()));
  ok(trexio_write_basis_exponent(f, d.exponent.data()));
  ok(trexio_write_basis_coefficient(f, d.coefficient.data()));
  ok(trexio_write_basis_prim_factor(f, d.prim_factor.data()));
  ok(trexio_write_ao_cartesian(f, d.cartesian));
  ok(trexio_write_ao_num(f, static_cast<int32_t>(d.ao_shell.size())));
  ok(trexio_write_ao_shell(f, d.ao_shell.data()));
  ok(trexio_write_ao_normalization(f, d.ao_normalization.data()));
  ok(trexio_write_mo_num(f, d.mo_num));
  ok(trexio_write_mo_coefficient(f, d.mo_coefficient.data()));
  if (!d.mo_spin.empty()) ok(trexio_write_mo_spin(f, d.mo_spin.data()));
  if (!d.determinant_coefficients.empty()) {
    const auto n = static_cast<int64_t>(d.determinant_coefficients.size());
    ok(trexio_write_determinant_list(f, 0, n, d.determinants.data()));
    ok(trexio_write_determinant_coefficient(f, 0, n, d.determinant_coefficients.data()));
  }
  if (d.overlap) ok(trexio_write_ao_1e_int_overlap(f, d.overlap->data()));
  if (d.ecp_num > 0) ok(trexio_write_ecp_num(f, d.ecp_num));
  if (d.periodic) ok(trexio_write_pbc_periodic(f, 1));
  ok(trexio_close(f));
}

class TrexioReader : public testing::ScratchTest {
 protected:
  void expect_round_trip(const MolecularWavefunction& source, const TrexioData& data, const std::string& file) {
    MoleculeChecks checks;
    const MolecularWavefunction back = read_molecule(file, &checks);
    ASSERT_EQ(back.nuclei.size(), source.nuclei.size());
    for (std::size_t a = 0; a < source.nuclei.size(); ++a) {
      EXPECT_EQ(back.nuclei[a].position, source.nuclei[a].position);
      EXPECT_EQ(back.nuclei[a].charge, source.nuclei[a].charge);
      EXPECT_EQ(back.nuclei[a].symbol, source.nuclei[a].symbol);
    }
    EXPECT_EQ(back.electrons_up, source.electrons_up);
    EXPECT_EQ(back.electrons_down, source.electrons_down);
    ASSERT_EQ(back.shells.size(), source.shells.size());
    for (std::size_t s = 0; s < source.shells.size(); ++s) {
      EXPECT_EQ(back.shells[s].l, source.shells[s].l);
      EXPECT_EQ(back.shells[s].spherical, source.shells[s].spherical);
      EXPECT_EQ(back.shells[s].exponents, source.shells[s].exponents);
    }
    ASSERT_EQ(back.mo_up.rows(), source.mo_up.rows());
    ASSERT_EQ(back.mo_up.cols(), source.mo_up.cols());
    // Each coefficient was divided by n_i here and multiplied by the reader's
    // n_i: both norms' roundings (scale_error) and 4 more.
    for (Eigen::Index j = 0; j < source.mo_up.cols(); ++j)
      for (Eigen::Index i = 0; i < source.mo_up.rows(); ++i)
        EXPECT_NEAR(back.mo_up(i, j), source.mo_up(i, j), (2 * data.scale_error(i) + 4) * kEps * std::abs(source.mo_up(i, j)))
            << file << " (" << i << ", " << j << ")";
    EXPECT_EQ(back.mo_down, back.mo_up);
    EXPECT_LE(checks.orthonormality_ratio, 1.0);
    std::printf("%s: max |C^T S C - I| = %.3g (%.3g of its tolerance)\n", std::filesystem::path(file).filename().c_str(),
                checks.orthonormality_error, checks.orthonormality_ratio);
  }
};

TEST_F(TrexioReader, RoundTripsEachConventionAndBackEnd) {
  for (const bool spherical : {false, true}) {
    const MolecularWavefunction source = testing::two_centres(spherical);
    for (const Convention convention : {Convention::kNormalised, Convention::kRaw})
      for (const back_end_t back_end : {TREXIO_HDF5, TREXIO_TEXT}) {
        const std::string file = path(std::string(spherical ? "spherical" : "cartesian") +
                                      (convention == Convention::kRaw ? "-raw" : "-normalised") +
                                      (back_end == TREXIO_HDF5 ? ".h5" : ".dir"));
        const TrexioData data = trexio_data(source, convention);
        write_trexio(file, back_end, data);
        expect_round_trip(source, data, file);
      }
  }
}

TEST_F(TrexioReader, DeterminantsAndTheStoredOverlap) {
  MolecularWavefunction h2 = read_molecule(std::string(SLATERLAB_SOURCE_DIR) + "/tests/verify/inputs/molden/h2-sto3g.molden");
  TrexioData data = trexio_data(h2, Convention::kRaw);
  // sigma_g^2 and sigma_u^2: words up then down, bit j for MO j.
  data.determinants = {1, 1, 2, 2};
  data.determinant_coefficients = {0.99, -0.14};
  const GaussianBasis basis(h2.shells, h2.nuclei);
  const Eigen::MatrixXd s = data.scale.asDiagonal() * gaussian_overlap(basis) * data.scale.asDiagonal();
  data.overlap = std::vector<double>(s.data(), s.data() + s.size());
  write_trexio(path("h2.h5"), TREXIO_HDF5, data);
  MoleculeChecks checks;
  const MolecularWavefunction back = read_molecule(path("h2.h5"), &checks);
  ASSERT_EQ(back.determinants.size(), 2u);
  EXPECT_EQ(back.determinants[0].up, std::vector<int>{0});
  EXPECT_EQ(back.determinants[0].down, std::vector<int>{0});
  EXPECT_EQ(back.determinants[1].up, std::vector<int>{1});
  EXPECT_EQ(back.determinants[1].coefficient, -0.14);
  ASSERT_TRUE(checks.stored_overlap_ratio.has_value());
  EXPECT_LE(*checks.stored_overlap_ratio, 1.0);
  // One element off by 1e-9 is not the file's own basis.
  (*data.overlap)[1] += 1e-9;
  (*data.overlap)[2] += 1e-9;
  write_trexio(path("h2-bad-overlap.h5"), TREXIO_HDF5, data);
  EXPECT_THROW((void)read_molecule(path("h2-bad-overlap.h5")), ConfigError);
}

class BadTrexio : public TrexioReader {
 protected:
  void refused(const TrexioData& data, const std::string& words) {
    const std::string file = path("bad-" + std::to_string(++count_) + ".h5");
    write_trexio(file, TREXIO_HDF5, data);
    refused_file(file, words);
  }
  void refused_file(const std::string& file, const std::string& words) {
    testing::expect_molecule_refused(file, words);
  }
  int count_ = 0;
};

TEST_F(BadTrexio, InconsistentAndUnsupportedFilesAreRefused) {
  const TrexioData good = trexio_data(testing::two_centres(false), Convention::kNormalised);
  TrexioData d = good;
  d.nucleus_index[3] = 7;
  refused(d, "names nucleus 7 of 2");
  d = good;
  d.ang_mom[0] = 5;
  refused(d, "l = 5");
  d = good;
  d.ecp_num = 2;
  refused(d, "effective core potentials");
  d = good;
  d.periodic = true;
  refused(d, "periodic");
  d = good;
  d.basis_type = "Slater";
  refused(d, "basis type 'Slater'");
  d = good;
  std::swap(d.ao_shell[1], d.ao_shell[30]);
  refused(d, "in ao.shell");
  d = good;
  d.mo_coefficient[(d.mo_coefficient.size() - d.ao_shell.size())] *= 1.01;  // the last MO, AO 0
  refused(d, "not orthonormal");
  d = good;
  d.mo_spin.assign(static_cast<std::size_t>(d.mo_num), 0);
  d.mo_spin[4] = 2;
  refused(d, "spin 2");
  d = good;
  d.determinants = {7, 0, 15, 0};  // 70 MOs: two words per spin; 3 up electrons, the file says 5
  d.determinant_coefficients = {1.0};
  refused(d, "determinant 0 occupies 3 up MOs");
  d = good;
  d.shell_factor[2] = 0.0;
  refused(d, "is zero");

  refused_file(path("missing.h5"), "cannot open molecule file");
  refused_file(write("plain.txt", "just text\n"), "not a molecule file");
  const hid_t empty = H5Fcreate(path("empty.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(empty);
  refused_file(path("empty.h5"), "");
}

}  // namespace
}  // namespace slaterlab
