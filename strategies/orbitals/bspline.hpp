#pragma once
// Tricubic B-spline orbitals (seed 003): N orbitals interpolated on a uniform
// periodic grid over the cube [-L, L)^3, coefficients stored in float or
// double, structure-of-arrays with the orbital index fastest.
//
// Representation. With G points per dimension, spacing h = 2L/G and nodes
// x_j = -L + j h (j = 0..G-1, periodic), each orbital is
//
//   s(r) = sum_{a,b,c=0..3} c[ix-1+a, iy-1+b, iz-1+c] B_a(tx) B_b(ty) B_c(tz),
//
// (x + L)/h = ix + tx with 0 <= tx < 1, indices modulo G, and the uniform
// cubic B-spline pieces B_0 = (1-t)^3/6, B_1 = (3t^3 - 6t^2 + 4)/6,
// B_2 = (-3t^3 + 3t^2 + 3t + 1)/6, B_3 = t^3/6. Gradient and Laplacian use the
// derivatives of the pieces (times 1/h, 1/h^2); the Laplacian is the trace of
// the Hessian, d2x + d2y + d2z.
//
// Coefficients. Interpolation s(x_j) = f(x_j) at every node. In 1D it reads
// (c_{j-1} + 4 c_j + c_{j+1}) / 6 = f_j (cyclic), a circulant system with
// eigenvalues (4 + 2 cos theta)/6 in [1/3, 1]: condition number 3, so the
// solve loses at most a few ulps. The 3D system is the tensor product, solved
// direction by direction (x, y, z) in double. The 1D periodic solve is the
// exact factorisation (1,4,1)/6 = (1 - z E^-1)(1 - z E) / (-6 z), z = sqrt(3) - 2,
// applied as one causal and one anti-causal first-order recursion whose
// periodic starting values are the (finite, exact) geometric sums over one
// period: O(G) per line, stable (|z| < 1), no FFT. The result is then
// rounded once to T.
//
// Layout. coefs[((ix * G + iy) * G + iz) * Npad + i], Npad = N rounded up to a
// multiple of the 64-byte SIMD width (16 floats, 8 doubles), 64-byte aligned
// (2 MiB aligned, with transparent huge pages requested, for large tables),
// padding orbitals zero. One position reads the 16 (ix, iy) rows of its
// stencil, each 4 z-adjacent nodes = one contiguous run of 4 Npad values
// (split where the stencil wraps): 64 Npad sizeof(T) bytes per position.
//
// Periodicity. Positions outside [-L, L)^3 wrap periodically. The box is
// chosen so that the orbitals are below the edge tolerance at its faces (see
// BsplineBoxRule), so a wrapped position reads (numerically) zero, as the true
// orbital there is; the periodic interpolant is only meaningful for orbitals
// that vanish at the faces.
//
// Memory. The table holds G^3 * Npad * sizeof(T) bytes. Building it needs
// double work space: for T = double the table itself (solved in place); for
// T = float a double table of half the padded orbitals, built twice (the
// source is sampled once per half), as large as the float table. The peak is
// therefore G^3 * Npad * 8 bytes for either T, and must not exceed the memory
// cap (4 GiB by default), or the constructor throws.
//
// Evaluation. For each position: 4 weights per dimension (and their first
// and second derivatives for VGL, times 1/h and 1/h^2), computed in double and
// rounded to T; then, for each block of one 64-byte vector of orbitals, the
// 16 rows of 4 stencil points are accumulated in vector registers, in T, and
// the block's outputs stored once (V: 1 output, VGL: value, 3 gradient
// components, Laplacian). No allocation, no virtual call, no Eigen inside the
// kernel. Memory traffic is the 64 Npad sizeof(T) bytes of the stencil, so
// for large N the kernel runs at the memory bandwidth. The kernels are
// compiled for several x86-64 levels (baseline, AVX2+FMA, AVX-512) and picked
// at load time where the compiler supports it; the wider variants contract
// multiply-adds into FMA, so results may differ in the last bit between CPUs
// (as OpenBLAS results do), never between calls on one CPU. A batch is
// evaluated position by position with the same kernel, so batch and
// one-at-a-time results are identical bit for bit. V and the value part of
// VGL use the same arithmetic in the same order (equal bit for bit here),
// though FMA contraction could in principle differ between the two kernels.

#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "slaterlab/strategies/orbitals/orbital_set.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace slaterlab {

/// Default cap on the memory a B-spline table may take (peak while building).
inline constexpr std::size_t kBsplineDefaultMemoryCap = std::size_t{4} << 30;  // 4 GiB

