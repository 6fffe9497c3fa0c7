#pragma once
// Certified references by FLINT/Arb ball arithmetic: every number comes with
// a radius such that the exact value of the input matrix's log|det| (or
// inverse entry) provably lies in [mid - radius, mid + radius] (real
// arithmetic; the rounding of the midpoint to double is already included in
// the radius).
//
// Contract:
// - Input entries are converted to balls exactly (a double is exact in Arb).
// - certified == false whenever Arb cannot prove the result at the requested
//   precision (singular, or too ill-conditioned for that precision, or a
//   non-finite entry); `message` then says why and at which precision, and
//   the numbers are NaN (mid) and +inf (radius), never an unproven value.
// - A non-square or empty matrix, or precision_bits < 2, is
//   std::invalid_argument.

#include <Eigen/Core>

#include <array>
#include <limits>
#include <string>

namespace slaterlab::reference {

inline constexpr long kDefaultPrecisionBits = 128;

/// An enclosure of log|det A| and, when certified, the proven sign of det A.
struct CertifiedLogDet {
  bool certified = false;
  double log_abs_mid = std::numeric_limits<double>::quiet_NaN();
  double log_abs_radius = std::numeric_limits<double>::infinity();
  int sign = 0;  ///< +1 or -1 when certified, 0 otherwise
  long precision_bits = 0;
  /// Relative accuracy of the Arb ball of log|det| before its rounding to
  /// double (arb_rel_accuracy_bits): how many leading bits are proven. The
  /// double midpoint itself carries at most 53.
  long certified_bits = 0;
  /// The same enclosure before its rounding to double, for comparisons beyond
  /// double precision: log|det A| lies within fine_radius of the exact sum of
  /// fine_mid (the midpoint rounded to double, then its rests; the third's
  /// rounding, about 2^-159 |log|det||, is in fine_radius).
  std::array<double, 3> fine_mid{std::numeric_limits<double>::quiet_NaN(), 0.0, 0.0};
  double fine_radius = std::numeric_limits<double>::infinity();
  std::string message;
};

/// An entrywise enclosure of A^{-1}: |A^{-1}(i, j) - mid(i, j)| <= radius(i, j).
struct CertifiedInverse {
  bool certified = false;
  Eigen::MatrixXd mid;
  Eigen::MatrixXd radius;
  long precision_bits = 0;
  std::string message;
};

/// log|det A| via arb_mat_det and arb_mat_det_precond (balls intersected).
CertifiedLogDet certified_log_det(const Eigen::MatrixXd& a,
                                  long precision_bits = kDefaultPrecisionBits);

/// log|det A| at BLAS speed: a double LU with its factors rounded so that the
/// residual P A - L U is exact, one refinement step in double-double and
/// rigorous bounds of the rest (certified_blas.hpp, docs/fast-reference.md);
/// Arb only sums the log|U_ii| (precision_bits = 128). certified_bits says
/// how many bits the enclosure proves (over 100 for well-conditioned N <= 1024
/// with |log|det|| above N); it is not certified where the double LU is too
/// inaccurate for the bound (about kappa N u > 1e-2) or a column of U lies
/// outside [2^-945, 2^960].
CertifiedLogDet certified_log_det_blas(const Eigen::MatrixXd& a);

/// A^{-1} via arb_mat_inv.
CertifiedInverse certified_inverse(const Eigen::MatrixXd& a,
                                   long precision_bits = kDefaultPrecisionBits);

}  // namespace slaterlab::reference
