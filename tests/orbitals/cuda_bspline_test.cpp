// B-spline orbitals on a CUDA device ("bspline-float-cuda",
// "bspline-double-cuda") against the CPU kernels on the same table and
// against the analytic orbitals; batching over many walkers; and, where no
// device (or no CUDA) is present, the clear refusal. The GPU tests skip,
// naming the reason, without a device.
//
// Rounding bound (GPU against CPU, same T table, same T weights). A result
// is the 64-term sum over the stencil nodes (a, b, c) of products of three
// weights and a coefficient (for the Laplacian, three such sums). On the
// longest path a term meets at most d = 28 roundings: its three weights
// rounded from double to T (3; nvcc may fuse the double arithmetic of the
// weights, so a T weight may differ by one rounding between the two), the
// x-y weight products (2, the Laplacian's sum of two products included),
// the z contraction of 4 terms (4), its product with the x-y weight (1), the
// Laplacian's sum of its two parts (1) and the accumulation over the 16
// (a, b) rows (16), plus one to spare. Each computation is therefore within
// gamma_d S of the exact sum, S = sum |weights| |c| (Higham, Accuracy and
// Stability, Sec. 3.1), however it orders and fuses the operations, and
//   |gpu - cpu| <= 2 gamma_d S,   gamma_d = d eps_T / (1 - d eps_T),
// with eps_T the machine epsilon of T (twice the unit roundoff: a safe
// overestimate). S / |result| is the condition number of the sum, so the bound
// is eps_T times the condition, as the B-spline's own float-vs-double
// analysis (docs/bspline.md).
//
// Against the analytic orbitals phi: |gpu_T - phi| <= |cpu_double - phi| +
// |gpu_T - cpu_double|, and gpu_T differs from the double spline by its own
// rounding (gamma_d S), the double spline's (gamma_d(double) S), the
// coefficients' rounding to T (eps_T S) and the weights' (3 eps_T S, already
// in d): (gamma_d(T) + gamma_d(double) + eps_T) S.
//
// The GPU threads' arithmetic (bspline_thread.hpp) also runs on the host
// everywhere (bspline_threads_on_host.hpp): the same 2 gamma_d S bound
// against the CPU kernel, since the host compiler may fuse and order the
// same operations differently again.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/strategies/cuda/device.hpp"
#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/bspline_weights.hpp"
#include "slaterlab/strategies/orbitals/cuda/device_orbitals.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "tests/orbitals/bspline_threads_on_host.hpp"

