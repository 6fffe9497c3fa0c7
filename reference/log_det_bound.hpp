#pragma once
// Internal to the fast reference: the error bound of its log|det| at a
// factorisation. With the LuResidual r of A (lu_residual.hpp: M = L U,
// E = P A - M, F = M^{-1} E, F^ from E's high part by two triangular
// solves, R = getri's inverse with P undone), the fast reference takes
//   log det(I + F) = tr F^ - tr F^^2 / 2   (r.trace in dd, r.trace2),
// and both functions return an upper bound of the error of that, the dd
// trace's roundings included, first order in R's error (|M^{-1}| taken as
// |R|, as everywhere in the fast reference). docs/fast-reference.md and
// log_det_bound.cpp derive them.
// - a_priori_log_det_bound: the solves' error by Higham's worst case,
//   2 gamma_N tr(|R||L||U||F^|). O(N^2) given r.
// - a_posteriori_log_det_bound: the solves' error measured: H = E - M F^
//   (F - F^ = M^{-1} H) as E - P A F^ + E F^, with P A and F^ split once so
//   that the leading product is exact (three DGEMMs); the bound then reads
//   tr(|R||H|) for the measured H instead. O(N^3); empty
//   where the split cannot be exact (P A's rows and F^'s columns scaled
//   apart by about 2^1000, where an exact product's unit would underflow).
// Neither throws; an infinite bound means none holds (||F||_1 >= 1/2).

#include <Eigen/Core>

#include <array>
#include <optional>

#include "slaterlab/reference/lu_residual.hpp"

namespace slaterlab::reference::detail {

double a_priori_log_det_bound(const LuResidual& r);
std::optional<double> a_posteriori_log_det_bound(const LuResidual& r);

/// The a-posteriori bound's entrywise majorant of |H|, H = E - M F^ for the
/// exact E = P A - M: |H_ij| <= dense_ij + sum_t x[t]_i y[t]_j. Empty where
/// a_posteriori_log_det_bound is.
struct SolveResidualMajorant {
  Eigen::MatrixXd dense;
  std::array<Eigen::VectorXd, 2> x, y;
};
std::optional<SolveResidualMajorant> solve_residual_majorant(const LuResidual& r);

}  // namespace slaterlab::reference::detail
