#include "verify/cli/bench_updates.hpp"

#include <fmt/format.h>

#include "slaterlab/strategies/determinant/external_kernel.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <set>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/cli/bench_args.hpp"
#include "verify/cli/bench_limits.hpp"
#include "verify/cli/bench_measure.hpp"

namespace slaterlab::bench_detail {
namespace {

/// The baseline's (sm's) moves/s per (N, precision) in this run, for vs_sm.
std::map<std::pair<Eigen::Index, Precision>, double>& sm_rates() {
  static std::map<std::pair<Eigen::Index, Precision>, double> rates;
  return rates;
}

/// The bound of a strategy's move rate (file comment), 0 when it has none.
double move_bound(const std::string& strategy, Precision p, Eigen::Index n) {
  const double n2 = double(n) * double(n);
  const bool single = p == Precision::single;
  switch (strategy_traits(strategy).bench.move_bound) {
    case BenchModel::MoveBound::gemm:
      return (single ? gemm_rate<float>(n) : gemm_rate<double>(n)) / (4 * n2);
    case BenchModel::MoveBound::triad: return triad_rate() / (3 * n2 * (single ? 4 : 8));
    case BenchModel::MoveBound::none: break;
  }
  return 0;
}

void walk(benchmark::State& state, const std::string& strategy, const UpdaterOptions& options,
          Eigen::Index n) {
  const WalkData& data = walk_data(n);
  const double bound = move_bound(strategy, options.precision, n);
  const std::unique_ptr<DeterminantUpdater> updater = make_updater(strategy, options);
  updater->reset(data.start);
  const bool windowed = strategy_traits(strategy).windowed;
  const bool baseline = strategy_traits(strategy).baseline;
  const Eigen::Index window = windowed ? options.k : 1;
  const std::size_t pool = data.pool.size();
  std::int64_t moves = 0;
  double cpu = 0;
  const std::int64_t block = windows_per_clock_read(n);
  for (auto _ : state) {
    const double t0 = thread_seconds();
    do {
      for (std::int64_t b = 0; b < block; ++b) {
        for (Eigen::Index w = 0; w < window; ++w, ++moves) {
          const Ratio r = updater->ratio(moves % n, data.pool[std::size_t(moves) % pool]);
          benchmark::DoNotOptimize(r);
          updater->accept();
        }
      }
    } while (thread_seconds() - t0 < bench_options().seconds);
    // The moves still in the window pay for their flush inside the timing:
    // a guard-shortened window ends anywhere in the K-move blocks above.
    updater->flush();
    cpu = thread_seconds() - t0;
  }
  state.SetItemsProcessed(moves);
  const double rate = double(moves) / cpu;
  const auto key = std::make_pair(n, options.precision);
  const double probe = options.precision == Precision::double_ ? sm_loop_rate<double>(n)
                                                               : sm_loop_rate<float>(n);
  state.counters["vs_probe"] = rate / probe;
  if (baseline) sm_rates()[key] = rate;
  if (bound > 0) {
    state.counters["bound"] = bound;
    state.counters["of_bound"] = rate / bound;
  }
  if (auto it = sm_rates().find(key); it != sm_rates().end() && !baseline) {
    state.counters["vs_sm"] = rate / it->second;
  }
  state.counters["N"] = double(n);
  if (windowed) state.counters["K"] = double(options.k);
  state.counters["breakdowns"] = double(updater->counters().breakdowns);
  // A delayed window shorter than K on average means the growth guard
  // flushed early (each flush then costs a GEMM of that smaller width).
  const auto flushes = updater->counters().event(kFlushEvent);
  if (windowed && flushes > 0) state.counters["window"] = double(moves) / double(flushes);
}

void register_walk(const std::string& strategy, const UpdaterOptions& options, Eigen::Index n) {
  // A kernel's options name its case: updates/<label>/<key>:<value>/N:<N>.
  std::string options_part;
  for (const auto& [key, value] : options.kernel_options) options_part += "/" + key + ":" + value;
  const std::string name = "updates/" + make_updater(strategy, options)->label() + options_part +
                           "/N:" + std::to_string(n);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
    walk(state, strategy, options, n);
  })->Iterations(1)->Unit(benchmark::kMicrosecond);
}

}  // namespace

/// Every (k, variant) a strategy's traits ask the benchmark to walk, at p.
void register_walks(const std::string& strategy, Eigen::Index n, Precision p) {
  const StrategyTraits& traits = strategy_traits(strategy);
  if (std::find(traits.precisions.begin(), traits.precisions.end(), p) == traits.precisions.end())
    return;
  UpdaterOptions o;
  o.precision = p;
  for (const auto& [k, variant] : traits.bench.walks) {
    o.k = k;
    o.variant = variant;
    register_walk(strategy, o, n);
  }
}

/// The CPU strategies at size n and precision p, in registration order (the
/// baseline before the others, for vs_sm).
void register_updates(Eigen::Index n, Precision p) {
  for (const std::string& strategy : known_strategies())
    if (!strategy_traits(strategy).needs_device) register_walks(strategy, n, p);
  // External kernels (--kernel), at the precisions they declare.
  for (const BenchOptions::Kernel& kernel : bench_options().kernels) {
    UpdaterOptions o;
    o.precision = p;
    o.library = kernel.library;
    const StrategyTraits traits = strategy_traits(library_strategy(), o);
    if (std::find(traits.precisions.begin(), traits.precisions.end(), p) == traits.precisions.end())
      continue;
    if (!traits.single_moves) {  // a whole-cycle-only kernel has no walk of moves
      static std::set<std::string> told;
      if (told.insert(kernel.library).second)
        fmt::print(stderr, "bench: kernel {} takes whole update cycles only: no update walks\n",
                   kernel.library);
      continue;
    }
    for (const auto& set : kernel_option_sets(kernel)) {
      o.kernel_options = set;
      // A kernel that declares the sizes it takes (ABI version 2) is walked
      // at those alone; what it leaves out is said once per size.
      if (const std::string why = kernel_size_refusal(o, long(n)); !why.empty()) {
        static std::set<std::pair<std::string, Eigen::Index>> told;
        if (told.insert({kernel.library, n}).second)
          fmt::print(stderr, "bench: {}: its cases at N = {} are left out\n", why, n);
        continue;
      }
      register_walk(library_strategy(), o, n);
    }
  }
}

double sm_move_seconds(Eigen::Index n) {
  if (auto it = sm_rates().find({n, Precision::double_}); it != sm_rates().end()) {
    return 1.0 / it->second;
  }
  const WalkData& data = walk_data(n);
  const std::unique_ptr<DeterminantUpdater> sm = make_updater(baseline_strategy(), UpdaterOptions{});
  sm->reset(data.start);
  std::int64_t moves = 0;
  const double t0 = thread_seconds();
  do {
    benchmark::DoNotOptimize(sm->ratio(moves % n, data.pool[std::size_t(moves) % data.pool.size()]));
    sm->accept();
  } while (++moves < 3 || thread_seconds() - t0 < bench_options().seconds);
  const double seconds = (thread_seconds() - t0) / double(moves);
  sm_rates()[{n, Precision::double_}] = 1.0 / seconds;
  return seconds;
}

}  // namespace slaterlab::bench_detail
