// QR-specific checks of qr-givens (delete-append) and qr-rank1 (Golub-Van
// Loan), beyond the generic strategy properties: the two log-determinants the
// strategy keeps agree, the column permutation is tracked, the determinant's
// sign follows det Q, the rotations and the permutation, and Q stays
// orthogonal over long sequences.
//
// The reference is long double (eps_ld = 2^-63, 2048x below double's epsilon).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/qr_givens.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "tests/determinant/update_test_support.hpp"
#include "verify/inputs/random_matrices.hpp"

namespace slaterlab {
namespace {

using LongDouble = long double;
using MatrixLongDouble = Eigen::Matrix<LongDouble, Eigen::Dynamic, Eigen::Dynamic>;

constexpr double kC = 10.0;  // backward-error constant (docs/properties.md)

struct Variant {
  std::string name;
  Precision precision;
};

std::vector<Variant> variants() {
  return {{"qr-givens", Precision::double_},
          {"qr-givens", Precision::single},
          {"qr-rank1", Precision::double_},
          {"qr-rank1", Precision::single}};
}

std::unique_ptr<DeterminantUpdater> make(const Variant& v, int recompute_every = 0) {
  UpdaterOptions o;
  o.precision = v.precision;
  o.recompute_every = recompute_every;
  return make_updater(v.name, o);
}

/// The QR-specific interface (ratio_log_det) behind a factory-built strategy.
LogDet ratio_log_det(const DeterminantUpdater& up) {
  if (const auto* d = dynamic_cast<const QrUpdater<double>*>(&up)) return d->ratio_log_det();
  if (const auto* f = dynamic_cast<const QrUpdater<float>*>(&up)) return f->ratio_log_det();
  throw std::logic_error("not a QR strategy");
}

/// Well-conditioned workload: A = U diag(sigma) V^T, sigma in [1/kappa, 1];
/// new columns U diag(sigma) q with q a random unit vector (distributed like
/// A's columns, so the conditioning stays put along the sequence).
class Workload {
 public:
  Workload(Eigen::Index n, double kappa, std::uint64_t seed) : rng_(seed) {
    const Eigen::MatrixXd gaussian_u = testing::gaussian(n, n, rng_);
    const Eigen::MatrixXd gaussian_v = testing::gaussian(n, n, rng_);
    std::uniform_real_distribution<double> uniform(0, 1);
    Eigen::VectorXd sigma(n);
    for (Eigen::Index i = 0; i < n; ++i)
      sigma(i) = std::pow(kappa, -(i == 0 ? 0.0 : i == n - 1 ? 1.0 : uniform(rng_)));
    const RandsvdFactors factors = randsvd(gaussian_u, gaussian_v, sigma);
    us_ = factors.u_sigma;
    a_ = factors.matrix();
  }
  const Eigen::MatrixXd& matrix() const { return a_; }
  Eigen::Index electron() {
    return std::uniform_int_distribution<Eigen::Index>(0, a_.cols() - 1)(rng_);
  }
  Eigen::VectorXd column() {
    std::normal_distribution<double> normal;
    Eigen::VectorXd q(a_.cols());
    for (Eigen::Index i = 0; i < q.size(); ++i) q(i) = normal(rng_);
    return us_ * q.normalized();
  }
  void replace(Eigen::Index k, const Eigen::VectorXd& column) { a_.col(k) = column; }

