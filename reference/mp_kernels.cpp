// The multiprecision numerics of the mp reference. This is the only
// translation unit that instantiates Eigen on Boost.Multiprecision types
// (both digit counts, explicitly), so the heavy templates compile once.

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/eigen.hpp>

#include <Eigen/LU>

#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#include "slaterlab/reference/mp_engine.hpp"

namespace slaterlab::reference::detail {
namespace {

namespace bmp = boost::multiprecision;

// cpp_bin_float has no heap allocation and expression templates off, so
// every temporary lives on the stack.
template <int Digits>
using Real = std::conditional_t<Digits == 50, bmp::cpp_bin_float_50, bmp::cpp_bin_float_100>;
template <int Digits>
using Mat = Eigen::Matrix<Real<Digits>, Eigen::Dynamic, Eigen::Dynamic>;
template <int Digits>
using Vec = Eigen::Matrix<Real<Digits>, Eigen::Dynamic, 1>;
template <int Digits>
using RowVec = Eigen::Matrix<Real<Digits>, 1, Eigen::Dynamic>;
template <int Digits>
using Lu = Eigen::PartialPivLU<Mat<Digits>>;

template <int Digits>
double to_double(const Real<Digits>& x) {
  return x.template convert_to<double>();
}

/// Threshold on the reciprocal 1-norm condition number below which a matrix
/// counts as singular to working precision: the pivots of an exactly
/// singular matrix are rounding residue of size up to about
/// gamma_N || |L| |U| || <= N^2 eps ||A|| (growth absorbed in the 16).
template <int Digits>
Real<Digits> singular_threshold(Eigen::Index n) {
  return 16 * Real<Digits>(n) * Real<Digits>(n) * std::numeric_limits<Real<Digits>>::epsilon();
}

template <int Digits>
[[noreturn]] void throw_singular(const std::string& why) {
  throw SingularMatrixError("mp reference: matrix is singular to " + std::to_string(Digits) +
                            "-digit working precision: " + why);
}

template <int Digits>
void check_rcond(const Real<Digits>& rcond, Eigen::Index n, const char* how) {
  if (rcond > singular_threshold<Digits>(n)) return;
  std::ostringstream why;
  why << how << " reciprocal condition number " << to_double<Digits>(rcond)
      << " <= 16 N^2 eps = " << to_double<Digits>(singular_threshold<Digits>(n));
  throw_singular<Digits>(why.str());
}

/// LU with partial pivoting of the exact data; rejects a zero pivot (Eigen
/// does not stop at one, it would leave inf/NaN in any solve).
template <int Digits>
Lu<Digits> factor(const Eigen::MatrixXd& a) {
  Lu<Digits> lu(a.cast<Real<Digits>>());
  const auto& u = lu.matrixLU();
  for (Eigen::Index j = 0; j < u.rows(); ++j) {
    if (u(j, j) == 0) throw_singular<Digits>("zero pivot in column " + std::to_string(j));
  }
  return lu;
}

template <int Digits>
Real<Digits> norm_1(const Mat<Digits>& m) {
  return m.cwiseAbs().colwise().sum().maxCoeff();
}

/// LU plus the cheap O(N^2) condition estimate (Hager/Higham, as LAPACK's
/// gecon), for users that solve. Eigen's PartialPivLU::rcond() cannot be
/// used: it needs NumTraits::infinity(), which Boost's Eigen traits lack;
/// the estimator it wraps works.
template <int Digits>
Lu<Digits> factor_checked(const Eigen::MatrixXd& a) {
  Lu<Digits> lu = factor<Digits>(a);
  const Real<Digits> a_norm = a.cwiseAbs().colwise().sum().maxCoeff();
  const Real<Digits> inv_norm = Eigen::internal::rcond_invmatrix_L1_norm_estimate(lu);
  check_rcond<Digits>(1 / (a_norm * inv_norm), a.rows(), "estimated");
  return lu;
}

/// Inverse from an LU, checked with the exact 1-norm condition number
/// (the estimate can underrate ||A^{-1}||, the inverse is at hand anyway).
template <int Digits>
Mat<Digits> checked_inverse(const Lu<Digits>& lu, const Eigen::MatrixXd& a) {
  Mat<Digits> inv = lu.inverse();
  // ||A||_1 in double: a threshold test needs no more than a few digits.
  const Real<Digits> a_norm = a.cwiseAbs().colwise().sum().maxCoeff();
  check_rcond<Digits>(1 / (a_norm * norm_1<Digits>(inv)), a.rows(), "1-norm");
  return inv;
}

template <int Digits>
MpLogDet log_det_of(const Real<Digits>& det) {
  // The exponent range of cpp_bin_float (about 2^(+-2^31)) holds any
  // determinant of double data, so one log of the product suffices.
  return {bmp::log(bmp::abs(det)).template convert_to<long double>(), det < 0 ? -1 : 1};
}

template <int Digits>
class Engine final : public MpEngine {
 public:
  void factorize(const Eigen::MatrixXd& a) override {
    const Lu<Digits> lu = factor<Digits>(a);
    Mat<Digits> inv = checked_inverse<Digits>(lu, a);
    // Commit only after every check passed: a failure leaves the state as it was.
    const Real<Digits> det = lu.determinant();
    ainv_ = std::move(inv);
    log_abs_ = bmp::log(bmp::abs(det));
    sign_ = det < 0 ? -1 : 1;
    const Eigen::Index n = a.rows();
    x_.resize(n);
    column_.resize(n);
    row_.resize(n);
  }

