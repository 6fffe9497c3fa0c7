#pragma once
// Error-free slicing of doubles (Ozaki, Ogita, Oishi, Rump, Numer. Algorithms
// 59, 2012), the one implementation behind the fast reference's residual,
// the BLAS-certified log|det| (sliced_lu) and the checkpoint metrics' split.
//
// A number x with |x| <= 2^e is rounded to the grid 2^(e - b) by adding and
// subtracting s = 1.5 * 2^(52 + e - b) (round to nearest even; x + s stays in
// s's binade, where the spacing of doubles is 2^(e - b), and the subtraction
// is exact), and x minus its rounding is exact. Products of slices whose bits
// add up to at most 53 - ceil(log2 N) are then exact under any BLAS order
// (the callers' derivations). Precondition: every shift s finite and
// normal (the callers check their exponent ranges). The translation unit is
// compiled without FMA contraction.

#include <Eigen/Core>

#include <cstddef>
#include <vector>

namespace slaterlab::reference::slices {

/// ceil(log2 n) for n >= 1.
int ceil_log2(Eigen::Index n);
/// The smallest e with m <= 2^e, for m > 0.
int exponent_above(double m);
/// frexp's exponent: 2^(e - 1) <= m < 2^e for m > 0 (0 for m = 0).
int exponent_of(double m);
/// exponent_of the largest magnitude of each row (by_rows) or column.
Eigen::VectorXi magnitude_exponents(const Eigen::MatrixXd& m, bool by_rows);
/// 1.5 * 2^(52 + e - bits): adding and subtracting it rounds a number of
/// magnitude at most 2^e to the grid 2^(e - bits) (round to nearest, exact).
double rounding_shift(int e, int bits);

/// Splits x[0..m) into `count` slices, entry i on the grids 2^(e_i - bits),
/// 2^(e_i - 2 bits), ... given shift[i] = rounding_shift(e_i, bits) and
/// |x_i| <= 2^e_i: slice s holds integers of at most bits (s = 0) or bits - 1
/// bits times its grid; rest = x - the slices, exactly.
void slice(const double* x, std::size_t m, const double* shift, int bits, int count,
           double* const* slices, double* rest);

/// slice() over a matrix, row i (by_rows) or column j on the exponent e_i or
/// e_j, |entries| <= 2^e: `slices` (resized to m's shape) on the grids
/// 2^(e - bits), 2^(e - 2 bits), ..., rest = m - their sum exactly.
void slice_matrix(const Eigen::MatrixXd& m, const Eigen::VectorXi& e, bool by_rows, int bits,
                  const std::vector<Eigen::MatrixXd*>& slices, Eigen::MatrixXd& rest);

}  // namespace slaterlab::reference::slices