/// The cube [-half_width, half_width)^3 and the number of grid points per
/// dimension (spacing 2 half_width / grid).
struct BsplineBox {
  double half_width = 0.0;  // L
  Eigen::Index grid = 0;    // G >= 4
  double spacing() const { return 2.0 * half_width / static_cast<double>(grid); }
};

/// How to choose the box for harmonic-oscillator orbitals of frequency alpha
/// and highest shell n_max.
///
/// Box: L = r_tp + m / sqrt(alpha), r_tp = sqrt((2 n_max + 3) / alpha) the
/// classical turning radius of the highest shell, m the margin in Gaussian
/// decay lengths 1/sqrt(alpha). A face x = L bounds |phi| / max|phi| by
/// |h_nx(L)| / max|h_nx| (the other two factors cancel). Beyond its turning
/// point a = sqrt(2 nx + 1) <= sqrt(2 n_max + 3) (in xi = sqrt(alpha) x) the
/// Hermite function decays as exp(-S), S = int_a^xi sqrt(s^2 - a^2) ds (WKB; the
/// amplitude factor (s^2 - a^2)^{-1/4} is below 1 there). Two lower bounds,
/// from sqrt((s - a)(s + a)) >= s - a and >= sqrt(2 a (s - a)), give
/// S >= max(m^2 / 2, (2/3) sqrt(2a) m^{3/2}); asking exp(-S) <= edge_tolerance
/// gives the default margin
///   m = min( sqrt(2 ln(1/tol)), (3 ln(1/tol) / (2 sqrt(2a)))^{2/3} ),  a = sqrt(2 n_max + 3).
/// For tol = 2^-52: m = 8.49 (n_max = 0), 7.87 (n_max = 3), 6.83 (n_max = 9).
/// (A smaller a only lengthens the decay region, so using the largest a is safe.)
///
/// Grid: the shortest local wavelength of any occupied orbital along an axis is
/// at least 2 pi / k_max with k_max = sqrt(alpha (2 n_max + 3)) = alpha r_tp;
/// G = ceil(points_per_wavelength * 2L / (2 pi / k_max)), at least 4. L and h
/// scale as 1/sqrt(alpha), so G depends on N only.
/// Cubic-spline interpolation errors scale as (k h)^4 (value), (k h)^3 k
/// (gradient) and (k h)^2 k^2 (Laplacian). The default p = 7.5 points per
/// shortest wavelength (k h = 0.84 at the centre of the highest shell) is the
/// finest round figure at which every closed shell up to N = 220 fits the
/// default 4 GiB cap in either precision. Its grids and table sizes:
///
///     N    1   4  10  20  35  56   84  120  165  220
///     G   43  58  69  78  87  95  103  111  118  125
///   float table GB  (G^3 Npad 4)   0.06 (N=20)  0.42 (N=84)  1.75 (N=220)
///   double table GB (G^3 Npad 8)   0.09 (N=20)  0.77 (N=84)  3.50 (N=220)
///
/// and relative errors (to the largest magnitude over Gaussian samples of the
/// density's width; N = 20) of 6e-4 (max) / 8e-5 (RMS) in values, 3e-3 / 3e-4
/// in gradients and 4e-2 / 3e-3 in Laplacians, identical in float and double
/// (interpolation dominates). Raise p for accuracy studies: the errors fall as
/// p^-4, p^-3, p^-2 while the memory grows as p^3.
/// The margin was derived from WKB; the tests check |h_n(L)| / max|h_n| <=
/// edge_tolerance directly for n_max <= 9.
struct BsplineBoxRule {
  double edge_tolerance = std::numeric_limits<double>::epsilon();
  double margin = 0.0;                // decay lengths; 0: derived from edge_tolerance
  double points_per_wavelength = 7.5;
  Eigen::Index grid = 0;              // 0: from points_per_wavelength
};

/// The margin m (in decay lengths) of BsplineBoxRule for highest shell n_max.
double ho_box_margin(int n_max, double edge_tolerance);
/// The box BsplineBoxRule gives for the lowest N states of frequency alpha.
BsplineBox ho_bspline_box(Eigen::Index n, double alpha, const BsplineBoxRule& rule = {});

/// Orbitals padded to a multiple of the 64-byte SIMD width of T.
template <class T>
constexpr Eigen::Index bspline_padded_size(Eigen::Index n) {
  constexpr Eigen::Index w = 64 / static_cast<Eigen::Index>(sizeof(T));
  return (n + w - 1) / w * w;
}
/// Bytes of the coefficient table: G^3 * Npad * sizeof(T).
template <class T>
double bspline_table_bytes(Eigen::Index grid, Eigen::Index n) {
  const double g = static_cast<double>(grid);
  return g * g * g * static_cast<double>(bspline_padded_size<T>(n)) * sizeof(T);
}
/// Peak bytes while building: G^3 * Npad * 8 (the table, plus for T = float
/// an equally large double work table).
template <class T>
double bspline_build_bytes(Eigen::Index grid, Eigen::Index n) {
  return bspline_table_bytes<T>(grid, n) * static_cast<double>(sizeof(double) / sizeof(T));
}

