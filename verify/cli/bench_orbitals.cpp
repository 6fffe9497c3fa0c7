#include "verify/cli/bench_orbitals.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/cuda/device_orbitals.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"

namespace slaterlab {
namespace {

constexpr Eigen::Index kGrid = 48;
constexpr Eigen::Index kWalkers = 32;
constexpr double kAlpha = 1.0;

/// The CPU set of N orbitals in T, built on first use and kept.
template <class T>
const BsplineOrbitals<T>& cpu_set(Eigen::Index n) {
  static std::map<Eigen::Index, std::unique_ptr<BsplineOrbitals<T>>> cache;
  auto& slot = cache[n];
  if (!slot) {
    BsplineBoxRule rule;
    rule.grid = kGrid;
    slot = std::make_unique<BsplineOrbitals<T>>(HarmonicOscillatorOrbitals(n, kAlpha), rule);
  }
  return *slot;
}

/// All electrons of kWalkers walkers, spread like the density.
Eigen::Matrix3Xd positions(Eigen::Index n) {
  std::mt19937_64 rng{std::uint64_t(n)};
  std::normal_distribution<double> normal(0.0, 2.0 / std::sqrt(kAlpha));
  Eigen::Matrix3Xd r(3, n * kWalkers);
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = normal(rng);
  return r;
}

void evaluate(benchmark::State& state, const OrbitalSet& set, Eigen::Index n) {
  const Eigen::Matrix3Xd r = positions(n);
  OrbitalVGL out;
  for (auto _ : state) {
    set.evaluate_vgl(r, out);
    benchmark::DoNotOptimize(out.value.data());
  }
  state.SetItemsProcessed(state.iterations() * r.cols());
  state.counters["N"] = double(n);
  state.counters["positions"] = double(r.cols());
}

template <class T>
void register_set(Eigen::Index n, bool on_device) {
  const std::string label = std::string(sizeof(T) == 4 ? "bspline-float" : "bspline-double") +
                            (on_device ? "-cuda" : "");
  const std::string name = "orbitals/" + label + "/vgl/N:" + std::to_string(n);
  benchmark::RegisterBenchmark(name.c_str(), [n, on_device](benchmark::State& state) {
    const BsplineOrbitals<T>& cpu = cpu_set<T>(n);
    if (!on_device) return evaluate(state, cpu, n);
    const std::unique_ptr<OrbitalSet> gpu = on_cuda_device(cpu);
    evaluate(state, *gpu, n);
  })->Unit(benchmark::kMillisecond);
}

}  // namespace

void register_orbital_benchmarks() {
  for (const Eigen::Index n : {56, 220}) {
    for (const bool on_device : {false, true}) {
      register_set<float>(n, on_device);
      register_set<double>(n, on_device);
    }
  }
}

}  // namespace slaterlab
