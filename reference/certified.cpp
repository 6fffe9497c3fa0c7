// Certified log|det| and inverse by Arb ball arithmetic.

#include "slaterlab/reference/certified.hpp"

#include "slaterlab/reference/certified_blas.hpp"
#include "slaterlab/reference/mp.hpp"

#include <arb.h>
#include <arb_mat.h>
#include <arf.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace slaterlab::reference {
namespace {

// RAII owners of Arb objects (Arb types are arrays of one struct).
class Ball {
 public:
  Ball() { arb_init(x_); }
  ~Ball() { arb_clear(x_); }
  Ball(const Ball&) = delete;
  Ball& operator=(const Ball&) = delete;
  arb_ptr get() { return x_; }
  arb_srcptr get() const { return x_; }

 private:
  arb_t x_;
};

class Float {
 public:
  Float() { arf_init(x_); }
  ~Float() { arf_clear(x_); }
  Float(const Float&) = delete;
  Float& operator=(const Float&) = delete;
  arf_ptr get() { return x_; }

 private:
  arf_t x_;
};

class BallMatrix {
 public:
  BallMatrix(slong rows, slong cols) { arb_mat_init(m_, rows, cols); }
  /// Exact copy of a double matrix.
  explicit BallMatrix(const Eigen::MatrixXd& a) : BallMatrix(a.rows(), a.cols()) {
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      for (Eigen::Index j = 0; j < a.cols(); ++j) arb_set_d(arb_mat_entry(m_, i, j), a(i, j));
    }
  }
  ~BallMatrix() { arb_mat_clear(m_); }
  BallMatrix(const BallMatrix&) = delete;
  BallMatrix& operator=(const BallMatrix&) = delete;
  arb_mat_struct* get() { return m_; }
  const arb_mat_struct* get() const { return m_; }
  arb_srcptr entry(slong i, slong j) const { return arb_mat_entry(m_, i, j); }

 private:
  arb_mat_t m_;
};

/// A ball as a double midpoint and radius that still enclose it: the ball's
/// bounds are rounded outward to doubles, and the radius is rounded up once
/// more to cover the rounding of hi - mid and mid - lo. False if a bound is
/// outside the double range.
bool to_double_ball(arb_srcptr x, double& mid, double& radius) {
  Float lo, hi;
  arb_get_lbound_arf(lo.get(), x, 64);
  arb_get_ubound_arf(hi.get(), x, 64);
  const double lo_d = arf_get_d(lo.get(), ARF_RND_FLOOR);
  const double hi_d = arf_get_d(hi.get(), ARF_RND_CEIL);
  if (!std::isfinite(lo_d) || !std::isfinite(hi_d)) return false;
  mid = lo_d / 2 + hi_d / 2;  // halves first: no overflow
  radius = std::nextafter(std::max(hi_d - mid, mid - lo_d), std::numeric_limits<double>::infinity());
  return std::isfinite(radius);
}

/// The ball's midpoint as three doubles (each the rest of the previous ones
/// rounded to nearest) and a double radius rounded up:
/// |x - sum| <= rad + |mid - sum|.
void to_fine_ball(arb_srcptr x, CertifiedLogDet& out) {
  Float rest, term, radius;
  arf_set(rest.get(), arb_midref(x));
  for (double& part : out.fine_mid) {
    part = arf_get_d(rest.get(), ARF_RND_NEAR);
    arf_set_d(term.get(), part);
    arf_sub(rest.get(), rest.get(), term.get(), ARF_PREC_EXACT, ARF_RND_NEAR);
  }
  arf_abs(rest.get(), rest.get());
  arf_set_mag(radius.get(), arb_radref(x));
  arf_add(radius.get(), radius.get(), rest.get(), 64, ARF_RND_UP);
  out.fine_radius = arf_get_d(radius.get(), ARF_RND_UP);
}

/// The enclosure of log|det| in `out` (certified, bits, the double and the
/// fine ball); false, with the reason in out.message, where it has no
/// finite double enclosure.
bool set_log_abs(arb_srcptr log_abs, CertifiedLogDet& out) {
  double mid = 0.0, radius = 0.0;
  if (!arb_is_finite(log_abs) || !to_double_ball(log_abs, mid, radius)) {
    out.message = "not certified: log|det| could not be enclosed in double";
    return false;
  }
  out.certified = true;
  out.certified_bits = arb_rel_accuracy_bits(log_abs);
  to_fine_ball(log_abs, out);
  out.log_abs_mid = mid;
  out.log_abs_radius = radius;
  return true;
}

void check_input(const Eigen::MatrixXd& a, long precision_bits) {
  if (a.rows() != a.cols() || a.rows() == 0) {
    throw std::invalid_argument("certified: expected a non-empty square matrix, got " +
                                std::to_string(a.rows()) + " x " + std::to_string(a.cols()));
  }
  if (precision_bits < 2) {
    throw std::invalid_argument("certified: precision must be at least 2 bits, got " +
                                std::to_string(precision_bits));
  }
}

