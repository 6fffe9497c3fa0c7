#include "verify/cli/bench_orbitals.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/cuda/device_orbitals.hpp"
#include "slaterlab/strategies/orbitals/electron_gas.hpp"
#include "slaterlab/strategies/orbitals/harmonic_oscillator.hpp"
#include "verify/inputs/orbital_registry.hpp"

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

void evaluate(benchmark::State& state, const OrbitalSet& set, const Eigen::Matrix3Xd& r) {
  OrbitalVGL out;
  for (auto _ : state) {
    set.evaluate_vgl(r, out);
    benchmark::DoNotOptimize(out.value.data());
  }
  state.SetItemsProcessed(state.iterations() * r.cols());
  state.counters["N"] = double(set.size());
  state.counters["positions"] = double(r.cols());
}

template <class T>
void register_set(Eigen::Index n, bool on_device) {
  const std::string label = std::string(sizeof(T) == 4 ? "bspline-float" : "bspline-double") +
                            (on_device ? "-cuda" : "");
  const std::string name = "orbitals/" + label + "/vgl/N:" + std::to_string(n);
  benchmark::RegisterBenchmark(name.c_str(), [n, on_device](benchmark::State& state) {
    const BsplineOrbitals<T>& cpu = cpu_set<T>(n);
    if (!on_device) return evaluate(state, cpu, positions(n));
    const std::unique_ptr<OrbitalSet> gpu = on_cuda_device(cpu);
    evaluate(state, *gpu, positions(n));
  })->Unit(benchmark::kMillisecond);
}

// ---- the electron gas -------------------------------------------------------

// The cell's side: the evaluation's cost does not depend on it (positions are
// uniform in the cell, the grid is per wavelength).
constexpr double kGasCell = 1.0;
constexpr Eigen::Index kGasPositions = 1024;
// Peak bytes of a table's build, for either precision: the double table, or
// the float table with its double work table (bspline_build_bytes). The
// machine's memory is shared with other jobs.
constexpr double kGasBuildCap = 3.0 * double(std::size_t{1} << 30);

/// The closed shell nearest `target` orbitals (the lower one on a tie).
Eigen::Index nearest_closed_shell(Eigen::Index target) {
  const std::vector<Eigen::Index> shells = gas_closed_shells(2 * target);
  return *std::min_element(shells.begin(), shells.end(), [target](Eigen::Index a, Eigen::Index b) {
    return std::abs(a - target) < std::abs(b - target);
  });
}

/// The grid of gas_bspline_box for n orbitals and the one used: the largest
/// not above it whose build fits kGasBuildCap in float and in double, so that
/// both precisions of a size share their grid.
struct GasGrid {
  Eigen::Index rule;
  Eigen::Index used;
};
GasGrid gas_grid(Eigen::Index n) {
  const Eigen::Index rule = gas_bspline_box(n, kGasCell).grid;
  const auto peak = [n](Eigen::Index g) {
    return std::max(bspline_build_bytes<float>(g, n), bspline_build_bytes<double>(g, n));
  };
  Eigen::Index g = rule;
  while (g > 4 && peak(g) > kGasBuildCap) --g;
  return {rule, g};
}

/// The latest gas table, of either precision (one slot, not a static per T).
struct GasTableSlot {
  std::pair<Eigen::Index, std::size_t> key{0, 0};  // (N, sizeof(T))
  std::unique_ptr<OrbitalSet> set;
};
GasTableSlot& gas_table_slot() {
  static GasTableSlot slot;
  return slot;
}

/// The B-spline table of n gas orbitals in T on `grid`, the latest one only:
/// the previous is freed before the next is built (two of the largest would
/// not fit the cap) and its pages returned. Cases of one (T, N) are
/// registered together.
template <class T>
const BsplineOrbitals<T>& gas_table(Eigen::Index n, Eigen::Index grid) {
  GasTableSlot& slot = gas_table_slot();
  if (slot.key != std::pair{n, sizeof(T)}) {
    slot = {};
    // main() keeps freed blocks in the heap (no mmap, no trimming), where the
    // next table, larger or of the other precision, would not fit them: give
    // the pages back, or the peak would be the sum of two tables.
    malloc_trim(0);
    slot.set = std::make_unique<BsplineOrbitals<T>>(ElectronGasOrbitals(n, kGasCell),
                                                    BsplineBox{0.5 * kGasCell, grid},
                                                    std::size_t(kGasBuildCap));
    slot.key = {n, sizeof(T)};
  }
  return static_cast<const BsplineOrbitals<T>&>(*slot.set);
}

