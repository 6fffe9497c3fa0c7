#include "verify/cli/bench.hpp"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "strategies/determinant/updater_options.hpp"
#include "verify/cli/bench_orbitals.hpp"

namespace slaterlab {
namespace {

/// The matrix every sweep starts from and the sweep's new columns.
struct SweepData {
  Eigen::MatrixXd start;
  std::vector<Eigen::VectorXd> columns;  // column k is electron k's move
};

const SweepData& sweep_data(Eigen::Index n) {
  static std::map<Eigen::Index, SweepData> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  std::mt19937_64 rng(std::uint64_t(n) * 7919u + 1u);
  std::normal_distribution<double> normal;
  SweepData data{Eigen::MatrixXd(n, n), {}};
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) data.start(i, j) = normal(rng);
  for (Eigen::Index k = 0; k < n; ++k) {
    Eigen::VectorXd c(n);
    for (Eigen::Index i = 0; i < n; ++i) c(i) = normal(rng);
    data.columns.push_back(std::move(c));
  }
  return cache.emplace(n, std::move(data)).first->second;
}

/// One sweep of accepted column updates per iteration: electrons 0..moves-1
/// (all N by default).
void sweep(benchmark::State& state, const std::string& strategy, const UpdaterOptions& options,
           Eigen::Index n, Eigen::Index moves) {
  const SweepData& data = sweep_data(n);
  const std::unique_ptr<DeterminantUpdater> updater = make_updater(strategy, options);
  std::int64_t breakdowns = 0;
  for (auto _ : state) {
    state.PauseTiming();
    updater->reset(data.start);
    state.ResumeTiming();
    for (Eigen::Index k = 0; k < moves; ++k) {
      const Ratio r = updater->ratio(k, data.columns[std::size_t(k)]);
      benchmark::DoNotOptimize(r);
      updater->accept();
    }
    updater->flush();
    breakdowns += updater->counters().breakdowns;
  }
  state.SetItemsProcessed(state.iterations() * moves);
  state.counters["N"] = double(n);
  if (strategy != "sm") state.counters["K"] = double(options.k);
  // Sanity: a breakdown would put a refactorisation inside the timing.
  state.counters["breakdowns"] = double(breakdowns);
}

void register_case(const std::string& strategy, const UpdaterOptions& options, Eigen::Index n,
                   Eigen::Index moves = 0) {
  const std::string name =
      "updates/" + make_updater(strategy, options)->label() + "/N:" + std::to_string(n);
  const Eigen::Index count = moves > 0 ? std::min(moves, n) : n;
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    sweep(state, strategy, options, n, count);
  })->Unit(benchmark::kMillisecond);
}

/// delayed-cuda against sm and delayed on the CPU at N = 1024, 2048, 4096
/// (the CPU cases at 1024 are those of register_all), registered only where
/// a device is present; otherwise stderr says so once. An iteration is 1024
/// accepted moves (a whole sweep at N = 1024), so that a CPU iteration at
/// N = 4096 stays near a few seconds; items/s compare directly.
void register_device_cases() {
  if (const auto why = strategy_unavailable("delayed-cuda")) {
    std::cerr << "slaterlab bench: GPU cases not registered: " << *why << "\n";
    return;
  }
  constexpr Eigen::Index kMoves = 1024;
  for (const Eigen::Index n : {1024, 2048, 4096}) {
    for (const Precision p : {Precision::double_, Precision::single, Precision::mixed}) {
      UpdaterOptions o;
      o.precision = p;
      for (const int k : {64, 256}) {
        o.k = k;
        register_case("delayed-cuda", o, n, kMoves);
      }
      if (n == 1024 || p == Precision::mixed) continue;
      register_case("sm", o, n, kMoves);
      o.k = 64;
      register_case("delayed", o, n, kMoves);
    }
  }
  register_orbital_benchmarks();
}

void register_all() {
  for (const Eigen::Index n : {256, 1024}) {
    for (const Precision p : {Precision::double_, Precision::single}) {
      UpdaterOptions o;
      o.precision = p;
      register_case("sm", o, n);
      for (const char* variant : {"incremental", "naive"}) {
        for (const int k : {1, 16, 64, 256}) {
          o.k = k;
          o.variant = variant;
          register_case("delayed", o, n);
        }
      }
    }
  }
  register_device_cases();
}

}  // namespace

int run_bench(int argc, char** argv) {
  openblas_set_num_threads(1);
  static const bool registered = (register_all(), true);
  (void)registered;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("blas_threads", std::to_string(openblas_get_num_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace slaterlab
