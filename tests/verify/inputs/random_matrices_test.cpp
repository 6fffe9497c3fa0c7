// Tests of verify/inputs/random_matrices.hpp: the Haar-orthogonal factors
// are orthogonal to rounding and Haar distributed, randsvd matrices have
// their singular values, and scripts/hard_cases.py, which implements the
// same two algorithms in numpy, gives the same matrices from the same
// Gaussian draws.
//
// Statistical checks use 5 standard errors of the statistic (a correct
// generator fails one with probability < 6e-7 for a random seed). The seeds
// are fixed, so every test is deterministic.

#include "verify/inputs/random_matrices.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <unistd.h>

#include "verify/inputs/rng.hpp"
#include "verify/inputs/workload.hpp"

namespace slaterlab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kSigmas = 5.0;

Eigen::VectorXd singular_values(const Eigen::MatrixXd& a) {
  return Eigen::JacobiSVD<Eigen::MatrixXd>(a).singularValues();
}

TEST(HaarOrthogonal, IsOrthogonalToRounding) {
  // Householder QR gives a Q within sqrt(n) gamma_{cn} of an orthogonal
  // matrix in the worst case (Higham, ASNA 2nd ed., Thm 19.4: O(n^1.5 eps));
  // rounding errors of random sign make it O(sqrt(n) eps) in practice
  // (measured ||Q^T Q - I||_2 = 4.7 eps at n = 8, 13 eps at n = 200). The
  // bound n eps lies between: above every measurement by a factor >= 1.7.
  for (const Eigen::Index n : {1, 2, 8, 64, 200}) {
    Rng rng(21, 0);
    const Eigen::MatrixXd q = haar_orthogonal(rng.normal_matrix(n, n));
    const Eigen::MatrixXd e = q.transpose() * q - Eigen::MatrixXd::Identity(n, n);
    EXPECT_LE(singular_values(e)(0), double(n) * kEps) << "n = " << n;
  }
}

TEST(HaarOrthogonal, IsHaarDistributed) {
  // M = 2000 samples of 10 x 10 Haar orthogonal matrices. Under Haar:
  // Q(0,0) has mean 0 and variance 1/n; tr Q has the moments of N(0,1) up to
  // order n/2 (Diaconis-Shahshahani), so mean 0, E tr^2 = 1 and
  // Var tr^2 = E tr^4 - 1 = 2; det Q = +-1 with probability 1/2 each.
  constexpr int kSamples = 2000;
  constexpr Eigen::Index kN = 10;
  Rng rng(31, 0);
  Rng raw_rng(31, 0);  // the same Gaussian matrices, without the sign fix
  double q00 = 0, raw_q00 = 0, tr = 0, tr2 = 0;
  int positive = 0;
  for (int i = 0; i < kSamples; ++i) {
    const Eigen::MatrixXd q = haar_orthogonal(rng.normal_matrix(kN, kN));
    const Eigen::MatrixXd raw =
        Eigen::HouseholderQR<Eigen::MatrixXd>(raw_rng.normal_matrix(kN, kN)).householderQ();
    q00 += q(0, 0);
    raw_q00 += raw(0, 0);
    tr += q.trace();
    tr2 += q.trace() * q.trace();
    positive += q.determinant() > 0;
  }
  const double m = kSamples;
  const double q00_tolerance = kSigmas / std::sqrt(double(kN) * m);
  EXPECT_NEAR(q00 / m, 0.0, q00_tolerance);
  EXPECT_NEAR(tr / m, 0.0, kSigmas / std::sqrt(m));
  EXPECT_NEAR(tr2 / m, 1.0, kSigmas * std::sqrt(2.0 / m));
  EXPECT_NEAR(positive / m, 0.5, kSigmas * std::sqrt(0.25 / m));
  // The check has power: Householder's own Q(0,0) = -|g_00| / ||g_0|| < 0,
  // mean about -sqrt(2 / (pi n)) = -0.25, 7 times the tolerance.
  EXPECT_LT(raw_q00 / m, -5 * q00_tolerance);
}

TEST(HaarOrthogonal, RefusesANonSquareMatrix) {
  EXPECT_THROW(haar_orthogonal(Eigen::MatrixXd::Zero(3, 2)), std::invalid_argument);
  EXPECT_THROW(randsvd(Eigen::MatrixXd::Zero(3, 3), Eigen::MatrixXd::Zero(3, 3),
                       Eigen::VectorXd::Ones(2)),
               std::invalid_argument);
}

// ---- scripts/hard_cases.py: the same algorithms in numpy -------------------------