namespace slaterlab {
namespace {

#define SKIP_WITHOUT_DEVICE() \
  if (const auto& why = cuda_unavailable()) GTEST_SKIP() << *why

constexpr int kRoundings = 28;  // d, the longest path (file comment)

template <class T>
double gamma_d() {
  const double u = std::numeric_limits<T>::epsilon();
  return kRoundings * u / (1.0 - kRoundings * u);
}

/// S for value, gradient (3) and Laplacian of orbital i at r: the sums of
/// |weights| |c| over the stencil, with the T weights both kernels use.
struct AbsoluteSums {
  double value = 0, grad[3] = {0, 0, 0}, lap = 0;
};

template <class T>
AbsoluteSums absolute_sums(const BsplineOrbitals<T>& s, const Eigen::Vector3d& r, Eigen::Index i) {
  const BsplineBox& box = s.box();
  SplineStencil st[3];
  for (int d = 0; d < 3; ++d) st[d] = spline_stencil(r(d), box.half_width, 1.0 / box.spacing(), int(box.grid), true);
  auto w = [&](int d, int a, int order) {
    const double x = order == 0 ? st[d].w[a] : order == 1 ? st[d].dw[a] : st[d].d2w[a];
    return std::abs(double(T(x)));
  };
  AbsoluteSums out;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 4; ++c) {
        const double coef = std::abs(double(s.coefficient(st[0].node[a], st[1].node[b], st[2].node[c], i)));
        out.value += w(0, a, 0) * w(1, b, 0) * w(2, c, 0) * coef;
        out.grad[0] += w(0, a, 1) * w(1, b, 0) * w(2, c, 0) * coef;
        out.grad[1] += w(0, a, 0) * w(1, b, 1) * w(2, c, 0) * coef;
        out.grad[2] += w(0, a, 0) * w(1, b, 0) * w(2, c, 1) * coef;
        out.lap += (w(0, a, 2) * w(1, b, 0) * w(2, c, 0) + w(0, a, 0) * w(1, b, 2) * w(2, c, 0) +
                    w(0, a, 0) * w(1, b, 0) * w(2, c, 2)) * coef;
      }
  return out;
}

/// Points spread like the density, some beyond the box (they wrap).
Eigen::Matrix3Xd sample_points(Eigen::Index m, double sigma, const BsplineBox& box, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, sigma);
  Eigen::Matrix3Xd r(3, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = normal(rng);
  for (Eigen::Index j = 0; j < m; j += 17) r(0, j) += 2.0 * box.half_width;  // one period away
  return r;
}

struct Fixture {
  HarmonicOscillatorOrbitals exact{20, 0.8};
  BsplineBoxRule rule = [] {
    BsplineBoxRule r;
    r.grid = 24;  // a small table; the bounds hold on any grid
    return r;
  }();
};

/// Checks every entry of `got` against `ref` within factor * S.
template <class T>
void expect_within_rounding(const BsplineOrbitals<T>& s, const Eigen::Matrix3Xd& r, const OrbitalVGL& got,
                            const OrbitalVGL& ref, double factor, const char* what) {
  int failures = 0;
  for (Eigen::Index m = 0; m < r.cols(); ++m)
    for (Eigen::Index i = 0; i < s.size(); ++i) {
      const AbsoluteSums S = absolute_sums(s, r.col(m), i);
      auto check = [&](double a, double b, double sum, const char* q) {
        if (!(std::abs(a - b) <= factor * sum) && failures++ < 5)
          ADD_FAILURE() << what << " " << q << " orbital " << i << " point " << m << ": " << a << " vs " << b
                        << ", bound " << factor * sum;
      };
      check(got.value(i, m), ref.value(i, m), S.value, "value");
      for (int d = 0; d < 3; ++d) check(got.gradient(3 * i + d, m), ref.gradient(3 * i + d, m), S.grad[d], "gradient");
      check(got.laplacian(i, m), ref.laplacian(i, m), S.lap, "laplacian");
    }
  EXPECT_EQ(failures, 0);
}

template <class T>
void check_matches_cpu_kernel() {
  SKIP_WITHOUT_DEVICE();
  const Fixture f;
  const BsplineOrbitals<T> cpu(f.exact, f.rule);
  const auto gpu = on_cuda_device(cpu);
  EXPECT_EQ(gpu->size(), cpu.size());
  const Eigen::Matrix3Xd r = sample_points(200, 2.0, cpu.box(), 7);
  OrbitalVGL want, got;
  cpu.evaluate_vgl(r, want);
  gpu->evaluate_vgl(r, got);
  expect_within_rounding(cpu, r, got, want, 2.0 * gamma_d<T>(), "GPU vs CPU");
  // The values-only kernel is the value part of VGL, to the same bound.
  Eigen::MatrixXd values;
  gpu->evaluate_values(r, values);
  OrbitalVGL values_only = want;
  values_only.value = values;
  expect_within_rounding(cpu, r, values_only, want, 2.0 * gamma_d<T>(), "GPU values vs CPU");
}

TEST(CudaBspline, MatchesCpuKernelWithinRoundingFloat) { check_matches_cpu_kernel<float>(); }
TEST(CudaBspline, MatchesCpuKernelWithinRoundingDouble) { check_matches_cpu_kernel<double>(); }

/// The GPU threads' arithmetic run on the host (no device needed) against
/// the CPU kernel on the same table, values-only and VGL.
template <class T>
void check_threads_on_host_match_cpu_kernel() {
  const Fixture f;
  const BsplineOrbitals<T> cpu(f.exact, f.rule);
  const Eigen::Matrix3Xd r = sample_points(60, 2.0, cpu.box(), 5);
  const cuda::SplineTable<T> table{cpu.table(), int(cpu.box().grid), long(cpu.padded_size()),
                                   cpu.box().half_width, 1.0 / cpu.box().spacing()};
  const Eigen::Index n = cpu.size(), npad = cpu.padded_size(), count = r.cols();
  std::vector<T> v(std::size_t(count * npad)), gx(v.size()), gy(v.size()), gz(v.size()), lap(v.size()),
      values(v.size());
  testing::spline_vgl_on_host(table, r.data(), int(count), v.data(), gx.data(), gy.data(), gz.data(), lap.data());
  testing::spline_values_on_host(table, r.data(), int(count), values.data());
  OrbitalVGL want, got, values_only;
  cpu.evaluate_vgl(r, want);
  got.value.resize(n, count);
  got.gradient.resize(3 * n, count);
  got.laplacian.resize(n, count);
  values_only = want;
  for (Eigen::Index m = 0; m < count; ++m)
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto at = std::size_t(m * npad + i);
      got.value(i, m) = v[at];
      got.gradient(3 * i, m) = gx[at];
      got.gradient(3 * i + 1, m) = gy[at];
      got.gradient(3 * i + 2, m) = gz[at];
      got.laplacian(i, m) = lap[at];
      values_only.value(i, m) = values[at];
    }
  expect_within_rounding(cpu, r, got, want, 2.0 * gamma_d<T>(), "GPU threads on the host vs CPU");
  expect_within_rounding(cpu, r, values_only, want, 2.0 * gamma_d<T>(), "GPU value threads on the host vs CPU");
}

