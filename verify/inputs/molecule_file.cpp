#include "verify/inputs/molecule_file.hpp"

// The checks every file passes (docs/molecules.md, "Formats and conventions").
//
// Orthonormality. M = C^T S C over all MOs of a spin, S the analytic overlap
// (gaussian_overlap.hpp). Its element (i, j) may differ from delta_ij by:
// - the printed coefficients: C = C_true + dC, |dC| <= h (half a unit in the
//   last printed digit), so (|h|^T |S| |C| + |C|^T |S| |h|)_ij;
// - the printed basis: S_ab moves by at most eta_a + eta_b (Cauchy-Schwarz,
//   eta the bound on ||printed AO - exact AO|| of each), so
//   (|C|^T eta)_i (1^T |C|)_j + (1^T |C|)_i (|C|^T eta)_j;
// - our S's rounding, eps (|C|^T R |C|)_ij (gaussian_overlap_rounding);
// - forming C^T S C: two products of length n (the AO count), 2 n eps
//   (|C|^T |S| |C|)_ij;
// - the producing code's own orthonormalisation, done in double by a
//   backward-stable method (eigenvectors of the Fock matrix in the metric S,
//   or Lowdin / Cholesky orthogonalisation): ||C^T S C - I|| <= c n eps
//   ||C||^2 ||S|| with c a small constant of the method (4 here), the
//   condition of S entering through ||C||^2 ||S|| ~ kappa(S).
// The sum, element by element, is the tolerance; the largest ratio of
// |M - I| to it must be <= 1.
//
// Stored overlap (TREXIO): the file's S_file,ab = n_a n_b S_ab in its own AO
// scale. Ours carries eps R_ab (rounding) and the n's relative rounding
// (rho_a + rho_b) eps; the producer's is taken to be as large as ours, hence
// the factor 2 on the first.

#include "verify/inputs/config_error.hpp"
#include "verify/inputs/molecule_readers.hpp"
#include "verify/store/hdf5_handle.hpp"
#include "verify/store/isolated.hpp"

#include "slaterlab/strategies/orbitals/gaussian_overlap.hpp"

#include <fmt/format.h>

#include <Eigen/Eigenvalues>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kOrthogonalisationConstant = 4.0;

struct Worst {
  double error = 0.0;
  double ratio = 0.0;
  Eigen::Index i = 0, j = 0;
  double tolerance = 0.0;
};

// ||A||_2 of a symmetric positive semidefinite A.
double largest_eigenvalue(const Eigen::MatrixXd& a) {
  if (a.size() == 0) return 0.0;
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(a, Eigen::EigenvaluesOnly).eigenvalues().cwiseAbs().maxCoeff();
}

Worst orthonormality(const Eigen::MatrixXd& c, const Eigen::MatrixXd& printed, const Eigen::VectorXd& eta,
                     const Eigen::MatrixXd& s, const Eigen::MatrixXd& rounding) {
  const Eigen::MatrixXd m = c.transpose() * s * c;
  const Eigen::MatrixXd abs_c = c.cwiseAbs();
  const Eigen::MatrixXd abs_s = s.cwiseAbs();
  const Eigen::MatrixXd scs = abs_c.transpose() * abs_s * abs_c;
  const Eigen::MatrixXd hsc = printed.transpose() * abs_s * abs_c;
  const Eigen::VectorXd u = abs_c.transpose() * eta;
  const Eigen::VectorXd v = abs_c.colwise().sum().transpose();
  const auto n = static_cast<double>(c.rows());
  const double producer = kOrthogonalisationConstant * n * kEps * largest_eigenvalue(c.transpose() * c) *
                          largest_eigenvalue(s);
  const Eigen::MatrixXd ours = kEps * (abs_c.transpose() * rounding * abs_c) + 2.0 * n * kEps * scs;
  Worst worst;
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const double error = std::abs(m(i, j) - (i == j ? 1.0 : 0.0));
      const double tolerance =
          hsc(i, j) + hsc(j, i) + u(i) * v(j) + v(i) * u(j) + ours(i, j) + producer;
      const double ratio = error / tolerance;
      worst.error = std::max(worst.error, error);
      if (!(ratio <= worst.ratio)) worst = {worst.error, ratio, i, j, tolerance};
    }
  return worst;
}

// What the checks measured, and why the file fails them (empty: it passes).
struct Verdict {
  MoleculeChecks measured;
  std::string failure;
};