void write_matrix(const std::filesystem::path& file, const Eigen::MatrixXd& m) {
  std::ofstream out(file);
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) out << fmt::format("{:.17g} ", m(i, j));
    out << "\n";
  }
}

Eigen::MatrixXd read_matrix(const std::filesystem::path& file, Eigen::Index rows, Eigen::Index cols) {
  std::ifstream in(file);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i)
    for (Eigen::Index j = 0; j < cols; ++j) in >> m(i, j);
  if (!in) ADD_FAILURE() << "cannot read " << rows << " x " << cols << " numbers from " << file;
  return m;
}

// hard_cases.py draws its Gaussian matrices with numpy; given the same
// Gaussian matrices as this generator, it must return the same Q and A up to
// the rounding of two Householder QRs (LAPACK's through numpy, Eigen's
// here). Each computed Q is exactly orthogonal and exact for a G + dG with
// ||dG||_F <= gamma ||G||_F, gamma = n^2 eps (Higham, ASNA 2nd ed.,
// Thm 19.4, the constant taken as 1) and is within sqrt(n) gamma of it; the
// Q factor of the QR with positive diagonal moves by at most
// sqrt(2) kappa_2(G) ||dG||_F / ||G||_2 (Sun, BIT 31, 341 (1991)), so two
// computations differ by at most 2 (sqrt(n) + sqrt(2) kappa_2(G) sqrt(n)) gamma
// in the Frobenius norm, which bounds every entry. A = (U Sigma) V^T with
// sigma_1 = 1 then differs by at most the two factors' bounds plus the
// products' rounding, n eps per entry.
TEST(HardCasesScript, GivesTheSameMatricesFromTheSameGaussianDraws) {
  constexpr Eigen::Index n = 8;
  Rng rng(17, 0);
  const Eigen::MatrixXd gaussian_u = rng.normal_matrix(n, n);
  const Eigen::MatrixXd gaussian_v = rng.normal_matrix(n, n);
  const Eigen::VectorXd sigma = randsvd_singular_values(n, 1e6, "geometric");
  const Eigen::MatrixXd q = haar_orthogonal(gaussian_u);
  const Eigen::MatrixXd a = randsvd(gaussian_u, gaussian_v, sigma).matrix();

  const auto dir = std::filesystem::temp_directory_path() /
                   ("slaterlab_hard_cases_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_matrix(dir / "gu.txt", gaussian_u);
  write_matrix(dir / "gv.txt", gaussian_v);
  write_matrix(dir / "sigma.txt", sigma.transpose());
  const std::string script = fmt::format(
      "import sys; sys.path.insert(0, '{0}/scripts'); import numpy as np, hard_cases as h; "
      "gu = np.loadtxt('{1}/gu.txt'); gv = np.loadtxt('{1}/gv.txt'); "
      "s = np.loadtxt('{1}/sigma.txt'); "
      "np.savetxt('{1}/q.txt', h.haar_from_gaussian(gu), fmt='%.17g'); "
      "np.savetxt('{1}/a.txt', h.randsvd_from_gaussians(gu, gv, s), fmt='%.17g')",
      SLATERLAB_SOURCE_DIR, dir.string());
  ASSERT_EQ(std::system(("/usr/bin/python3 -c \"" + script + "\"").c_str()), 0);
  const Eigen::MatrixXd q_script = read_matrix(dir / "q.txt", n, n);
  const Eigen::MatrixXd a_script = read_matrix(dir / "a.txt", n, n);
  std::filesystem::remove_all(dir);

  const double gamma = double(n * n) * kEps;
  const double root_n = std::sqrt(double(n));
  const auto q_bound = [&](const Eigen::MatrixXd& g) {
    const Eigen::VectorXd s = singular_values(g);
    return 2 * (root_n + std::sqrt(2.0) * (s(0) / s(n - 1)) * root_n) * gamma;
  };
  EXPECT_LE((q_script - q).cwiseAbs().maxCoeff(), q_bound(gaussian_u));
  EXPECT_LE((a_script - a).cwiseAbs().maxCoeff(),
            q_bound(gaussian_u) + q_bound(gaussian_v) + double(n) * kEps);
  // The bound is strict: below half double's digits (sqrt(eps)), far below
  // the entries' size (about 1 / sqrt(n)), so a wrong sign convention or
  // another algorithm would exceed it.
  EXPECT_LT(q_bound(gaussian_u), std::sqrt(kEps));
}

}  // namespace
}  // namespace slaterlab