TEST(CudaBspline, ThreadArithmeticOnHostMatchesCpuKernelFloat) { check_threads_on_host_match_cpu_kernel<float>(); }
TEST(CudaBspline, ThreadArithmeticOnHostMatchesCpuKernelDouble) {
  check_threads_on_host_match_cpu_kernel<double>();
}

template <class T>
void check_against_analytic() {
  SKIP_WITHOUT_DEVICE();
  const Fixture f;
  const BsplineOrbitals<T> cpu(f.exact, f.rule);
  const BsplineOrbitals<double> cpu_double(f.exact, f.rule);
  const auto gpu = on_cuda_device(cpu);
  const Eigen::Matrix3Xd r = sample_points(100, 2.0, cpu.box(), 11);
  OrbitalVGL got, spline, phi;
  gpu->evaluate_vgl(r, got);
  cpu_double.evaluate_vgl(r, spline);
  f.exact.evaluate_vgl(r, phi);
  // |gpu_T - phi| <= |spline_double - phi| + factor S (file comment): the
  // GPU adds no more than its rounding to the interpolation error.
  const double factor = gamma_d<T>() + gamma_d<double>() + std::numeric_limits<T>::epsilon();
  expect_within_rounding(cpu, r, got, spline, factor, "GPU vs the double spline");
  int failures = 0;
  for (Eigen::Index m = 0; m < r.cols(); ++m)
    for (Eigen::Index i = 0; i < cpu.size(); ++i) {
      const AbsoluteSums S = absolute_sums(cpu, r.col(m), i);
      const double allowed = std::abs(spline.value(i, m) - phi.value(i, m)) + factor * S.value;
      const double error = std::abs(got.value(i, m) - phi.value(i, m));
      if (!(error <= allowed) && failures++ < 5)
        ADD_FAILURE() << "orbital " << i << " point " << m << ": |gpu - phi| " << error << " > " << allowed;
      const double lap_allowed = std::abs(spline.laplacian(i, m) - phi.laplacian(i, m)) + factor * S.lap;
      const double lap_error = std::abs(got.laplacian(i, m) - phi.laplacian(i, m));
      if (!(lap_error <= lap_allowed) && failures++ < 5)
        ADD_FAILURE() << "orbital " << i << " point " << m << ": Laplacian |gpu - phi| " << lap_error << " > "
                      << lap_allowed;
    }
  EXPECT_EQ(failures, 0);
}

