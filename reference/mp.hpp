#pragma once
// High-precision references by LU with partial pivoting in
// Boost.Multiprecision (cpp_bin_float_50 or cpp_bin_float_100, chosen at run
// time by `digits`), through Eigen.
//
// Contract:
// - Inputs are double matrices and vectors: the exact data. They are
//   converted exactly to the multiprecision type; only results are rounded.
// - Convention: A(i, j) = phi_i(r_j); electron k owns column k;
//   the ratio of replacing column k by a' is rho = e_k^T A^{-1} a'.
// - A determinant is returned as (log|det|, sign) with log|det| in long
//   double, so that comparing it with a double strategy's log|det| is not
//   limited by the rounding of the reference (log|det| ~ 600 at N = 256).
// - `digits` must be 50 or 100 (std::invalid_argument otherwise).
// - A matrix that is not square or empty is std::invalid_argument; one with
//   non-finite entries, or singular to the working precision (a zero pivot,
//   or reciprocal 1-norm condition number at most 16 N^2 eps, the size a
//   pivot of an exactly singular matrix can reach through rounding), is
//   SingularMatrixError.

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

namespace slaterlab::reference {

inline constexpr int kDefaultDigits = 50;

/// A matrix singular to the multiprecision working precision, or with
/// non-finite entries. what() says which, and the precision.
class SingularMatrixError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// log|det A| and the sign (+1 or -1) of det A; for a matrix singular to
/// working precision (MpReference::singular()) log_abs = -inf and sign = 0.
struct MpLogDet {
  long double log_abs = 0.0L;
  int sign = 1;
};

/// A reference ratio. `value` is rho rounded to double. `conditioning` is
/// kappa_rho = ||A||_F ||e_k^T A^{-1}||_2 ||A^{-1} a'||_2 / |rho| (>= 1; +inf
/// if rho == 0): a backward-stable solve with ||E|| <= c N eps ||A|| gives
/// |d rho| / |rho| <= c N eps kappa_rho.
///
/// A move to a matrix singular to working precision (kappa_rho at least
/// 1 / (16 N^2 eps), the threshold of a singular LU: rho is then below its
/// own rounding error) has value = 0 exactly and conditioning = +inf. A move
/// from a singular matrix has no ratio: defined = false, value and
/// conditioning NaN.
struct RatioInfo {
  double value = 0.0;
  double conditioning = 0.0;
  bool defined = true;
};

/// A cycle's ratio det(A_after) / det(A_before) (undefined when A_before is
/// singular; 0 when A_after is) and each update's ratio against the matrix
/// just before it.
struct CycleInfo {
  RatioInfo ratio;
  std::vector<RatioInfo> per_update;
};

/// Throws std::invalid_argument naming `digits` unless it is 50 or 100.
void validate_digits(int digits);

/// Machine epsilon of the multiprecision type (2^(1-p), p its binary digits):
/// 5.3e-51 for 50 digits, 1.9e-100 for 100.
double mp_epsilon(int digits);

/// log|det A| and its sign.
MpLogDet mp_log_det(const Eigen::MatrixXd& a, int digits = kDefaultDigits);

/// A^{-1}, each entry rounded to double.
Eigen::MatrixXd mp_inverse(const Eigen::MatrixXd& a, int digits = kDefaultDigits);

/// A^{-1} b, rounded to double.
Eigen::VectorXd mp_solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                         int digits = kDefaultDigits);

/// det(A with column k replaced by new_column) / det(A) = e_k^T A^{-1} a',
/// rounded to double.
double mp_ratio(const Eigen::MatrixXd& a, Eigen::Index k, const Eigen::VectorXd& new_column,
                int digits = kDefaultDigits);

namespace detail {
class MpEngine;
}

