#include "verify/cli/bench.hpp"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "slaterlab/strategies/determinant/updater_options.hpp"

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

/// One full sweep of accepted column updates per iteration.
void sweep(benchmark::State& state, const std::string& strategy, const UpdaterOptions& options,
           Eigen::Index n) {
  const SweepData& data = sweep_data(n);
  const std::unique_ptr<DeterminantUpdater> updater = make_updater(strategy, options);
  std::int64_t breakdowns = 0;
  for (auto _ : state) {
    state.PauseTiming();
    updater->reset(data.start);
    state.ResumeTiming();
    for (Eigen::Index k = 0; k < n; ++k) {
      const Ratio r = updater->ratio(k, data.columns[std::size_t(k)]);
      benchmark::DoNotOptimize(r);
      updater->accept();
    }
    updater->flush();
    breakdowns += updater->counters().breakdowns;
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["N"] = double(n);
  if (strategy == "delayed") state.counters["K"] = double(options.k);
  // Sanity: a breakdown would put a refactorisation inside the timing.
  state.counters["breakdowns"] = double(breakdowns);
}

void register_case(const std::string& strategy, const UpdaterOptions& options, Eigen::Index n) {
  const std::string name =
      "updates/" + make_updater(strategy, options)->label() + "/N:" + std::to_string(n);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    sweep(state, strategy, options, n);
  })->Unit(benchmark::kMillisecond);
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