 private:
  std::mt19937_64 rng_;
  Eigen::MatrixXd us_;
  Eigen::MatrixXd a_;
};

struct Conditioning {
  double kappa_rho = 0;  // ||A||_F ||e_k^T A^{-1}|| ||A^{-1} a'|| / |rho|
  double kappa_f = 0;    // ||A||_F ||A^{-1}||_F of the current matrix
  LongDouble log_abs_det = 0;
};

/// Long-double conditioning of the proposal (k, a') against A.
Conditioning condition(const Eigen::MatrixXd& a, Eigen::Index k, const Eigen::VectorXd& col) {
  const MatrixLongDouble al = a.cast<LongDouble>();
  Eigen::PartialPivLU<MatrixLongDouble> lu(al);
  const MatrixLongDouble inv = lu.inverse();
  const Eigen::Matrix<LongDouble, Eigen::Dynamic, 1> y = inv * col.cast<LongDouble>();
  Conditioning c;
  c.kappa_rho = double(al.norm() * inv.row(k).norm() * y.norm() / std::abs(y(k)));
  c.kappa_f = double(al.norm() * inv.norm());
  for (Eigen::Index i = 0; i < a.rows(); ++i) c.log_abs_det += std::log(std::abs(lu.matrixLU()(i, i)));
  return c;
}

// The ratio-accumulated log-det and sum log|R_ii| (with sign) agree after a
// long sequence. Both come from the same current factors at every step, so
// their difference per step is only that step's local rounding, not the
// backward error accumulated since the factorisation:
//  - rho from w = Q^T a' (inner products) and the triangular solve with R
//    (backward stable, |dR| <= N u |R|): |d rho| / |rho| <= c N eps kappa_rho;
//  - the rotation sweeps perturb R by a few u ||R||_F, moving sum log|R_ii|
//    by at most c N eps kappa_F (d log|det| = tr(R^{-1} dR) <=
//    ||R^{-1}||_F ||dR||_F; R and A share kappa_F) for the matrices before
//    and after the step,
// so the bound is sum_j c N eps (kappa_rho,j + kappa_F,j + kappa_F,j+1), plus
// the double summation of the m + N logs: linear in m, not quadratic.
// Against the long-double log-det the strategy also carries its accumulated
// backward error, c (1 + j) N eps per step (the generic suite's model).
TEST(QrGivens, RatioLogDetMatchesSumLogRii) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.name + " " + std::string(to_string(v.precision)));
    const Eigen::Index n = 16;
    const int moves = 1000;
    const double eps = storage_epsilon(v.precision);
    const double ne = kC * double(n) * eps;
    Workload w(n, 10.0, 20240601);
    auto up = make(v);
    up->reset(w.matrix());
    Conditioning now = condition(w.matrix(), 0, w.matrix().col(0));
    double local = ne * now.kappa_f;         // consistency bound
    double accumulated = ne * now.kappa_f;   // bound against the oracle
    double sum_abs_logs = std::abs(double(now.log_abs_det));
    for (int m = 0; m < moves;) {
      const Eigen::Index k = w.electron();
      const Eigen::VectorXd col = w.column();
      const Ratio r = up->ratio(k, col);
      ASSERT_FALSE(r.breakdown);
      // Metropolis-like: keep |rho| in [1/3, 3], as a walk that avoids nodal
      // crossings does, so the conditioning stays near its start.
      if (std::abs(r.value) < 1.0 / 3 || std::abs(r.value) > 3) {
        up->reject();
        continue;
      }
      const Conditioning before = condition(w.matrix(), k, col);
      up->accept();
      w.replace(k, col);
      now = condition(w.matrix(), 0, w.matrix().col(0));
      const double kappa = before.kappa_rho + before.kappa_f + now.kappa_f;
      local += ne * kappa;
      accumulated += (1.0 + m) * ne * kappa;
      sum_abs_logs += std::abs(std::log(std::abs(r.value)));
      ++m;
    }
    // Recursive summation in double: (terms) * eps * sum |terms|, with the
    // N log|R_ii| bounded via |log|det|| plus N * ln(kappa_F) for the spread.
    const double summation = double(moves + n) * std::numeric_limits<double>::epsilon() *
                             (sum_abs_logs + double(n) * std::log(now.kappa_f));
    const LogDet from_r = up->log_det();
    const LogDet from_ratios = ratio_log_det(*up);
    const double diff = std::abs(from_r.log_abs - from_ratios.log_abs);
    EXPECT_EQ(from_r.sign, from_ratios.sign);
    EXPECT_LE(diff, local + summation);
    EXPECT_LE(std::abs(from_r.log_abs - double(now.log_abs_det)), accumulated + summation);
    std::cout << v.name << "-" << to_string(v.precision) << ": |sum log|R_ii| - ratio log-det| = "
              << diff << " (bound " << local + summation << "), vs oracle "
              << std::abs(from_r.log_abs - double(now.log_abs_det)) << "\n";
  }
}

/// ||A(:, column_of) - Q R||_F / ||A||_F and ||Q^T Q - I||_F in long double.
struct Residuals {
  double factorisation = 0;
  double orthogonality = 0;
};

Residuals residuals(const QrFactors& f, const Eigen::MatrixXd& a) {
  const Eigen::Index n = a.rows();
  MatrixLongDouble ap(n, n);
  for (Eigen::Index j = 0; j < n; ++j)
    ap.col(j) = a.col(f.column_of[std::size_t(j)]).cast<LongDouble>();
  const MatrixLongDouble q = f.q.cast<LongDouble>();
  return {double((q * f.r.cast<LongDouble>() - ap).norm() / ap.norm()),
          double((q.transpose() * q - MatrixLongDouble::Identity(n, n)).norm())};
}