// Structural problems throw ConfigError; the numerical checks give a Verdict.
Verdict judge(const ReadMolecule& read, const std::string& name) {
  const MolecularWavefunction& wf = read.wavefunction;
  GaussianBasis basis = [&] {
    try {
      return GaussianBasis(wf.shells, wf.nuclei);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(name + ": " + e.what());
    }
  }();
  if (basis.size() != wf.mo_up.rows() || basis.size() != wf.mo_down.rows())
    throw ConfigError(fmt::format("{}: the MO coefficients have {} rows for {} AOs", name, wf.mo_up.rows(),
                                  basis.size()));
  const Eigen::MatrixXd s = gaussian_overlap(basis);
  const Eigen::MatrixXd rounding = gaussian_overlap_rounding(basis);
  Verdict verdict;
  MoleculeChecks& measured = verdict.measured;
  for (int spin = 0; spin < 2; ++spin) {
    const Worst worst = orthonormality(spin == 0 ? wf.mo_up : wf.mo_down,
                                       spin == 0 ? read.up_coefficient_error : read.down_coefficient_error,
                                       read.ao_deviation, s, rounding);
    measured.orthonormality_error = std::max(measured.orthonormality_error, worst.error);
    measured.orthonormality_ratio = std::max(measured.orthonormality_ratio, worst.ratio);
    if (!(worst.ratio <= 1.0) && verdict.failure.empty()) {
      const Eigen::MatrixXd& c = spin == 0 ? wf.mo_up : wf.mo_down;
      verdict.failure = fmt::format(
          "{}: the {} MOs are not orthonormal with the file's basis: |(C^T S C - I)({}, {})| = {:.3g} exceeds "
          "{:.3g}, the bound from the data's precision (the file's AOs are not the ones its basis defines "
          "under the format's conventions, nor under a known writer's deviation; see docs/molecules.md)",
          name, spin == 0 ? "up" : "down", worst.i, worst.j,
          std::abs(c.col(worst.i).dot(s * c.col(worst.j)) - (worst.i == worst.j ? 1.0 : 0.0)), worst.tolerance);
    }
  }
  if (read.stored_overlap) {
    const Eigen::VectorXd& n = read.ao_scale;
    double error = 0.0, ratio = 0.0;
    Eigen::Index wi = 0, wj = 0;
    for (Eigen::Index j = 0; j < s.cols(); ++j)
      for (Eigen::Index i = 0; i < s.rows(); ++i) {
        const double ours = n(i) * n(j) * s(i, j);
        const double scale = std::abs(n(i) * n(j));
        const double tolerance = 2.0 * kEps * scale * rounding(i, j) +
                                 (read.ao_scale_rounding(i) + read.ao_scale_rounding(j)) * kEps * std::abs(ours);
        const double e = std::abs(ours - (*read.stored_overlap)(i, j));
        error = std::max(error, e);
        if (!(e / tolerance <= ratio)) ratio = e / tolerance, wi = i, wj = j;
      }
    measured.stored_overlap_error = error;
    measured.stored_overlap_ratio = ratio;
    if (!(ratio <= 1.0) && verdict.failure.empty())
      verdict.failure = fmt::format(
          "{}: the analytic AO overlap differs from the file's ao_1e_int_overlap at ({}, {}) by {:.3g}, "
          "{:.3g} times the rounding bound (the file's AOs are not the ones its basis group defines)",
          name, wi, wj, std::abs(n(wi) * n(wj) * s(wi, wj) - (*read.stored_overlap)(wi, wj)), ratio);
  }
  return verdict;
}

MolecularWavefunction accept(ReadMolecule& read, const Verdict& verdict, MoleculeChecks* checks) {
  if (!verdict.failure.empty()) throw ConfigError(verdict.failure);
  if (checks != nullptr) *checks = verdict.measured;
  return std::move(read.wavefunction);
}

bool is_hdf5(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char signature[8] = {};
  in.read(signature, sizeof signature);
  return in.gcount() == 8 && std::memcmp(signature, "\x89HDF\r\n\x1a\n", 8) == 0;
}

}  // namespace

MolecularWavefunction read_molden_text(const std::string& text, const std::string& name,
                                       MoleculeChecks* checks) {
  // The format's convention first; a writer's documented deviation only when
  // the file fails it and passes under that one (their differences move
  // C^T S C by the size of an overlap, far beyond the tolerance, so at most
  // one can pass).
  std::string first_failure;
  for (const MoldenDialect dialect : kMoldenDialects) {
    ReadMolecule read = read_molden(text, name, dialect);
    if (dialect != MoldenDialect::kFormat && !read.dialect_applies) continue;
    const Verdict verdict = judge(read, name);
    if (verdict.failure.empty()) return accept(read, verdict, checks);
    if (first_failure.empty()) first_failure = verdict.failure;
  }
  throw ConfigError(first_failure);
}

MolecularWavefunction read_molecule(const std::string& path, MoleculeChecks* checks) {
  if (path.empty()) throw ConfigError("the molecule file path is empty");
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw ConfigError(path + ": cannot open molecule file (" + (ec ? ec.message() : std::strerror(ENOENT)) + ")");
  if (std::filesystem::is_directory(status) || is_hdf5(path)) {
    h5::library_init();
    // A damaged file may crash libhdf5 inside libtrexio: read it once in a
    // child first (verify/store/isolated.hpp), then for real.
    try {
      check_file_isolated(path, [&] { (void)read_trexio(path); });
    } catch (const IsolatedFailure& e) {
      if (e.crashed()) throw ConfigError(path + ": " + e.what());
    }
    ReadMolecule read = read_trexio(path);
    return accept(read, judge(read, path), checks);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open molecule file (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  std::string_view start(content);
  if (start.substr(0, 3) == "\xEF\xBB\xBF") start.remove_prefix(3);
  while (!start.empty() && std::isspace(static_cast<unsigned char>(start.front()))) start.remove_prefix(1);
  std::string head(start.substr(0, 15));
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (head != "[molden format]")
    throw ConfigError(path + ": not a molecule file slaterlab reads (TREXIO: an HDF5 file or a directory; "
                             "Molden: text starting with [Molden Format])");
  return read_molden_text(content, path, checks);
}

}  // namespace slaterlab