/// The lockstep reference: follows the same protocol as the strategies,
///   reset(A) { ratio(k, a') (accept() | reject()) }*
/// keeping an mp inverse updated by mp Sherman-Morrison, log|det| accumulated
/// in mp, and the exact (double) current matrix.
///
/// - ratio() computes x = A^{-1} a' in mp once (one GEMV) and keeps it for
///   accept() (one GER).
/// - A fresh mp LU replaces the updated inverse and log|det| every
///   `recompute_every` accepted moves (0 = never), on recompute(), and after
///   accepting a ratio with conditioning above 1/sqrt(eps): such an update
///   may have lost half the mp digits, and a reference must stay one.
/// - Protocol errors (no reset, accept()/reject() without a pending ratio,
///   ratio() while one is pending, k out of range, wrong column length or a
///   non-finite column) throw std::logic_error.
/// - reset() throws SingularMatrixError for a matrix singular to working
///   precision (see above): an initial matrix must be regular.
/// - A move (or cycle) that makes the matrix singular to working precision
///   puts the reference in its singular state instead: singular() is true,
///   log_det() is (-inf, 0), condition_1() is +inf, inverse() throws
///   std::logic_error. Ratios from there are undefined (RatioInfo::defined);
///   every accepted move refactorises the exact matrix, and the first regular
///   one leaves the singular state. assign() starts from any matrix that way.
class MpReference {
 public:
  explicit MpReference(int digits = kDefaultDigits, int recompute_every = 0);
  ~MpReference();
  MpReference(MpReference&&) noexcept;
  MpReference& operator=(MpReference&&) noexcept;
  MpReference(const MpReference&) = delete;
  MpReference& operator=(const MpReference&) = delete;

  /// Starts from A (mp LU and mp inverse); drops any pending proposal.
  void reset(const Eigen::MatrixXd& a);
  /// As reset(), but a matrix singular to working precision gives the
  /// singular state instead of an error.
  void assign(const Eigen::MatrixXd& a);
  /// Replaces columns k[i] by columns.col(i), in order, as one unit (no
  /// proposal may be pending). Per-update ratios follow ratio()'s rules; the
  /// cycle's ratio is det(P^T A^{-1} C) over the distinct columns replaced
  /// (the last write to a column wins), formed in mp from A_before's inverse,
  /// so an exactly singular intermediate matrix does not touch it.
  CycleInfo apply_cycle(const std::vector<Eigen::Index>& k, const Eigen::MatrixXd& columns);
  /// Ratio for replacing column k by new_column; becomes the pending proposal.
  RatioInfo ratio(Eigen::Index k, const Eigen::VectorXd& new_column);
  /// Applies the pending proposal (mp Sherman-Morrison update).
  void accept();
  /// Drops the pending proposal; the state is left bit-for-bit unchanged.
  void reject();
  /// Fresh mp LU of the current matrix, now.
  void recompute();

  MpLogDet log_det() const;
  /// The mp inverse, each entry rounded to double.
  Eigen::MatrixXd inverse() const;
  /// The exact current matrix (accepted columns applied).
  const Eigen::MatrixXd& matrix() const;
  /// ||A||_1 ||A^{-1}||_1 with A^{-1} the mp inverse.
  double condition_1() const;

  Eigen::Index size() const { return a_.rows(); }
  int digits() const { return digits_; }
  int recompute_every() const { return recompute_every_; }
  /// Fresh factorisations since reset() (periodic, on demand, safeguard).
  std::int64_t recomputes() const { return recomputes_; }
  bool has_pending() const { return pending_; }
  /// The current matrix is singular to working precision (see above).
  bool singular() const { return singular_; }

 private:
  void require_ready(const char* what) const;
  void refactor();
  /// Refactorises; a singular matrix gives the singular state.
  void refactor_or_singular();

  int digits_;
  int recompute_every_;
  double safeguard_conditioning_;  // 1 / sqrt(eps) of the mp type
  std::unique_ptr<detail::MpEngine> engine_;
  Eigen::MatrixXd a_;
  double a_frobenius_ = 0.0;
  bool ready_ = false;
  bool pending_ = false;
  bool singular_ = false;
  bool pending_singular_ = false;  // the pending move leads to a singular matrix
  Eigen::Index pending_k_ = 0;
  Eigen::VectorXd pending_column_;
  double pending_conditioning_ = 0.0;
  int accepted_since_recompute_ = 0;
  std::int64_t recomputes_ = 0;
};

}  // namespace slaterlab::reference