TEST(CudaBspline, ErrorAgainstAnalyticIsInterpolationPlusRoundingFloat) { check_against_analytic<float>(); }
TEST(CudaBspline, ErrorAgainstAnalyticIsInterpolationPlusRoundingDouble) { check_against_analytic<double>(); }

template <class T>
void check_many_walkers_in_one_batch() {
  SKIP_WITHOUT_DEVICE();
  const Fixture f;
  const BsplineOrbitals<T> cpu(f.exact, f.rule);
  const auto gpu = on_cuda_device(cpu);
  const Eigen::Index walkers = 8, n = cpu.size();
  const Eigen::Matrix3Xd all = sample_points(walkers * n, 2.0, cpu.box(), 3);
  OrbitalVGL batch, one;
  gpu->evaluate_vgl(all, batch);
  for (Eigen::Index w = 0; w < walkers; ++w) {
    gpu->evaluate_vgl(all.middleCols(w * n, n), one);
    // Each position is computed by the same threads' code whatever the batch: bit for bit.
    EXPECT_EQ(batch.value.middleCols(w * n, n), one.value);
    EXPECT_EQ(batch.gradient.middleCols(w * n, n), one.gradient);
    EXPECT_EQ(batch.laplacian.middleCols(w * n, n), one.laplacian);
  }
}

TEST(CudaBspline, ManyWalkersInOneBatchEqualOneWalkerAtATimeFloat) { check_many_walkers_in_one_batch<float>(); }
TEST(CudaBspline, ManyWalkersInOneBatchEqualOneWalkerAtATimeDouble) { check_many_walkers_in_one_batch<double>(); }

TEST(CudaBspline, LabelsAndNonFinitePositions) {
  SKIP_WITHOUT_DEVICE();
  const Fixture f;
  const auto gpu_f = on_cuda_device(BsplineOrbitals<float>(f.exact, f.rule));
  const auto gpu_d = on_cuda_device(BsplineOrbitals<double>(f.exact, f.rule));
  EXPECT_EQ(gpu_f->label(), "bspline-float-cuda");
  EXPECT_EQ(gpu_d->label(), "bspline-double-cuda");
  // Errors of a set are reported in units of the epsilon it computes in.
  EXPECT_EQ(gpu_f->computing_epsilon(), std::ldexp(1.0, -23));
  EXPECT_EQ(gpu_d->computing_epsilon(), std::ldexp(1.0, -52));
  EXPECT_EQ(cuda_bspline_box(*gpu_f)->grid, 24);
  EXPECT_FALSE(cuda_bspline_box(f.exact).has_value());
  Eigen::Matrix3Xd r = Eigen::Matrix3Xd::Zero(3, 2);
  r(1, 1) = std::numeric_limits<double>::quiet_NaN();
  Eigen::MatrixXd values;
  EXPECT_THROW(gpu_f->evaluate_values(r, values), std::invalid_argument);
}

// Runs everywhere: without a device the CUDA sets are refused by name, with
// the reason, and the CPU sets are unaffected.
TEST(CudaBspline, WithoutDeviceTheSetIsRefusedWithTheReason) {
  EXPECT_FALSE(orbital_set_unavailable("bspline-float").has_value());
  EXPECT_FALSE(orbital_set_unavailable("analytic").has_value());
  const auto& why = cuda_unavailable();
  if (!why) GTEST_SKIP() << "a CUDA device is present: nothing is refused";
  const std::string expected = built_with_cuda()
                                   ? "no CUDA device available (cudaGetDeviceCount: "
                                   : "not built with CUDA (configure with -DSLATERLAB_CUDA=ON)";
  EXPECT_EQ(why->rfind(expected, 0), 0u) << *why;
  for (const std::string name : {"bspline-float-cuda", "bspline-double-cuda"})
    EXPECT_EQ(orbital_set_unavailable(name), name + ": " + *why);
  const Fixture f;
  BsplineBoxRule tiny;
  tiny.grid = 8;
  const BsplineOrbitals<float> cpu(f.exact, tiny);
  try {
    (void)on_cuda_device(cpu);
    ADD_FAILURE() << "on_cuda_device did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "bspline-float-cuda: " + *why);
  }
}

}  // namespace
}  // namespace slaterlab