// Permutation tracking: delete-append moves the replaced logical column to
// the last physical position, rank1 never permutes, and A(:, column_of) = Q R
// holds within the backward-error bound c (1 + m) N eps at every step.
TEST(QrGivens, PermutationIsTracked) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.name + " " + std::string(to_string(v.precision)));
    const Eigen::Index n = 9;
    const double eps = storage_epsilon(v.precision);
    Workload w(n, 100.0, 77);
    auto up = make(v);
    up->reset(w.matrix());
    for (int m = 0; m < 60; ++m) {
      const Eigen::Index k = w.electron();
      const Eigen::VectorXd col = w.column();
      up->ratio(k, col);
      up->accept();
      w.replace(k, col);
      const QrFactors f = *up->maintained().qr;
      if (v.name == "qr-givens") {
        EXPECT_EQ(f.column_of.back(), k);
      } else {
        for (Eigen::Index j = 0; j < n; ++j) EXPECT_EQ(f.column_of[std::size_t(j)], j);
      }
      const Residuals res = residuals(f, w.matrix());
      EXPECT_LE(res.factorisation, kC * (2.0 + m) * double(n) * eps);
    }
  }
}

// The sign of det A follows det Q, the rotations (det +1) and the
// permutation: on a matrix whose determinant is known exactly.
TEST(QrGivens, SignFollowsPermutationAndQ) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.name + " " + std::string(to_string(v.precision)));
    const Eigen::Index n = 4;
    // Rotations of small integers: O(N eps) per factorisation (kC, the
    // backward-error constant), and one more O(N eps) per accepted update.
    const double eps = storage_epsilon(v.precision);
    const double tolerance = kC * double(n) * eps;
    auto up = make(v);
    up->reset(Eigen::MatrixXd::Identity(n, n));
    EXPECT_EQ(up->log_det().sign, 1);
    EXPECT_NEAR(up->log_det().log_abs, 0.0, tolerance);
    // det = 2: column 0 moves to the end (a 4-cycle, odd) under delete-append.
    Eigen::VectorXd col = Eigen::VectorXd::Zero(n);
    col(0) = 2;
    EXPECT_NEAR(up->ratio(0, col).value, 2.0, tolerance);
    up->accept();
    EXPECT_EQ(up->log_det().sign, 1);
    EXPECT_NEAR(up->log_det().log_abs, std::log(2.0), tolerance);
    // det = -2.
    col.setZero();
    col(1) = -1;
    EXPECT_NEAR(up->ratio(1, col).value, -1.0, tolerance);
    up->accept();
    EXPECT_EQ(up->log_det().sign, -1);
    EXPECT_EQ(ratio_log_det(*up).sign, -1);
    // det = -2 * 3 (a column in the middle: a 2-cycle, odd).
    col.setZero();
    col(2) = 3;
    up->ratio(2, col);
    up->accept();
    EXPECT_EQ(up->log_det().sign, -1);
    EXPECT_NEAR(up->log_det().log_abs, std::log(6.0), tolerance);
    // A swap of two columns by two replacements: det changes sign.
    const Eigen::VectorXd c0 = 2 * Eigen::VectorXd::Unit(n, 0);
    const Eigen::VectorXd c3 = Eigen::VectorXd::Unit(n, 3);
    up->ratio(0, c3 + c0);  // columns 0 = e0*2+e3, 3 = e3
    up->accept();
    up->ratio(3, c0);  // column 3 = 2 e0; the exact determinant is taken below
    up->accept();
    Eigen::MatrixXd a(n, n);
    a << 2, 0, 0, 2,  //
        0, -1, 0, 0,  //
        0, 0, 3, 0,   //
        1, 0, 0, 0;
    const double det = a.determinant();
    EXPECT_EQ(up->log_det().sign, det > 0 ? 1 : -1);
    EXPECT_NEAR(up->log_det().log_abs, std::log(std::abs(det)), 5 * tolerance);  // 5 updates
    EXPECT_EQ(ratio_log_det(*up).sign, det > 0 ? 1 : -1);
  }
}

