// The Molden reader through read_molecule: hand-made files
// (tests/verify/inputs/molden/, made by make_files.py) read back to the
// molecules they describe, the cartesian and spherical component orders and
// normalisations against closed forms, the conventions' checks, and bad files
// refused with one line naming the file.

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <functional>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>

#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"
#include "tests/verify/inputs/molecule_refusal.hpp"
#include "tests/verify/inputs/molecule_test_support.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/config_error.hpp"
#include "verify/inputs/molecule_file.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

std::string hand_made(const std::string& name) {
  return std::string(SLATERLAB_SOURCE_DIR) + "/tests/verify/inputs/molden/" + name;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

Eigen::MatrixXd evaluate(const MolecularWavefunction& wf, const Eigen::MatrixXd& mo, const Eigen::Matrix3Xd& r) {
  std::vector<int> all(static_cast<std::size_t>(mo.cols()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  const MolecularOrbitals orbitals(std::make_shared<MolecularWavefunction>(wf), mo, all, OrbitalPrecision::kDouble);
  Eigen::MatrixXd values;
  orbitals.evaluate_values(r, values);
  return values;
}

TEST(MoldenReader, H2ReadsBackToItsSigmaOrbitals) {
  MoleculeChecks checks;
  const MolecularWavefunction wf = read_molecule(hand_made("h2-sto3g.molden"), &checks);
  ASSERT_EQ(wf.nuclei.size(), 2u);
  EXPECT_EQ(wf.nuclei[1].symbol, "H");
  EXPECT_EQ(wf.nuclei[1].charge, 1.0);
  EXPECT_EQ(wf.nuclei[1].position, Eigen::Vector3d(0, 0, 1.4));
  EXPECT_EQ(wf.electrons_up, 1);
  EXPECT_EQ(wf.electrons_down, 1);
  EXPECT_EQ(wf.ao_count(), 2);
  EXPECT_EQ(wf.mo_up, wf.mo_down);
  EXPECT_TRUE(wf.determinants.empty());
  EXPECT_FALSE(wf.energy.has_value());
  EXPECT_EQ(wf.source, "molden");
  EXPECT_NEAR(wf.nuclear_repulsion(), 1.0 / 1.4, 2 * kEps);
  EXPECT_LE(checks.orthonormality_ratio, 1.0);
  std::printf("h2-sto3g: max |C^T S C - I| = %.3g (%.3g of its tolerance)\n", checks.orthonormality_error,
              checks.orthonormality_ratio);

  // sigma_g = (chi_A + chi_B) / sqrt(2 (1 + S_AB)) from the STO-3G
  // parameters alone: chi = sum_k d_k (2 a_k / pi)^{3/4} e^{-a_k r^2} / norm.
  const double a[3] = {3.42525091, 0.62391373, 0.16885540}, d[3] = {0.15432897, 0.53532814, 0.44463454};
  double norm2 = 0.0, s_ab = 0.0;
  for (int k = 0; k < 3; ++k)
    for (int q = 0; q < 3; ++q) {
      const double rho = std::pow(2 * std::sqrt(a[k] * a[q]) / (a[k] + a[q]), 1.5);
      norm2 += d[k] * d[q] * rho;
      s_ab += d[k] * d[q] * rho * std::exp(-a[k] * a[q] / (a[k] + a[q]) * 1.4 * 1.4);
    }
  s_ab /= norm2;
  const auto chi = [&](const Eigen::Vector3d& r) {
    double v = 0.0;
    for (int k = 0; k < 3; ++k) v += d[k] * std::pow(2 * a[k] / std::numbers::pi, 0.75) * std::exp(-a[k] * r.squaredNorm());
    return v / std::sqrt(norm2);
  };
  Eigen::Matrix3Xd r(3, 2);
  r << 0.3, -0.4, 0.2, 0.5, 0.7, 1.9;
  const Eigen::MatrixXd values = evaluate(wf, wf.mo_up, r);
  for (int p = 0; p < 2; ++p) {
    const double ca = chi(r.col(p)), cb = chi(r.col(p) - Eigen::Vector3d(0, 0, 1.4));
    const double g = (ca + cb) / std::sqrt(2 * (1 + s_ab)), u = (ca - cb) / std::sqrt(2 * (1 - s_ab));
    // The file prints 16 digits; each side is a short sum of exponentials
    // (arguments <= 10): 64 eps of the largest term covers both.
    const double scale = std::abs(ca) + std::abs(cb);
    EXPECT_NEAR(values(0, p), g, 64 * kEps * scale / std::sqrt(1 - s_ab));
    EXPECT_NEAR(values(1, p), u, 64 * kEps * scale / std::sqrt(1 - s_ab));
  }
}

TEST(MoldenReader, UnrestrictedFilesSplitTheSpins) {
  const MolecularWavefunction wf = read_molecule(hand_made("h2-triplet-uhf.molden"));
  EXPECT_EQ(wf.electrons_up, 2);
  EXPECT_EQ(wf.electrons_down, 0);
  EXPECT_EQ(wf.mo_up.cols(), 2);
  EXPECT_EQ(wf.mo_down.cols(), 2);
}

TEST(MoldenReader, EveryAngularMomentumCartesianSphericalAndMixed) {
  // s + sp + d + f + g: cartesian 1 + 4 + 6 + 10 + 15, spherical d, f, g 5, 7, 9.
  const std::vector<std::pair<std::string, Eigen::Index>> files{
      {"ne-cartesian.molden", 36}, {"ne-spherical.molden", 26}, {"ne-5d10f.molden", 35}};
  for (const auto& [name, aos] : files) {
    MoleculeChecks checks;
    const MolecularWavefunction wf = read_molecule(hand_made(name), &checks);
    EXPECT_EQ(wf.ao_count(), aos) << name;
    EXPECT_EQ(wf.electrons_up, 5) << name;
    EXPECT_EQ(wf.electrons_down, 5) << name;
    ASSERT_EQ(wf.nuclei.size(), 1u);
    const double bohr = 1.0 / 0.529177210903;
    EXPECT_NEAR((wf.nuclei[0].position - Eigen::Vector3d(0.25, -0.5, 0.75) * bohr).norm(), 0.0, 4 * kEps);
    EXPECT_LE(checks.orthonormality_ratio, 1.0) << name;
    std::printf("%s: max |C^T S C - I| = %.3g (%.3g of its tolerance)\n", name.c_str(),
                checks.orthonormality_error, checks.orthonormality_ratio);
  }
}

// Some writers leave zero coefficients out of [MO]; Molden reads them as 0.
TEST(MoldenReader, CoefficientsLeftOutAreZero) {
  const std::string full = text_of(hand_made("ne-5d10f.molden"));
  std::istringstream lines(full);
  std::string sparse, line;
  std::size_t dropped = 0;
  while (std::getline(lines, line)) {
    const bool zero = line.size() > 22 && line.compare(line.size() - 22, 22, " 0.000000000000000e+00") == 0 &&
                      line.find('-') == std::string::npos && line.find("Ene=") == std::string::npos &&
                      line.find("Occup=") == std::string::npos;
    if (zero) ++dropped; else sparse += line + "\n";
  }
  ASSERT_GT(dropped, 100u);  // the file has many exact zeros: the test removes them
  const MolecularWavefunction a = read_molden_text(full, "full.molden");
  const MolecularWavefunction b = read_molden_text(sparse, "sparse.molden");
  EXPECT_EQ(a.mo_up, b.mo_up);
  EXPECT_EQ(a.mo_down, b.mo_down);
}

// One d shell, one primitive (alpha = 0.8) at the origin; Molden's cartesian
// order is xx, yy, zz, xy, xz, yz and its spherical one D0, D+1, D-1, D+2,
// D-2. The orbitals below are exact combinations whose values at a point
// follow from the normalised primitive alone: N_xy = (2a/pi)^{3/4} 4a and
// N_xx = N_xy / sqrt(3) (Racah's S_2m share N_xx).
std::string d_shell_file(bool spherical, const std::string& orbitals) {
  return std::string("[Molden Format]\n[Atoms] AU\nX 1 1 0.0 0.0 0.0\n") + (spherical ? "[5D]\n" : "") +
         "[GTO]\n1 0\n d 1 1.00\n 0.8 1.0\n\n[MO]\n" + orbitals;
}

std::string orbital(double occupation, const std::vector<double>& c) {
  std::ostringstream out;
  out.precision(17);
  out << " Sym= 1a\n Ene= 0.0\n Spin= Alpha\n Occup= " << occupation << "\n";
  for (std::size_t i = 0; i < c.size(); ++i) out << i + 1 << " " << c[i] << "\n";
  return out.str();
}

TEST(MoldenReader, CartesianAndSphericalComponentsFollowMoldensOrderAndNormalisation) {
  const double s3 = std::sqrt(3.0), r5 = 1 / std::sqrt(5.0);
  const std::string cartesian = orbital(2, {0, 0, 0, 1, 0, 0}) + orbital(0, {0, 0, 0, 0, 1, 0}) +
                                orbital(0, {0, 0, 0, 0, 0, 1}) + orbital(0, {r5, r5, r5, 0, 0, 0}) +
                                orbital(0, {s3 / 2, -s3 / 2, 0, 0, 0, 0}) + orbital(0, {0.5, 0.5, -1, 0, 0, 0});
  const std::string spherical = orbital(2, {1, 0, 0, 0, 0}) + orbital(0, {0, 1, 0, 0, 0}) +
                                orbital(0, {0, 0, 1, 0, 0}) + orbital(0, {0, 0, 0, 1, 0}) +
                                orbital(0, {0, 0, 0, 0, 1});
  const MolecularWavefunction wc = read_molden_text(d_shell_file(false, cartesian), "cartesian.molden");
  const MolecularWavefunction ws = read_molden_text(d_shell_file(true, spherical), "spherical.molden");
  Eigen::Matrix3Xd r(3, 1);
  r << 0.3, -0.7, 0.45;
  const double x = 0.3, y = -0.7, z = 0.45, a = 0.8;
  const double e = std::exp(-a * (x * x + y * y + z * z));
  const double nxy = std::pow(2 * a / std::numbers::pi, 0.75) * 4 * a, nxx = nxy / s3;
  const Eigen::VectorXd vc = evaluate(wc, wc.mo_up, r).col(0), vs = evaluate(ws, ws.mo_up, r).col(0);
  const Eigen::VectorXd expect_c = (Eigen::VectorXd(6) << nxy * x * y * e, nxy * x * z * e, nxy * y * z * e,
                                    nxx * (x * x + y * y + z * z) * r5 * e, nxx * (x * x - y * y) * s3 / 2 * e,
                                    nxx * (x * x + y * y - 2 * z * z) / 2 * e)
                                       .finished();
  const Eigen::VectorXd expect_s = (Eigen::VectorXd(5) << nxx * (z * z - (x * x + y * y) / 2) * e,
                                    nxx * s3 * x * z * e, nxx * s3 * y * z * e,
                                    nxx * s3 / 2 * (x * x - y * y) * e, nxx * s3 * x * y * e)
                                       .finished();
  // Each value is one exponential (argument < 1) times a few products: 32 eps
  // of the largest term's size.
  const double scale = nxy * e * (x * x + y * y + z * z);
  for (Eigen::Index i = 0; i < 6; ++i) EXPECT_NEAR(vc(i), expect_c(i), 32 * kEps * scale) << "cartesian " << i;
  for (Eigen::Index i = 0; i < 5; ++i) EXPECT_NEAR(vs(i), expect_s(i), 32 * kEps * scale) << "spherical " << i;
}

// Molden's cartesian component `c` of degree l, as the specification
// lists them.
std::array<int, 3> molden_powers(int l, int c) {
  const std::string orders[5] = {"1", "x y z", "xx yy zz xy xz yz", "xxx yyy zzz xyy xxy xxz xzz yzz yyz xyz",
                                 "xxxx yyyy zzzz xxxy xxxz xyyy yyyz xzzz yzzz xxyy xxzz yyzz xxyz xyyz xyzz"};
  std::istringstream words(orders[l]);
  std::string word;
  for (int k = 0; k <= c; ++k) words >> word;
  const auto count = [&](char x) { return static_cast<int>(std::count(word.begin(), word.end(), x)); };
  return {count('x'), count('y'), count('z')};
}

// A Molden file of `wf` written the way a writer with its own habits writes
// it: the file's MO coefficient of an AO is ours / scale(l, spherical,
// component in Molden's order), its contraction coefficient d_k * weight(l,
// spherical, alpha_k).
std::string molden_of(const MolecularWavefunction& wf, const std::function<double(int, bool, int)>& scale,
                      const std::function<double(int, bool, double)>& weight) {
  std::ostringstream out;
  out << std::scientific;  // 17 significant digits, every number: the data's precision is the tolerance's
  out.precision(16);
  out << "[Molden Format]\n[Atoms] AU\n";
  for (std::size_t a = 0; a < wf.nuclei.size(); ++a)
    out << "X " << a + 1 << " " << wf.nuclei[a].charge << " " << wf.nuclei[a].position.transpose() << "\n";
  if (wf.shells.front().spherical) out << "[5D7F]\n[9G]\n";
  out << "[GTO]\n";
  std::vector<std::pair<Eigen::Index, double>> file_aos;  // (our row, scale) per file AO
  Eigen::Index first = 0;
  for (std::size_t a = 0; a < wf.nuclei.size(); ++a) {
    out << a + 1 << " 0\n";
    first = 0;
    for (const auto& shell : wf.shells) {
      const int size = shell_size(shell.l, shell.spherical);
      if (static_cast<std::size_t>(shell.nucleus) == a) {
        out << " " << "spdfg"[shell.l] << " " << shell.exponents.size() << " 1.00\n";
        for (std::size_t k = 0; k < shell.exponents.size(); ++k)
          out << " " << shell.exponents[k] << " "
              << shell.coefficients[k] * weight(shell.l, shell.spherical, shell.exponents[k]) << "\n";
        const auto ours = cartesian_powers(shell.l);
        for (int c = 0; c < size; ++c) {
          // Molden's p is x, y, z always; a spherical p of ours is z, x, y.
          const Eigen::Index row =
              shell.l == 1 && shell.spherical ? (c + 1) % 3
              : shell.spherical || shell.l < 2
                  ? c
                  : std::find(ours.begin(), ours.end(), molden_powers(shell.l, c)) - ours.begin();
          file_aos.emplace_back(first + row, scale(shell.l, shell.spherical, c));
        }
      }
      first += size;
    }
    out << "\n";
  }
  out << "[MO]\n";
  for (Eigen::Index j = 0; j < wf.mo_up.cols(); ++j) {
    out << " Sym= 1a\n Ene= 0.0\n Spin= Alpha\n Occup= " << (j < wf.electrons_up ? 2.0 : 0.0) << "\n";
    for (std::size_t i = 0; i < file_aos.size(); ++i)
      out << i + 1 << " " << wf.mo_up(file_aos[i].first, j) / file_aos[i].second << "\n";
  }
  return out.str();
}

double odd_factorial(int a) {  // (2a - 1)!!
  double r = 1.0;
  for (int k = 2 * a - 1; k > 1; k -= 2) r *= k;
  return r;
}

TEST(MoldenReader, KnownWritersDeviationsAreRecognisedOnlyWhenTheFormatFails) {
  // IOData's descriptions (iodata/formats/molden.py): Psi4 <= 1.3.2 writes
  // cartesian d, f, g normalised like x^l; CFOUR 2.1 scales them by
  // sqrt(prod (2a_d - 1)!!); ORCA writes contraction coefficients of
  // unnormalised primitives (s, p, spherical shells) and negates f and g
  // with |m| = 3, 4.
  const auto cartesian_scale = [](bool like_xl) {
    return [like_xl](int l, bool spherical, int c) {
      if (spherical || l < 2) return 1.0;
      const auto powers = molden_powers(l, c);
      const double product = odd_factorial(powers[0]) * odd_factorial(powers[1]) * odd_factorial(powers[2]);
      return like_xl ? std::sqrt(product / odd_factorial(l)) : std::sqrt(product);
    };
  };
  const auto unit_weight = [](int, bool, double) { return 1.0; };
  const auto orca_weight = [](int l, bool spherical, double alpha) {
    return l <= 1 || spherical ? std::pow(alpha, (2 * l + 3) / 4.0) : 1.0;
  };
  const auto orca_sign = [](int l, bool spherical, int c) {
    return spherical && l >= 3 && c >= 5 ? -1.0 : 1.0;  // c = 5, 6: m = +3, -3; 7, 8: +4, -4
  };
  struct Case {
    bool spherical;
    std::function<double(int, bool, int)> scale;
    std::function<double(int, bool, double)> weight;
    std::string named;
  };
  const std::vector<Case> cases{{false, cartesian_scale(true), unit_weight, "Psi4 <= 1.3.2"},
                                {false, cartesian_scale(false), unit_weight, "CFOUR 2.1"},
                                {true, orca_sign, orca_weight, "ORCA"},
                                {false, orca_sign, orca_weight, "ORCA"},
                                {true, orca_sign, unit_weight, "no dialect: only signs differ"}};
  for (const auto& c : cases) {
    const MolecularWavefunction source = testing::two_centres(c.spherical);
    const std::string text = molden_of(source, c.scale, c.weight);
    if (c.named.rfind("no dialect", 0) == 0) {
      // Negated f and g alone, with ORCA's weights missing: no convention fits.
      EXPECT_THROW((void)read_molden_text(text, "signs.molden"), ConfigError);
      continue;
    }
    const MolecularWavefunction back = read_molden_text(text, c.named + ".molden");
    EXPECT_NE(back.source.find(c.named), std::string::npos) << back.source;
    // Rows of ours for the rows read back: the same but for p, which Molden
    // holds as x, y, z where a spherical source has z, x, y.
    std::vector<Eigen::Index> row;
    for (const auto& shell : source.shells)
      for (int k = 0; k < shell_size(shell.l, shell.spherical); ++k)
        row.push_back(static_cast<Eigen::Index>(row.size()) - k + (shell.l == 1 && shell.spherical ? (k + 1) % 3 : k));
    // 17 printed digits and one scaling each way: 8 eps relative.
    for (Eigen::Index j = 0; j < source.mo_up.cols(); ++j)
      for (Eigen::Index i = 0; i < source.mo_up.rows(); ++i) {
        const double expected = source.mo_up(row[static_cast<std::size_t>(i)], j);
        EXPECT_NEAR(back.mo_up(i, j), expected, 8 * kEps * std::abs(expected)) << c.named;
      }
  }
  // The format's own files never take a dialect.
  const MolecularWavefunction plain = read_molden_text(molden_of(testing::two_centres(false),
      [](int, bool, int) { return 1.0; }, unit_weight), "plain.molden");
  EXPECT_EQ(plain.source, "molden");
}

class BadMolden : public testing::ScratchTest {
 protected:
  // Reads `text` as a file; expects one ConfigError line naming it and
  // containing `words`.
  void refused(const std::string& text, const std::string& words) {
    testing::expect_molecule_refused(write("bad.molden", text), words);
  }
  std::string h2 = text_of(hand_made("h2-sto3g.molden"));
};

TEST_F(BadMolden, MalformedInconsistentAndUnsupportedFilesAreRefused) {
  refused("hello\n", "not a molecule file");
  refused(replaced(h2, "[Atoms] AU", "[Atoms]"), "names no unit");
  refused(replaced(h2, "  2 0", "  3 0"), "atom 3 is not in [Atoms]");
  refused(replaced(h2, "    2 -1.", "# 2 -1."), "expected 'index coefficient'");
  // A coefficient left out is 0: here a nonzero one, so the MOs are no
  // longer orthonormal.
  refused(replaced(h2, "    2 -1.211464073543479e+00\n", ""), "not orthonormal");
  refused(replaced(h2, "    2 -1.", "    1 -1."), "repeated");
  refused(replaced(h2, "    2 -1.", "    3 -1."), "outside 1..2");
  refused(replaced(h2, " s   3 1.00", " h   3 1.00"), "l > 4");
  refused(replaced(h2, " s   3 1.00", " q   3 1.00"), "expected 'label primitives");
  refused(replaced(h2, "3.425250910000000e+00", "3.4x5e+00"), "expected a finite number for the exponent");
  refused(replaced(h2, "3.425250910000000e+00", "-3.425250910000000e+00"), "is not positive");
  refused(replaced(h2, "3.425250910000000e+00", "nan"), "finite number");
  refused(h2 + "[Pseudo]\nH 1 1\n", "effective core potentials");
  refused(h2 + "[STO]\n", "Slater-type orbitals");
  refused(h2 + "[Cell]\n", "periodic");
  refused(replaced(h2, "[GTO]", "[5D10F]\n[7F]\n[GTO]"), "contradicts");
  refused(replaced(h2, "Occup= 2.000000", "Occup= 1.500000"), "not one determinant");
  refused(replaced(h2, "[MO]", "[XX]"), "no [MO] section");
  refused(h2 + "[Atoms] AU\nH 1 1 0 0 0\n", "appears twice");
  // Orthonormality: one printed digit changed far beyond the print's precision.
  refused(replaced(h2, "    1  5.", "    1  6."), "not orthonormal");
}

}  // namespace
}  // namespace slaterlab
