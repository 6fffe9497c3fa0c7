#pragma once
// The run-time choice of a loop body's compilation: on_this_cpu<Body>(args)
// runs Body compiled for x86-64 with AVX2 and FMA (a multiply-add rounded
// once, as in OpenBLAS's kernels) where the CPU has both, and for the
// baseline the project is built for elsewhere. Body must be inlinable
// (the loops mark theirs always_inline), so that each copy is compiled for
// its target. Internal to strategies/determinant.

namespace slaterlab::linalg_detail {

inline bool has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

template <auto Body, class... Args>
[[gnu::target("avx2,fma")]] auto with_fma(Args... args) {
  return Body(args...);
}
template <auto Body, class... Args>
auto with_baseline(Args... args) {
  return Body(args...);
}
/// Body(args...) compiled for this CPU.
template <auto Body, class... Args>
auto on_this_cpu(Args... args) {
  return has_avx2_fma() ? with_fma<Body>(args...) : with_baseline<Body>(args...);
}

}  // namespace slaterlab::linalg_detail