/// kGasPositions positions uniform in the cell.
Eigen::Matrix3Xd gas_positions(Eigen::Index n) {
  std::mt19937_64 rng{std::uint64_t(n) + 1};
  std::uniform_real_distribution<double> uniform(-0.5 * kGasCell, 0.5 * kGasCell);
  Eigen::Matrix3Xd r(3, kGasPositions);
  for (Eigen::Index j = 0; j < r.cols(); ++j)
    for (int d = 0; d < 3; ++d) r(d, j) = uniform(rng);
  return r;
}

template <class T>
void register_gas_set(Eigen::Index n, bool on_device, const std::function<double()>& bandwidth) {
  const std::string name = fmt::format("orbitals/gas-bspline-{}{}/vgl/N:{}",
                                       sizeof(T) == 4 ? "float" : "double",
                                       on_device ? "-cuda" : "", n);
  benchmark::RegisterBenchmark(name.c_str(), [n, on_device, bandwidth](benchmark::State& state) {
    const GasGrid grid = gas_grid(n);
    const BsplineOrbitals<T>& cpu = gas_table<T>(n, grid.used);
    const Eigen::Matrix3Xd r = gas_positions(n);
    if (on_device) {
      evaluate(state, *on_cuda_device(cpu), r);
    } else {
      evaluate(state, cpu, r);
    }
    // Each position reads the 4 x 4 x 4 stencil's rows of Npad coefficients
    // (Mathuriya et al.); the results written are not counted.
    const double bytes = 64.0 * double(cpu.padded_size()) * sizeof(T);
    const double read = double(state.iterations()) * double(r.cols()) * bytes;
    state.counters["bytes_per_position"] = bytes;
    state.counters["bytes_per_s"] = benchmark::Counter(read, benchmark::Counter::kIsRate);
    if (!on_device) {
      state.counters["of_bandwidth"] =
          benchmark::Counter(read / bandwidth(), benchmark::Counter::kIsRate);
    }
    state.counters["G"] = double(grid.used);
    state.counters["G_rule"] = double(grid.rule);
    state.counters["table_MiB"] = double(cpu.table_bytes()) / double(1 << 20);
    if (grid.used < grid.rule)
      state.SetLabel(fmt::format("grid {} below the rule's {}: its build would exceed {} GiB",
                                 grid.used, grid.rule, kGasBuildCap / double(1 << 30)));
  })->Unit(benchmark::kMillisecond);
}

/// A registered orbital set (OrbitalSetKind::benchmarked), built through the
/// registry from N harmonic-oscillator orbitals on the box of a kGrid grid.
void register_registered_set(const std::string& name, Eigen::Index n) {
  benchmark::RegisterBenchmark(fmt::format("orbitals/{}/vgl/N:{}", name, n).c_str(),
                               [name, n](benchmark::State& state) {
                                 BsplineBoxRule rule;
                                 rule.grid = kGrid;
                                 const auto set = make_orbital_set(
                                     name, {std::make_shared<HarmonicOscillatorOrbitals>(n, kAlpha),
                                            ho_bspline_box(n, kAlpha, rule)});
                                 evaluate(state, *set, positions(n));
                               })
      ->Unit(benchmark::kMillisecond);
}

/// The analytic orbitals on the same positions: what the table replaces.
void register_gas_analytic(Eigen::Index n) {
  const std::string name = fmt::format("orbitals/gas-analytic/vgl/N:{}", n);
  benchmark::RegisterBenchmark(name.c_str(), [n](benchmark::State& state) {
    evaluate(state, ElectronGasOrbitals(n, kGasCell), gas_positions(n));
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

void register_registered_orbital_benchmarks() {
  for (const std::string& name : known_orbital_sets()) {
    if (!orbital_set_kind(name).benchmarked || orbital_set_unusable(name)) continue;
    for (const Eigen::Index n : {56, 220}) register_registered_set(name, n);
  }
}

void register_gas_orbital_benchmarks(const std::function<double()>& memory_bandwidth,
                                     bool on_device) {
  for (const Eigen::Index target : {256, 512, 1024, 2048}) {
    const Eigen::Index n = nearest_closed_shell(target);
    register_gas_analytic(n);
    register_gas_set<float>(n, false, memory_bandwidth);
    if (on_device) register_gas_set<float>(n, true, memory_bandwidth);
    register_gas_set<double>(n, false, memory_bandwidth);
    if (on_device) register_gas_set<double>(n, true, memory_bandwidth);
  }
}

}  // namespace slaterlab