// Orthogonality of Q degrades slowly under long sequences without
// refactorisation. Per accepted move every column of Q is rotated at most
// R_c times (2 for delete-append: rotations (c-1, c) and (c, c+1); 4 for
// rank1: two sweeps). A computed rotation of a column pair equals an exact
// rotation plus an error of at most 6 u per column (c and s carry ~3 u from
// hypot and the division, c x + s y adds 2 u, and a rounding of the result),
// so ||Q^T Q - I||_F grows by at most 2 * R_c * 6 u * sqrt(N) =
// 6 R_c eps sqrt(N) per move: loss_m <= loss_0 + 6 R_c m eps sqrt(N).
// (Rounding errors of independent rotations add like a random walk, so the
// observed loss is far below this linear worst case; it is printed.)
TEST(QrGivens, OrthogonalityLossGrowsSlowly) {
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.name + " " + std::string(to_string(v.precision)));
    const Eigen::Index n = 16;
    const double eps = storage_epsilon(v.precision);
    const double rotations_per_column = v.name == "qr-givens" ? 2 : 4;
    Workload w(n, 10.0, 4242);
    auto up = make(v);
    up->reset(w.matrix());
    const double loss0 = residuals(*up->maintained().qr, w.matrix()).orthogonality;
    EXPECT_LE(loss0, kC * double(n) * eps);  // Householder: O(N eps)
    std::cout << v.name << "-" << to_string(v.precision) << ": ||Q^TQ - I||_F / eps at m = 0: "
              << loss0 / eps;
    for (int m = 1; m <= 2000; ++m) {
      const Eigen::Index k = w.electron();
      const Eigen::VectorXd col = w.column();
      up->ratio(k, col);
      up->accept();
      w.replace(k, col);
      if (m % 500 == 0) {
        const double loss = residuals(*up->maintained().qr, w.matrix()).orthogonality;
        EXPECT_LE(loss, loss0 + 6 * rotations_per_column * m * eps * std::sqrt(double(n)));
        std::cout << ", " << m << ": " << loss / eps;
      }
    }
    std::cout << "\n";
  }
}

// Options: variants and precisions the QR strategies accept and refuse.
TEST(QrGivens, OptionsAndLabels) {
  UpdaterOptions o;
  EXPECT_EQ(make_updater("qr-givens", o)->label(), "qr-givens-double");
  o.precision = Precision::single;
  EXPECT_EQ(make_updater("qr-rank1", o)->label(), "qr-rank1-float");
  o.variant = "rank1";
  EXPECT_EQ(make_updater("qr-givens", o)->label(), "qr-rank1-float");
  o.variant = "delete-append";
  EXPECT_EQ(make_updater("qr-givens", o)->label(), "qr-givens-float");
  EXPECT_THROW(make_updater("qr-rank1", o), std::invalid_argument);
  o.variant = "bogus";
  EXPECT_THROW(make_updater("qr-givens", o), std::invalid_argument);
  o.variant.clear();
  o.precision = Precision::mixed;
  EXPECT_THROW(make_updater("qr-givens", o), std::invalid_argument);
  EXPECT_THROW(QrGivens<float>{o}, std::invalid_argument);
}

// Protocol and breakdown handling specific to QR: the periodic recompute
// resets the permutation; an accepted breakdown refactorises.
TEST(QrGivens, RecomputeResetsPermutation) {
  UpdaterOptions o;
  o.recompute_every = 3;
  auto up = make_updater("qr-givens", o);
  Workload w(6, 10.0, 5);
  up->reset(w.matrix());
  for (int m = 1; m <= 3; ++m) {
    const Eigen::Index k = 0;
    const Eigen::VectorXd col = w.column();
    up->ratio(k, col);
    up->accept();
    w.replace(k, col);
  }
  EXPECT_EQ(up->counters().recomputes, 1);
  const QrFactors f = *up->maintained().qr;
  for (Eigen::Index j = 0; j < 6; ++j) EXPECT_EQ(f.column_of[std::size_t(j)], j);
  const LogDet a = up->log_det();
  const LogDet b = ratio_log_det(*up);
  EXPECT_EQ(a.log_abs, b.log_abs);  // refactorisation restarts the accumulation
  EXPECT_EQ(a.sign, b.sign);

  // Breakdown: column 1 replaced by a copy of column 2 plus a tiny multiple of
  // itself; accepting refactorises.
  const Eigen::VectorXd near = w.matrix().col(2) + 1e-14 * w.matrix().col(1);
  const Ratio r = up->ratio(1, near);
  EXPECT_TRUE(r.breakdown);
  EXPECT_TRUE(std::isfinite(r.value));
  up->accept();
  EXPECT_EQ(up->counters().recomputes, 2);
}

}  // namespace
}  // namespace slaterlab