std::string at_bits(long precision_bits) {
  return " at " + std::to_string(precision_bits) + "-bit precision";
}

}  // namespace

CertifiedLogDet certified_log_det(const Eigen::MatrixXd& a, long precision_bits) {
  check_input(a, precision_bits);
  CertifiedLogDet out;
  out.precision_bits = precision_bits;
  if (!a.allFinite()) {
    out.message = "not certified: the matrix has non-finite entries";
    return out;
  }
  const BallMatrix m(a);
  // Both functions return a valid enclosure of the same exact determinant,
  // so their intersection is one too, and at least as tight as either.
  Ball plain, precond, det;
  arb_mat_det(plain.get(), m.get(), precision_bits);
  arb_mat_det_precond(precond.get(), m.get(), precision_bits);
  if (!arb_intersection(det.get(), plain.get(), precond.get(), precision_bits)) {
    // Impossible for correct enclosures; refuse rather than guess.
    out.message = "not certified: the two determinant enclosures are disjoint" + at_bits(precision_bits);
    return out;
  }
  if (!arb_is_finite(det.get()) || arb_contains_zero(det.get())) {
    out.message = "not certified: the determinant ball contains zero" + at_bits(precision_bits) +
                  " (the matrix is singular, or too ill-conditioned for this precision)";
    return out;
  }
  Ball log_abs;
  arb_abs(log_abs.get(), det.get());
  arb_log(log_abs.get(), log_abs.get(), precision_bits);
  if (!set_log_abs(log_abs.get(), out)) {
    out.message += at_bits(precision_bits);
    return out;
  }
  out.sign = arb_is_positive(det.get()) ? 1 : -1;  // the ball excludes zero
  out.message = "certified" + at_bits(precision_bits);
  return out;
}

CertifiedLogDet certified_log_det_blas(const Eigen::MatrixXd& a) {
  constexpr long kBits = 128;  // the Arb sum of log|U_ii|
  check_input(a, kBits);
  CertifiedLogDet out;
  out.precision_bits = kBits;
  detail::BlasLogDetEnclosure e;
  try {
    e = detail::blas_log_det_enclosure(a);
  } catch (const SingularMatrixError& error) {
    out.message = std::string("not certified: ") + error.what();
    return out;
  }
  if (!e.failure.empty()) {
    out.message = "not certified: " + e.failure;
    return out;
  }
  Ball sum, term;
  for (Eigen::Index i = 0; i < e.pivots.size(); ++i) {
    arb_set_d(term.get(), std::abs(e.pivots(i)));
    arb_log(term.get(), term.get(), kBits);
    arb_add(sum.get(), sum.get(), term.get(), kBits);
  }
  arb_set_d(term.get(), e.correction.hi);
  arb_add(sum.get(), sum.get(), term.get(), kBits);
  arb_set_d(term.get(), e.correction.lo);
  arb_add(sum.get(), sum.get(), term.get(), kBits);
  Float radius;
  arf_set_d(radius.get(), e.radius);
  arb_add_error_arf(sum.get(), radius.get());
  if (!set_log_abs(sum.get(), out)) return out;
  out.sign = e.sign;
  out.message = "certified by a double LU with an exact residual";
  return out;
}

CertifiedInverse certified_inverse(const Eigen::MatrixXd& a, long precision_bits) {
  check_input(a, precision_bits);
  const Eigen::Index n = a.rows();
  CertifiedInverse out;
  out.precision_bits = precision_bits;
  out.mid = Eigen::MatrixXd::Constant(n, n, std::numeric_limits<double>::quiet_NaN());
  out.radius = Eigen::MatrixXd::Constant(n, n, std::numeric_limits<double>::infinity());
  if (!a.allFinite()) {
    out.message = "not certified: the matrix has non-finite entries";
    return out;
  }
  const BallMatrix m(a);
  BallMatrix inv(n, n);
  if (!arb_mat_inv(inv.get(), m.get(), precision_bits)) {
    out.message = "not certified: arb_mat_inv could not prove the matrix invertible" +
                  at_bits(precision_bits) + " (singular, or too ill-conditioned for this precision)";
    return out;
  }
  Eigen::MatrixXd mid(n, n), radius(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) {
      if (!to_double_ball(inv.entry(i, j), mid(i, j), radius(i, j))) {
        out.message = "not certified: inverse entry (" + std::to_string(i) + ", " +
                      std::to_string(j) + ") is outside the double range";
        return out;
      }
    }
  }
  out.certified = true;
  out.mid = std::move(mid);
  out.radius = std::move(radius);
  out.message = "certified" + at_bits(precision_bits);
  return out;
}

}  // namespace slaterlab::reference