namespace detail {
/// Minimal 64-byte-aligned allocator for the tables and scratch buffers.
template <class T>
struct Aligned64Allocator {
  using value_type = T;
  Aligned64Allocator() = default;
  template <class U>
  Aligned64Allocator(const Aligned64Allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const Aligned64Allocator<U>&) const noexcept { return true; }
};
template <class T>
using AlignedVector = std::vector<T, Aligned64Allocator<T>>;

/// Owning zero-initialised array for the large tables: 64-byte aligned, and
/// from 2 MiB up aligned to 2 MiB with transparent huge pages requested
/// (Linux madvise) before the first touch. Every stencil row of a position
/// lands on a different page of a table of gigabytes; with 4 KiB pages each
/// one costs a TLB miss and a page walk.
template <class T>
class HugeTable {
 public:
  HugeTable() = default;
  explicit HugeTable(std::size_t n);
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  std::size_t size() const { return n_; }

 private:
  struct Free {
    std::size_t align = 64;
    void operator()(T* p) const noexcept { ::operator delete(p, std::align_val_t{align}); }
  };
  std::unique_ptr<T, Free> p_;
  std::size_t n_ = 0;
};
}  // namespace detail

/// The orbitals of a source set as tricubic B-splines with T coefficients.
/// Evaluation is const and allocates its scratch per call (once per batch),
/// so one table may be shared by threads. Move-only (the table is large).
template <class T>
class BsplineOrbitals final : public OrbitalSet {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "T must be float or double");

 public:
  using Scalar = T;
  /// Orbital-index padding unit (64 bytes of T).
  static constexpr Eigen::Index simd_width = 64 / static_cast<Eigen::Index>(sizeof(T));

  /// Interpolates every orbital of `source` on `box`. Throws
  /// std::invalid_argument when box.grid < 4, box.half_width is not a finite
  /// positive number, or the peak memory (bspline_build_bytes) exceeds
  /// memory_cap_bytes.
  BsplineOrbitals(const OrbitalSet& source, const BsplineBox& box,
                  std::size_t memory_cap_bytes = kBsplineDefaultMemoryCap);
  /// Harmonic-oscillator orbitals on the box `rule` gives (ho_bspline_box).
  explicit BsplineOrbitals(const HarmonicOscillatorOrbitals& source, const BsplineBoxRule& rule = {},
                           std::size_t memory_cap_bytes = kBsplineDefaultMemoryCap);

  Eigen::Index size() const override { return n_; }
  std::string label() const override;
  void evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const override;
  void evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const override;

  const BsplineBox& box() const { return box_; }
  Eigen::Index padded_size() const { return npad_; }
  /// Bytes held by the coefficient table.
  std::size_t table_bytes() const { return coefs_.size() * sizeof(T); }
  /// The whole coefficient table (G^3 Npad T's, layout above), e.g. to copy
  /// it to a GPU.
  const T* table() const { return coefs_.data(); }
  /// The coefficient of orbital i at grid node (ix, iy, iz).
  T coefficient(Eigen::Index ix, Eigen::Index iy, Eigen::Index iz, Eigen::Index i) const {
    return coefs_.data()[offset(ix, iy, iz) + static_cast<std::size_t>(i)];
  }

  /// Low-level kernels, no allocation: values of all padded orbitals at r
  /// (3 doubles) into `v` (padded_size() T's, 64-byte aligned).
  void evaluate_v(const double* r, T* v) const;
  /// Values, gradient components and Laplacians into five aligned arrays of
  /// padded_size() T's.
  void evaluate_vgl(const double* r, T* v, T* gx, T* gy, T* gz, T* lap) const;

 private:
  std::size_t offset(Eigen::Index ix, Eigen::Index iy, Eigen::Index iz) const {
    const auto g = static_cast<std::size_t>(box_.grid);
    return ((static_cast<std::size_t>(ix) * g + static_cast<std::size_t>(iy)) * g +
            static_cast<std::size_t>(iz)) * static_cast<std::size_t>(npad_);
  }

  Eigen::Index n_;
  Eigen::Index npad_;
  BsplineBox box_;
  double inv_h_;  // 1 / spacing
  detail::HugeTable<T> coefs_;
};

extern template class BsplineOrbitals<float>;
extern template class BsplineOrbitals<double>;

}  // namespace slaterlab
