#pragma once
// The analytic overlap matrix S_ij = <chi_i | chi_j> of a Gaussian basis
// (gaussian_basis.hpp), by the Obara-Saika recurrence (Obara and Saika,
// J. Chem. Phys. 84, 3963 (1986)), and a bound on its rounding.
//
// What: S over the basis's AOs in their order (each AO normalised, so the
// diagonal is 1 up to rounding).
// Preconditions: a constructed GaussianBasis.
// Guarantees: S is symmetric by construction (each pair of shells computed
// once); every element is a finite sum of products of primitive overlaps,
// exact up to rounding, with no quadrature; |S_ij - exact| <= eps
// rounding_ij to first order in eps, rounding from
// gaussian_overlap_rounding (the derivation is in gaussian_overlap.cpp).
// Errors: none beyond std::bad_alloc.

#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"

#include <Eigen/Core>

namespace slaterlab {

/// S_ij over the AOs of `basis`.
Eigen::MatrixXd gaussian_overlap(const GaussianBasis& basis);

/// R_ij with |S_ij - exact| <= eps R_ij (eps = 2^-52), first order in eps.
Eigen::MatrixXd gaussian_overlap_rounding(const GaussianBasis& basis);

}  // namespace slaterlab
