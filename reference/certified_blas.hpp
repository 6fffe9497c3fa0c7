#pragma once
// Internal to certified.cpp: the floating-point part of certified_log_det_blas.
// log|det A| = sum_i log|U'_ii| + log det(I + F), U' the double LU's upper
// factor rounded to error-free slices (sliced_lu.hpp), F = (L'U')^{-1}(P A -
// L'U'). This part returns the U'_ii, the sign of det A, a dd midpoint c of
// log det(I + F) and a radius with
//   |log det(I + F) - c| <= radius
// proven under IEEE binary64 round-to-nearest and BLAS kernels that evaluate
// each entry of a product or triangular solve as a sum of the usual terms in
// some order (with or without FMA, no Strassen-like algorithm); underflow is
// covered. Derivation: certified_blas.cpp, docs/fast-reference.md.
// `failure` is non-empty (and nothing is proven) when the double LU is too
// inaccurate for the bound or the matrix's scale is outside the slices' range.

#include <Eigen/Core>

#include <string>

#include "slaterlab/reference/dd_kernels.hpp"

namespace slaterlab::reference::detail {

struct BlasLogDetEnclosure {
  Eigen::VectorXd pivots;  ///< U'_ii
  int sign = 0;            ///< sign of det A
  dd::Dd correction;       ///< midpoint of log det(I + F)
  double radius = 0.0;
  std::string failure;
};

/// Throws SingularMatrixError for a zero pivot or non-finite entries.
BlasLogDetEnclosure blas_log_det_enclosure(const Eigen::MatrixXd& a);

}  // namespace slaterlab::reference::detail
