#include "verify/cli/bench_references.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "slaterlab/reference/certified.hpp"
#include "slaterlab/reference/fast_reference.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/run/metrics.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab {
namespace {

Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  return m;
}

void fast_reset(benchmark::State& state, const ReferenceBenchUnits& units, Eigen::Index n) {
  const Eigen::MatrixXd a = gaussian(n, n, 41);
  reference::FastReference fast;
  double seconds = 0;
  for (auto _ : state) {
    const double t0 = units.cpu_seconds();
    fast.reset(a);
    seconds = units.cpu_seconds() - t0;
  }
  const auto log_det = fast.log_det();
  state.counters["cost_vs_lu"] = seconds / units.lu_seconds(n);
  state.counters["log_det_bound"] = log_det.error_bound;
  state.counters["trusted"] = log_det.trusted;
}

void certified_blas(benchmark::State& state, const ReferenceBenchUnits& units, Eigen::Index n) {
  const Eigen::MatrixXd a = gaussian(n, n, 22);
  reference::CertifiedLogDet result;
  double seconds = 0;
  for (auto _ : state) {
    const double t0 = units.cpu_seconds();
    result = reference::certified_log_det_blas(a);
    seconds = units.cpu_seconds() - t0;
  }
  state.counters["cost_vs_lu"] = seconds / units.lu_seconds(n);
  state.counters["certified_bits"] = double(result.certified_bits);
}

void fast_inverse(benchmark::State& state, const ReferenceBenchUnits& units, Eigen::Index n) {
  reference::FastReference fast;
  fast.reset(gaussian(n, n, 42));
  reference::FastInverse inverse;
  double seconds = 0;
  for (auto _ : state) {
    const double t0 = units.cpu_seconds();
    inverse = fast.inverse();
    seconds = units.cpu_seconds() - t0;
  }
  state.counters["cost_vs_lu"] = seconds / units.lu_seconds(n);
  state.counters["relative_bound"] = inverse.relative_bound;
  state.counters["trusted"] = inverse.trusted;
}

/// One checkpoint's metrics of one sm-double strategy (residual, divergence,
/// condition number) against the reference's inverse, and the residual of
/// that pivot, evaluated once per checkpoint for all strategies.
void checkpoint_metrics(benchmark::State& state, const ReferenceBenchUnits& units, Eigen::Index n) {
  const Eigen::MatrixXd a = gaussian(n, n, 45);
  reference::FastReference fast;
  fast.reset(a);
  const Eigen::MatrixXd pivot = fast.inverse().inverse;
  const auto sm = make_updater(baseline_strategy(), UpdaterOptions{});
  sm->reset(a);
  const Eigen::MatrixXd x = *sm->maintained().inverse;
  InverseResidual residual;
  double seconds = 0, shared = 0;
  for (auto _ : state) {
    double t0 = units.cpu_seconds();
    const InverseResiduals residuals(a, pivot);
    shared = units.cpu_seconds() - t0;
    t0 = units.cpu_seconds();
    residual = residuals(x);
    benchmark::DoNotOptimize(relative_divergence(x, pivot) + condition_1(a, x));
    seconds = units.cpu_seconds() - t0;
  }
  state.counters["cost_vs_lu"] = seconds / units.lu_seconds(n);
  state.counters["shared_vs_lu"] = shared / units.lu_seconds(n);
  // The strategy's own work between two checkpoints (checkpoint_every = N moves).
  state.counters["vs_n_sm_moves"] = seconds / (double(n) * units.sm_move_seconds(n));
  state.counters["shared_pivot"] = residual.evaluation == Evaluation::shared_pivot;
}

/// Every move accepted, as the sm walk does; columns from a pool of N + 1.
/// A checkpoint inverse every N moves, as a run has (its cost is the
/// fast-inverse row, not counted here): the ratios' bounds use the
/// contraction it measures.
void fast_move(benchmark::State& state, const ReferenceBenchUnits& units, Eigen::Index n) {
  reference::FastReference fast;
  fast.reset(gaussian(n, n, 43));
  const Eigen::MatrixXd pool = gaussian(n, n + 1, 44);
  std::int64_t moves = 0, trusted = 0, steps = 0;
  double seconds = 0;
  for (auto _ : state) {
    const double t0 = units.cpu_seconds();
    double checkpoints = 0;
    do {
      if (moves % n == 0) {
        const double c0 = units.cpu_seconds();
        (void)fast.inverse();
        checkpoints += units.cpu_seconds() - c0;
      }
      const auto r = fast.ratio(moves % n, pool.col(moves % (n + 1)));
      trusted += r.trusted;
      steps += r.refinement_steps;
      fast.accept();
      ++moves;
    } while (units.cpu_seconds() - t0 - checkpoints < units.seconds_per_case);
    seconds = units.cpu_seconds() - t0 - checkpoints;
  }
  state.SetItemsProcessed(moves);
  state.counters["vs_sm_move"] = seconds / double(moves) / units.sm_move_seconds(n);
  state.counters["trusted"] = double(trusted) / double(moves);
  state.counters["steps"] = double(steps) / double(moves);
  state.counters["refactorisations"] = double(fast.refactorisations());
  state.counters["log_det_trusted"] = fast.log_det().trusted;
}

