#pragma once
// Tricubic B-spline orbitals: N orbitals interpolated on a uniform periodic
// grid over the cube [-L, L)^3, coefficients in float or double, stored
// structure-of-arrays with the orbital index fastest (Mathuriya et al.).
//
// What: BsplineOrbitals<T> interpolates any OrbitalSet at the grid nodes and
// evaluates values, or values, gradients and Laplacians, of all orbitals at a
// position (or a batch of them); ho_bspline_box picks the box and grid for
// harmonic-oscillator orbitals (BsplineBoxRule).
// Preconditions: the source orbitals vanish (below the rule's edge tolerance)
// at the faces of the box: positions outside it wrap periodically.
// Guarantees: evaluation is const and thread-safe on one table, allocates
// nothing in the kernels, and gives bit-identical results for a batch and
// for one position at a time on one CPU (FMA variants may differ in the last
// bit between CPUs). The table takes G^3 Npad sizeof(T) bytes; building it
// peaks at G^3 Npad 8 bytes (bspline_build_bytes).
// Errors: the constructors throw std::invalid_argument when box.grid < 4,
// box.half_width is not a finite positive number, or the peak memory exceeds
// memory_cap_bytes. The derivation of the representation, the coefficient
// solve, the box rule and its measured errors: docs/bspline.md.

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

/// How to choose the box and grid for harmonic-oscillator orbitals of
/// frequency alpha and highest shell n_max: L = r_tp + m / sqrt(alpha) with
/// r_tp the classical turning radius and m the margin (in decay lengths) that
/// puts the orbitals below edge_tolerance at the faces; G from
/// points_per_wavelength of the shortest local wavelength (derived, with the
/// measured grids, table sizes and errors, in docs/bspline.md).
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

/// Orbitals padded to a multiple of the 64-byte SIMD width of T, and one
/// width more where that row would be a multiple of 4 KiB: the 64 stencil
/// rows of a position would then start at one offset modulo 4 KiB and
/// compete for the same L1 sets (docs/bspline.md, Layout).
template <class T>
constexpr Eigen::Index bspline_padded_size(Eigen::Index n) {
  constexpr Eigen::Index w = 64 / static_cast<Eigen::Index>(sizeof(T));
  const Eigen::Index padded = (n + w - 1) / w * w;
  return padded * Eigen::Index(sizeof(T)) % 4096 == 0 ? padded + w : padded;
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
  double computing_epsilon() const override { return std::numeric_limits<T>::epsilon(); }
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
