#include "slaterlab/strategies/orbitals/bspline.hpp"

#include "slaterlab/strategies/orbitals/bspline_weights.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <sstream>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#endif

// The evaluation kernels are cloned for the x86-64 levels v3 (AVX2 + FMA) and
// v4 (AVX-512) and dispatched at load time (GNU ifunc): the project builds for
// the baseline ISA, and the orbital loop is the one place where vector width
// pays directly.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SLATERLAB_SPLINE_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define SLATERLAB_SPLINE_CLONES
#endif

namespace slaterlab {

template <class T>
detail::HugeTable<T>::HugeTable(std::size_t n) : n_(n) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  std::size_t bytes = n * sizeof(T);
  Free f;
  if (bytes >= kHuge) {
    f.align = kHuge;
    bytes = (bytes + kHuge - 1) / kHuge * kHuge;
  }
  p_ = std::unique_ptr<T, Free>(static_cast<T*>(::operator new(bytes, std::align_val_t{f.align})), f);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (f.align == kHuge) ::madvise(p_.get(), bytes, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
  std::fill(p_.get(), p_.get() + n, T(0));
}
template class detail::HugeTable<float>;
template class detail::HugeTable<double>;

// ---------------------------------------------------------------------------
// Box rule

double ho_box_margin(int n_max, double edge_tolerance) {
  if (!(edge_tolerance > 0.0 && edge_tolerance < 1.0))
    throw std::invalid_argument("ho_box_margin: edge_tolerance must lie in (0, 1)");
  const double log_tol = -std::log(edge_tolerance);
  const double a = std::sqrt(2.0 * n_max + 3.0);
  // S >= m^2 / 2 and S >= (2/3) sqrt(2a) m^{3/2}: either bound reaching ln(1/tol) suffices.
  const double gaussian = std::sqrt(2.0 * log_tol);
  const double airy = std::pow(3.0 * log_tol / (2.0 * std::sqrt(2.0 * a)), 2.0 / 3.0);
  return std::min(gaussian, airy);
}

BsplineBox ho_bspline_box(Eigen::Index n, double alpha, const BsplineBoxRule& rule) {
  if (n < 1) throw std::invalid_argument("ho_bspline_box: N must be >= 1");
  if (!(alpha > 0.0) || !std::isfinite(alpha))
    throw std::invalid_argument("ho_bspline_box: alpha must be a finite positive number");
  if (!(rule.margin >= 0.0) || !std::isfinite(rule.margin))
    throw std::invalid_argument("ho_bspline_box: margin must be >= 0 (0 = derived)");
  if (!(rule.points_per_wavelength > 0.0) || !std::isfinite(rule.points_per_wavelength))
    throw std::invalid_argument("ho_bspline_box: points_per_wavelength must be > 0");
  if (rule.grid < 0) throw std::invalid_argument("ho_bspline_box: grid must be >= 0 (0 = derived)");
  const int n_max = ho_shell_of(n - 1);
  const double m = rule.margin > 0.0 ? rule.margin : ho_box_margin(n_max, rule.edge_tolerance);
  const double r_tp = std::sqrt((2.0 * n_max + 3.0) / alpha);
  BsplineBox box;
  box.half_width = r_tp + m / std::sqrt(alpha);
  if (rule.grid > 0) {
    box.grid = rule.grid;
  } else {
    const double k_max = alpha * r_tp;
    const double wavelengths = 2.0 * box.half_width * k_max / (2.0 * std::numbers::pi);
    const double points = std::ceil(rule.points_per_wavelength * wavelengths);
    box.grid = std::max<Eigen::Index>(4, static_cast<Eigen::Index>(points));
  }
  return box;
}

namespace {

// ---------------------------------------------------------------------------
// Coefficients

/// Solves (c_{j-1} + 4 c_j + c_{j+1}) / 6 = f_j (indices mod G) in place for
/// `width` interleaved lines: element j of line l sits at line[j * stride + l].
/// (1,4,1)/6 = (1 - z E^-1)(1 - z E) / (-6 z) with z = sqrt(3) - 2:
///   causal      y_j = f_j + z y_{j-1},   y_0     = sum_{k<G} z^k f_{-k}      / (1 - z^G)
///   anti-causal w_j = y_j + z w_{j+1},   w_{G-1} = sum_{k<G} z^k y_{G-1+k}   / (1 - z^G)
///   c = -6 z w.
/// The starting values are the exact periodic sums (one period, geometric
/// factor 1/(1 - z^G)). `acc` is scratch of `width` doubles.
void periodic_solve(double* line, Eigen::Index g, std::size_t stride, Eigen::Index width, double* acc) {
  const double z = std::numbers::sqrt3 - 2.0;
  const double period = 1.0 / (1.0 - std::pow(z, static_cast<double>(g)));
  auto at = [&](Eigen::Index j) { return line + static_cast<std::size_t>(j) * stride; };

  std::fill(acc, acc + width, 0.0);
  double zk = 1.0;
  for (Eigen::Index k = 0; k < g; ++k, zk *= z) {
    const double* f = at((g - k) % g);
    for (Eigen::Index l = 0; l < width; ++l) acc[l] += zk * f[l];
  }
  for (Eigen::Index l = 0; l < width; ++l) at(0)[l] = acc[l] * period;
  for (Eigen::Index j = 1; j < g; ++j) {
    double* y = at(j);
    const double* prev = at(j - 1);
    for (Eigen::Index l = 0; l < width; ++l) y[l] += z * prev[l];
  }

  std::fill(acc, acc + width, 0.0);
  zk = 1.0;
  for (Eigen::Index k = 0; k < g; ++k, zk *= z) {
    const double* y = at((g - 1 + k) % g);
    for (Eigen::Index l = 0; l < width; ++l) acc[l] += zk * y[l];
  }
  for (Eigen::Index l = 0; l < width; ++l) at(g - 1)[l] = acc[l] * period;
  for (Eigen::Index j = g - 2; j >= 0; --j) {
    double* w = at(j);
    const double* next = at(j + 1);
    for (Eigen::Index l = 0; l < width; ++l) w[l] += z * next[l];
  }

  const double scale = -6.0 * z;
  for (Eigen::Index j = 0; j < g; ++j) {
    double* c = at(j);
    for (Eigen::Index l = 0; l < width; ++l) c[l] *= scale;
  }
}

/// Samples orbitals [first, first + count) of `source` at the nodes into
/// `work` (layout of the table in double, orbital stride `width` >= count,
/// padding zero) and turns the samples into interpolating coefficients,
/// solving along x, then y, then z.
void build_coefficients(const OrbitalSet& source, const BsplineBox& box, Eigen::Index first,
                        Eigen::Index count, Eigen::Index width, double* work) {
  const Eigen::Index g = box.grid;
  const double h = box.spacing();
  const auto gs = static_cast<std::size_t>(g);
  const auto w = static_cast<std::size_t>(width);
  auto node = [&](Eigen::Index j) { return -box.half_width + static_cast<double>(j) * h; };

  Eigen::Matrix3Xd plane(3, g * g);
  Eigen::MatrixXd values;
  for (Eigen::Index ix = 0; ix < g; ++ix) {
    for (Eigen::Index iy = 0; iy < g; ++iy)
      for (Eigen::Index iz = 0; iz < g; ++iz) plane.col(iy * g + iz) << node(ix), node(iy), node(iz);
    source.evaluate_values(plane, values);
    for (Eigen::Index col = 0; col < g * g; ++col) {
      double* dst = work + (static_cast<std::size_t>(ix) * gs * gs + static_cast<std::size_t>(col)) * w;
      const double* src = values.col(col).data() + first;
      std::copy(src, src + count, dst);
      std::fill(dst + count, dst + width, 0.0);
    }
  }

  std::vector<double> acc(w);
  for (std::size_t b = 0; b < gs * gs; ++b)  // along x: lines (iy, iz), stride G^2 width
    periodic_solve(work + b * w, g, gs * gs * w, count, acc.data());
  for (std::size_t ix = 0; ix < gs; ++ix)    // along y: lines (ix, iz), stride G width
    for (std::size_t iz = 0; iz < gs; ++iz)
      periodic_solve(work + (ix * gs * gs + iz) * w, g, gs * w, count, acc.data());
  for (std::size_t b = 0; b < gs * gs; ++b)  // along z: lines (ix, iy), stride width
    periodic_solve(work + b * gs * w, g, w, count, acc.data());
}

std::string gib(double bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / double(std::size_t{1} << 30) << " GiB";
  return s.str();
}

template <class T>
void validate(const OrbitalSet& source, const BsplineBox& box, std::size_t cap) {
  const char* t = sizeof(T) == 4 ? "float" : "double";
  if (source.size() < 1) throw std::invalid_argument("BsplineOrbitals: the source orbital set is empty");
  if (box.grid < 4)
    throw std::invalid_argument("BsplineOrbitals: the grid needs at least 4 points per dimension (the cubic "
                                "stencil spans 4), got " + std::to_string(box.grid));
  if (!(box.half_width > 0.0) || !std::isfinite(box.half_width))
    throw std::invalid_argument(
        "BsplineOrbitals: the box half-width L must be a finite positive number, got " +
        std::to_string(box.half_width));
  const double need = bspline_build_bytes<T>(box.grid, source.size());
  if (need > static_cast<double>(cap)) {
    std::ostringstream s;
    s << "BsplineOrbitals: a " << box.grid << "^3 grid of " << source.size() << " " << t << " orbitals needs "
      << gib(need) << " (table " << gib(bspline_table_bytes<T>(box.grid, source.size()));
    if (sizeof(T) < sizeof(double)) s << " + as much double work space while building";
    s << "), above the memory cap of " << gib(static_cast<double>(cap))
      << "; use a coarser grid or raise the cap";
    throw std::invalid_argument(s.str());
  }
}

// ---------------------------------------------------------------------------
// Evaluation kernels

/// The 4 stencil points and weights of one dimension at one coordinate.
template <class T>
struct Axis {
  std::size_t offset[4];  // index (mod G) times the dimension's stride
  T w[4], dw[4], d2w[4];  // B_a(t), d/dx, d^2/dx^2
};

template <class T>
Axis<T> axis(double x, double half_width, double inv_h, Eigen::Index g, std::size_t stride,
             bool derivatives) {
  if (!std::isfinite(x)) throw std::invalid_argument("BsplineOrbitals: non-finite position coordinate");
  const SplineStencil s = spline_stencil(x, half_width, inv_h, int(g), derivatives);
  Axis<T> a;
  for (int k = 0; k < 4; ++k) {
    a.offset[k] = static_cast<std::size_t>(s.node[k]) * stride;
    a.w[k] = static_cast<T>(s.w[k]);
    if (derivatives) {
      a.dw[k] = static_cast<T>(s.dw[k]);
      a.d2w[k] = static_cast<T>(s.d2w[k]);
    }
  }
  return a;
}

// Loop order. The orbitals are processed in blocks of one 64-byte vector
// (16 floats, 8 doubles); for each block the 16 (a, b) rows of the stencil
// are accumulated in registers and the outputs stored once. (Adding each row
// into the output arrays instead reloads and stores them 16 times per
// position, which makes VGL bound by L1 traffic rather than by the table.)
// The block is a GCC/Clang generic vector of 64 bytes, lowered to 4 xmm, 2 ymm
// or 1 zmm register per clone: left to itself, GCC 12 vectorises the V kernel
// for double across the stencil rows, with gathers, instead of across the
// orbitals. The arithmetic is element-wise, in the same order as the scalar
// formula, so the vector width does not change the results (FMA contraction
// in the wider clones aside).

template <class T>
struct Simd {
  typedef T type __attribute__((vector_size(64)));
};
template <class T>
using Vec = typename Simd<T>::type;
template <class T>
constexpr std::size_t kLanes = 64 / sizeof(T);

// Loads and stores through memcpy: aligned in practice, well-defined always;
// by reference, as returning a 64-byte vector by value draws -Wpsabi.
template <class T>
[[gnu::always_inline]] inline void load(Vec<T>& v, const T* p) {
  std::memcpy(&v, p, sizeof v);
}
template <class T>
[[gnu::always_inline]] inline void store(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

/// The blocked loop reads 64 streams at once (16 rows x 4 z points), more
/// than the hardware prefetchers follow; fetching each stream two blocks
/// (128 bytes) ahead pays from DRAM and costs nothing when the table is in
/// cache (docs/bspline.md, Evaluation). Prefetching past the table is harmless.
template <class T>
[[gnu::always_inline]] inline void prefetch_ahead(const T* p, std::size_t o0, std::size_t o1, std::size_t o2,
                                                  std::size_t o3) {
  constexpr std::size_t ahead = 2 * kLanes<T>;
  __builtin_prefetch(p + o0 + ahead);
  __builtin_prefetch(p + o1 + ahead);
  __builtin_prefetch(p + o2 + ahead);
  __builtin_prefetch(p + o3 + ahead);
}

/// Row pointers (x and y offsets applied) and the x-y weight products of the
/// 16 (a, b) rows of a position's stencil.
template <class T>
struct Rows {
  const T* base[16];
  T wab[16];   // B_a B_b
  T dxab[16];  // B_a' B_b
  T dyab[16];  // B_a B_b'
  T lxy[16];   // B_a'' B_b + B_a B_b''
};

template <class T>
Rows<T> rows(const T* coefs, const Axis<T>& x, const Axis<T>& y, bool derivatives) {
  Rows<T> r;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const int k = 4 * a + b;
      r.base[k] = coefs + x.offset[a] + y.offset[b];
      r.wab[k] = x.w[a] * y.w[b];
      if (derivatives) {
        r.dxab[k] = x.dw[a] * y.w[b];
        r.dyab[k] = x.w[a] * y.dw[b];
        r.lxy[k] = x.d2w[a] * y.w[b] + x.w[a] * y.d2w[b];
      }
    }
  return r;
}

template <class T>
[[gnu::always_inline]] inline void v_body(const T* coefs, const Axis<T>& x, const Axis<T>& y,
                                          const Axis<T>& z, std::size_t npad, T* v) {
  const Rows<T> r = rows(coefs, x, y, false);
  const std::size_t o0 = z.offset[0], o1 = z.offset[1], o2 = z.offset[2], o3 = z.offset[3];
  const T w0 = z.w[0], w1 = z.w[1], w2 = z.w[2], w3 = z.w[3];
  for (std::size_t i0 = 0; i0 < npad; i0 += kLanes<T>) {
    Vec<T> acc = {};
    for (int k = 0; k < 16; ++k) {
      const T* p = r.base[k] + i0;
      prefetch_ahead(p, o0, o1, o2, o3);
      Vec<T> q0, q1, q2, q3;
      load(q0, p + o0);
      load(q1, p + o1);
      load(q2, p + o2);
      load(q3, p + o3);
      acc += r.wab[k] * (w0 * q0 + w1 * q1 + w2 * q2 + w3 * q3);
    }
    store(v + i0, acc);
  }
}

template <class T>
[[gnu::always_inline]] inline void vgl_body(const T* coefs, const Axis<T>& x, const Axis<T>& y,
                                            const Axis<T>& z, std::size_t npad, T* v, T* gx, T* gy, T* gz,
                                            T* lap) {
  const Rows<T> r = rows(coefs, x, y, true);
  const std::size_t o0 = z.offset[0], o1 = z.offset[1], o2 = z.offset[2], o3 = z.offset[3];
  const T w0 = z.w[0], w1 = z.w[1], w2 = z.w[2], w3 = z.w[3];
  const T d0 = z.dw[0], d1 = z.dw[1], d2 = z.dw[2], d3 = z.dw[3];
  const T e0 = z.d2w[0], e1 = z.d2w[1], e2 = z.d2w[2], e3 = z.d2w[3];
  for (std::size_t i0 = 0; i0 < npad; i0 += kLanes<T>) {
    Vec<T> av = {}, agx = {}, agy = {}, agz = {}, alap = {};
    for (int k = 0; k < 16; ++k) {
      const T* p = r.base[k] + i0;
      prefetch_ahead(p, o0, o1, o2, o3);
      Vec<T> q0, q1, q2, q3;
      load(q0, p + o0);
      load(q1, p + o1);
      load(q2, p + o2);
      load(q3, p + o3);
      // Contract the z stencil once: value, first and second z-derivative.
      const Vec<T> s0 = w0 * q0 + w1 * q1 + w2 * q2 + w3 * q3;
      const Vec<T> s1 = d0 * q0 + d1 * q1 + d2 * q2 + d3 * q3;
      const Vec<T> s2 = e0 * q0 + e1 * q1 + e2 * q2 + e3 * q3;
      const T wab = r.wab[k];
      av += wab * s0;
      agx += r.dxab[k] * s0;
      agy += r.dyab[k] * s0;
      agz += wab * s1;
      alap += r.lxy[k] * s0 + wab * s2;
    }
    store(v + i0, av);
    store(gx + i0, agx);
    store(gy + i0, agy);
    store(gz + i0, agz);
    store(lap + i0, alap);
  }
}

SLATERLAB_SPLINE_CLONES
void spline_v(const float* coefs, const Axis<float>& x, const Axis<float>& y, const Axis<float>& z,
              std::size_t npad, float* v) {
  v_body(coefs, x, y, z, npad, v);
}
SLATERLAB_SPLINE_CLONES
void spline_v(const double* coefs, const Axis<double>& x, const Axis<double>& y, const Axis<double>& z,
              std::size_t npad, double* v) {
  v_body(coefs, x, y, z, npad, v);
}
SLATERLAB_SPLINE_CLONES
void spline_vgl(const float* coefs, const Axis<float>& x, const Axis<float>& y, const Axis<float>& z,
                std::size_t npad, float* v, float* gx, float* gy, float* gz, float* lap) {
  vgl_body(coefs, x, y, z, npad, v, gx, gy, gz, lap);
}
SLATERLAB_SPLINE_CLONES
void spline_vgl(const double* coefs, const Axis<double>& x, const Axis<double>& y, const Axis<double>& z,
                std::size_t npad, double* v, double* gx, double* gy, double* gz, double* lap) {
  vgl_body(coefs, x, y, z, npad, v, gx, gy, gz, lap);
}

}  // namespace

// ---------------------------------------------------------------------------
// BsplineOrbitals

template <class T>
BsplineOrbitals<T>::BsplineOrbitals(const OrbitalSet& source, const BsplineBox& box,
                                    std::size_t memory_cap_bytes)
    : n_(source.size()),
      npad_(bspline_padded_size<T>(source.size())),
      box_(box),
      inv_h_(1.0 / box.spacing()) {
  validate<T>(source, box, memory_cap_bytes);
  const auto g = static_cast<std::size_t>(box.grid);
  const std::size_t count = g * g * g * static_cast<std::size_t>(npad_);
  coefs_ = detail::HugeTable<T>(count);
  if constexpr (std::is_same_v<T, double>) {
    build_coefficients(source, box, 0, n_, npad_, coefs_.data());  // in place
  } else {
    // Half the padded orbitals at a time, in a double work table as large as
    // the float table itself: the peak stays at twice the table.
    const Eigen::Index block = npad_ / 2;
    const auto nodes = g * g * g;
    const auto bw = static_cast<std::size_t>(block);
    detail::HugeTable<double> work(nodes * bw);
    for (Eigen::Index first = 0; first < n_; first += block) {
      const Eigen::Index len = std::min(block, n_ - first);
      build_coefficients(source, box, first, len, block, work.data());
      for (std::size_t k = 0; k < nodes; ++k) {
        T* dst = coefs_.data() + k * static_cast<std::size_t>(npad_) + static_cast<std::size_t>(first);
        const double* src = work.data() + k * bw;
        for (Eigen::Index i = 0; i < len; ++i) dst[i] = static_cast<T>(src[i]);
      }
    }
  }
}

template <class T>
BsplineOrbitals<T>::BsplineOrbitals(const HarmonicOscillatorOrbitals& source, const BsplineBoxRule& rule,
                                    std::size_t memory_cap_bytes)
    : BsplineOrbitals(source, ho_bspline_box(source.size(), source.alpha(), rule), memory_cap_bytes) {}

template <class T>
std::string BsplineOrbitals<T>::label() const {
  return std::is_same_v<T, float> ? "bspline-float" : "bspline-double";
}

template <class T>
void BsplineOrbitals<T>::evaluate_v(const double* r, T* v) const {
  const auto g = static_cast<std::size_t>(box_.grid);
  const auto np = static_cast<std::size_t>(npad_);
  const double l = box_.half_width;
  const Axis<T> x = axis<T>(r[0], l, inv_h_, box_.grid, g * g * np, false);
  const Axis<T> y = axis<T>(r[1], l, inv_h_, box_.grid, g * np, false);
  const Axis<T> z = axis<T>(r[2], l, inv_h_, box_.grid, np, false);
  spline_v(coefs_.data(), x, y, z, np, v);
}

template <class T>
void BsplineOrbitals<T>::evaluate_vgl(const double* r, T* v, T* gx, T* gy, T* gz, T* lap) const {
  const auto g = static_cast<std::size_t>(box_.grid);
  const auto np = static_cast<std::size_t>(npad_);
  const double l = box_.half_width;
  const Axis<T> x = axis<T>(r[0], l, inv_h_, box_.grid, g * g * np, true);
  const Axis<T> y = axis<T>(r[1], l, inv_h_, box_.grid, g * np, true);
  const Axis<T> z = axis<T>(r[2], l, inv_h_, box_.grid, np, true);
  spline_vgl(coefs_.data(), x, y, z, np, v, gx, gy, gz, lap);
}

template <class T>
void BsplineOrbitals<T>::evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const {
  values.resize(n_, positions.cols());
  detail::AlignedVector<T> v(static_cast<std::size_t>(npad_));
  for (Eigen::Index m = 0; m < positions.cols(); ++m) {
    evaluate_v(positions.col(m).data(), v.data());
    for (Eigen::Index i = 0; i < n_; ++i) values(i, m) = static_cast<double>(v[static_cast<std::size_t>(i)]);
  }
}

template <class T>
void BsplineOrbitals<T>::evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const {
  const auto np = static_cast<std::size_t>(npad_);
  out.value.resize(n_, positions.cols());
  out.gradient.resize(3 * n_, positions.cols());
  out.laplacian.resize(n_, positions.cols());
  detail::AlignedVector<T> scratch(5 * np);
  T* v = scratch.data();
  T* gx = v + np;
  T* gy = gx + np;
  T* gz = gy + np;
  T* lap = gz + np;
  for (Eigen::Index m = 0; m < positions.cols(); ++m) {
    evaluate_vgl(positions.col(m).data(), v, gx, gy, gz, lap);
    for (Eigen::Index i = 0; i < n_; ++i) {
      const auto k = static_cast<std::size_t>(i);
      out.value(i, m) = v[k];
      out.gradient(3 * i + 0, m) = gx[k];
      out.gradient(3 * i + 1, m) = gy[k];
      out.gradient(3 * i + 2, m) = gz[k];
      out.laplacian(i, m) = lap[k];
    }
  }
}

template class BsplineOrbitals<float>;
template class BsplineOrbitals<double>;

}  // namespace slaterlab