/// The first registered CPU strategy with a delay window (delayed).
std::string windowed_strategy() {
  for (const std::string& name : known_strategies()) {
    const StrategyTraits& traits = strategy_traits(name);
    if (traits.windowed && !traits.needs_device) return name;
  }
  throw std::logic_error("no windowed CPU strategy is registered");
}

/// The lockstep study of the fast reference's cost goal (the baseline, sm,
/// in double and mixed, and the windowed strategy, delayed, at K = 64 in
/// double; Gaussian, one sweep, Metropolis) at N: with the fast engine and
/// no certified log|det|, or with the default [reference] (engine auto,
/// certified initial and final log|det|, seed 3).
std::string whole_study_toml(Eigen::Index n, bool default_reference) {
  const char* reference = default_reference ? "seed = 3\n" : R"(seed = 7
[reference]
engine = "fast"
certify = false
)";
  return fmt::format(R"([study]
name = "whole-study"
{}[[experiment]]
workload = "gaussian"
n = [{}]
sweeps = 1
acceptance = "metropolis"
[[strategy]]
name = "{}"
precision = ["double", "mixed"]
[[strategy]]
name = "{}"
k = 64
precision = "double"
)", reference, n, baseline_strategy(), windowed_strategy());
}

/// Runs this executable's `run STUDY -o RESULTS -q` as a user would, its
/// output discarded; true when it exits 0. `cpu_s`: the process's user and
/// system CPU time.
bool run_study_process(const std::filesystem::path& study, const std::filesystem::path& results,
                       double& cpu_s) {
  std::vector<std::string> args = {"slaterlab", "run", study.string(), "-o", results.string(), "-q"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return false;
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// A whole study as a process, its wall time against the strategies' own
/// (the sum of their elapsed_s in the results file): what the reference,
/// the metrics, the workload and the program around them add. Wall time,
/// unlike the other cases: the goal is stated in it; the process's CPU time
/// beside it (cpu_vs_strategies).
void whole_study(benchmark::State& state, Eigen::Index n, bool default_reference) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("slaterlab-bench-{}", getpid());
  fs::create_directories(dir);
  const fs::path study = dir / "study.toml", results = dir / "study.h5";
  std::ofstream(study) << whole_study_toml(n, default_reference);
  double wall = 0, cpu = 0;
  bool ok = true;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    ok = run_study_process(study, results, cpu);
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (!ok) {
    fs::remove_all(dir);
    state.SkipWithError("the study's run did not exit 0");
    return;
  }
  const ResultsFile file = read_results(results);
  fs::remove_all(dir);
  double strategies = 0;
  for (const StrategyResult& s : file.experiments.at(0).strategies) {
    strategies += s.checkpoints.back().elapsed_s;
  }
  state.counters["wall_s"] = wall;
  state.counters["strategies_s"] = strategies;
  state.counters["reference_s"] = file.experiments.at(0).reference.back().elapsed_s;
  state.counters["vs_strategies"] = wall / strategies;
  // The same in the process's CPU time: what a machine shared with other
  // work does not inflate (the strategies' time is CPU time already).
  state.counters["cpu_s"] = cpu;
  state.counters["cpu_vs_strategies"] = cpu / strategies;
}

}  // namespace

void register_fast_reference_benchmarks(const ReferenceBenchUnits& units) {
  benchmark::RegisterBenchmark("reference/fast-reset/N:1024", [units](benchmark::State& s) {
    fast_reset(s, units, 1024);
  })->Iterations(1)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("reference/certified-log-det-blas/N:1024",
                               [units](benchmark::State& s) { certified_blas(s, units, 1024); })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("reference/fast-inverse/N:1024", [units](benchmark::State& s) {
    fast_inverse(s, units, 1024);
  })->Iterations(1)->Unit(benchmark::kMillisecond);
  for (const Eigen::Index n : {1024, 2048}) {
    benchmark::RegisterBenchmark(fmt::format("reference/checkpoint-metrics/N:{}", n).c_str(),
                                 [units, n](benchmark::State& s) { checkpoint_metrics(s, units, n); })
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(fmt::format("reference/fast-move/N:{}", n).c_str(),
                                 [units, n](benchmark::State& s) { fast_move(s, units, n); })
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(fmt::format("reference/whole-study/N:{}", n).c_str(),
                                 [n](benchmark::State& s) { whole_study(s, n, false); })
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("reference/whole-study-default/N:1024",
                               [](benchmark::State& s) { whole_study(s, 1024, true); })
      ->Iterations(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace slaterlab