  RatioInfo propose(Eigen::Index k, const Eigen::VectorXd& column, double a_frobenius) override {
    column_ = column.cast<Real<Digits>>();
    x_.noalias() = ainv_ * column_;  // GEMV, kept for commit()
    const Real<Digits>& rho = x_(k);
    const RatioInfo singular{0.0, std::numeric_limits<double>::infinity()};
    if (rho == 0) return singular;
    const Real<Digits> kappa =
        Real<Digits>(a_frobenius) * ainv_.row(k).norm() * x_.norm() / bmp::abs(rho);
    // |d rho| <= c N eps kappa_rho |rho|: with kappa_rho beyond the singular
    // LU's threshold 1 / (16 N^2 eps), rho is rounding residue and A' is
    // singular to working precision, as factorize() would find it.
    if (kappa * singular_threshold<Digits>(ainv_.rows()) >= 1) return singular;
    return {to_double<Digits>(rho), to_double<Digits>(kappa)};
  }

  double block_ratio(const std::vector<Eigen::Index>& k,
                     const Eigen::MatrixXd& columns) const override {
    const Eigen::Index m = Eigen::Index(k.size());
    Mat<Digits> block(m, m);
    for (Eigen::Index j = 0; j < m; ++j) {
      const Vec<Digits> c = columns.col(j).cast<Real<Digits>>();
      for (Eigen::Index i = 0; i < m; ++i) block(i, j) = ainv_.row(k[std::size_t(i)]).dot(c);
    }
    return to_double<Digits>(Lu<Digits>(block).determinant());
  }

  void commit(Eigen::Index k) override {
    const Real<Digits> rho = x_(k);
    if (rho == 0) throw_singular<Digits>("the accepted ratio is exactly zero");
    // Ainv' = Ainv - (x - e_k)(e_k^T Ainv) / x_k, as one GER without temporaries.
    row_.noalias() = ainv_.row(k) / rho;
    x_(k) -= 1;
    ainv_.noalias() -= x_ * row_;
    log_abs_ += bmp::log(bmp::abs(rho));
    if (rho < 0) sign_ = -sign_;
  }

  MpLogDet log_det() const override {
    return {log_abs_.template convert_to<long double>(), sign_};
  }

  Eigen::MatrixXd inverse() const override {
    return ainv_.unaryExpr([](const Real<Digits>& v) { return to_double<Digits>(v); });
  }

  double inverse_norm_1() const override { return to_double<Digits>(norm_1<Digits>(ainv_)); }

 private:
  Mat<Digits> ainv_;
  Vec<Digits> x_;       // A^{-1} a' of the pending proposal
  Vec<Digits> column_;  // a' in mp
  RowVec<Digits> row_;  // e_k^T Ainv / x_k
  Real<Digits> log_abs_ = 0;
  int sign_ = 1;
};

}  // namespace

template <int Digits>
double MpKernels<Digits>::epsilon() {
  return to_double<Digits>(std::numeric_limits<Real<Digits>>::epsilon());
}

template <int Digits>
MpLogDet MpKernels<Digits>::log_det(const Eigen::MatrixXd& a) {
  return log_det_of<Digits>(factor_checked<Digits>(a).determinant());
}

template <int Digits>
Eigen::MatrixXd MpKernels<Digits>::inverse(const Eigen::MatrixXd& a) {
  const Mat<Digits> inv = checked_inverse<Digits>(factor<Digits>(a), a);
  return inv.unaryExpr([](const Real<Digits>& v) { return to_double<Digits>(v); });
}

template <int Digits>
Eigen::VectorXd MpKernels<Digits>::solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const Vec<Digits> x = factor_checked<Digits>(a).solve(b.cast<Real<Digits>>());
  return x.unaryExpr([](const Real<Digits>& v) { return to_double<Digits>(v); });
}

template <int Digits>
double MpKernels<Digits>::ratio(const Eigen::MatrixXd& a, Eigen::Index k,
                                const Eigen::VectorXd& column) {
  const Vec<Digits> x = factor_checked<Digits>(a).solve(column.cast<Real<Digits>>());
  return to_double<Digits>(x(k));
}

template <int Digits>
std::unique_ptr<MpEngine> MpKernels<Digits>::make_engine() {
  return std::make_unique<Engine<Digits>>();
}

template struct MpKernels<50>;
template struct MpKernels<100>;

}  // namespace slaterlab::reference::detail
