#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "slaterlab/strategies/cuda/device.hpp"
#include "slaterlab/strategies/determinant/cuda/delayed_cuda.hpp"
#include "slaterlab/strategies/determinant/delayed_update.hpp"
#include "slaterlab/strategies/determinant/external_kernel.hpp"
#include "slaterlab/strategies/determinant/qr_givens.hpp"
#include "slaterlab/strategies/determinant/recompute.hpp"
#include "slaterlab/strategies/determinant/sherman_morrison.hpp"
#include "slaterlab/strategies/determinant/splitting.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab {
namespace {

struct Entry {
  std::string name;
  StrategyTraits traits;
  UpdaterBuilder build;
};

/// Builds Strategy<float> for float and mixed storage, Strategy<double> otherwise.
template <template <class> class Strategy>
UpdaterBuilder by_storage() {
  return [](const UpdaterOptions& o) -> std::unique_ptr<DeterminantUpdater> {
    if (o.precision == Precision::double_) return std::make_unique<Strategy<double>>(o);
    return std::make_unique<Strategy<float>>(o);
  };
}

// Functions, not globals: the registry may be built during another
// translation unit's static initialisation (register_strategy in a test).
std::vector<Precision> all_precisions() {
  return {Precision::single, Precision::double_, Precision::mixed};
}
std::vector<Precision> float_and_double() { return {Precision::single, Precision::double_}; }

/// The delayed window's memory: window, W and the flush's work (6 N K), B^{-1},
/// W^T A' and B (3 K^2), in double.
double window_bytes(double n, const UpdaterOptions& o) {
  const double k = o.k;
  return 6 * n * k * 8 + 3 * k * k * 8;
}

/// The delayed growth guard keeps the row each ratio reads within
/// kGrowthFactor roundings of it, against up to one per update, K + 1 of
/// random sign, in Sherman-Morrison's row: kGrowthFactor sqrt(K + 1)
/// (delayed_window.hpp).
double window_rounding(const UpdaterOptions& o) {
  return DelayedWindowUpdater::kGrowthFactor * std::sqrt(double(o.k) + 1);
}

std::vector<std::pair<int, std::string>> delayed_bench_walks() {
  std::vector<std::pair<int, std::string>> walks;
  for (int k = 1; k <= 256; k *= 2) walks.emplace_back(k, "incremental");
  for (int k = 1; k <= 256; k *= 4) walks.emplace_back(k, "naive");
  return walks;
}

CounterEvent flush_event() { return {kFlushEvent, "delayed-update flushes so far"}; }

/// Traits with these precisions, the rest as `set` leaves them.
template <class Set>
StrategyTraits traits(std::vector<Precision> precisions, Set set) {
  StrategyTraits t;
  t.precisions = std::move(precisions);
  set(t);
  return t;
}

// Adding a strategy: its folder or files here, and one entry below with its
// traits. Mutable only through register_strategy().
std::vector<Entry>& registry() {
  using Bound = BenchModel::MoveBound;
  static std::vector<Entry> entries = {
      {"recompute", traits(float_and_double(), [](StrategyTraits& t) {
         t.plan.factorises_every_move = true;
         t.carries_updates = false;
       }),
       by_storage<Recompute>()},
      {"sm", traits(all_precisions(), [](StrategyTraits& t) {
         t.baseline = true;
         t.bench.move_bound = Bound::triad;
         t.bench.walks = {{16, ""}};
       }),
       by_storage<ShermanMorrison>()},
      {"delayed", traits(all_precisions(), [](StrategyTraits& t) {
         t.variants = {"incremental", "naive"};
         t.windowed = true;
         t.events = {flush_event()};
         t.plan.extra_bytes = window_bytes;
         t.rounding.factor = window_rounding;
         t.cycles = StrategyTraits::Cycles::window;
         t.guarded_against_baseline = true;
         t.bench.move_bound = Bound::gemm;
         t.bench.walks = delayed_bench_walks();
       }),
       make_delayed_update},
      {"splitting", traits(all_precisions(), [](StrategyTraits& t) {
         t.default_breakdown = kDefaultSplittingThreshold;
         t.events = {{kSplitEvent, "split updates so far", true}};
         t.cycles = StrategyTraits::Cycles::whole;
         t.bench.walks = {{16, ""}};
       }),
       make_splitting},
      {"qr-givens", traits(float_and_double(), [](StrategyTraits& t) {
         t.variants = {"delete-append", "rank1"};
         t.plan.matrices = 2;
         t.bench.walks = {{16, ""}};
       }),
       by_storage<QrGivens>()},
      {"qr-rank1", traits(float_and_double(), [](StrategyTraits& t) {
         t.variants = {"rank1"};
         t.plan.matrices = 2;
       }),
       by_storage<QrRank1>()},
      {"delayed-cuda", traits(all_precisions(), [](StrategyTraits& t) {
         t.variants = {"incremental"};
         t.windowed = true;
         t.events = {flush_event()};
         t.plan.extra_bytes = window_bytes;
         t.bench.walks = {{64, ""}, {256, ""}};
         t.needs_device = true;
       }),
       make_delayed_cuda},
      // An external kernel (slaterlab/kernel.h): its traits come from the library.
      {"kernel", external_kernel_traits(), make_external_kernel},
  };
  return entries;
}

const Entry* find(const std::string& name) {
  for (const auto& e : registry())
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> device_strategies() {
  std::vector<std::string> names;
  for (const auto& e : registry())
    if (e.traits.needs_device) names.push_back(e.name);
  return names;
}

}  // namespace

const StrategyTraits& strategy_traits(const std::string& name) {
  static const StrategyTraits unknown;
  const Entry* e = find(name);
  return e ? e->traits : unknown;
}

StrategyTraits strategy_traits(const std::string& name, const UpdaterOptions& options) {
  const StrategyTraits& traits = strategy_traits(name);
  return traits.declared ? traits.declared(options) : traits;
}

std::vector<std::pair<std::string, std::string>> strategy_provenance(const std::string& name,
                                                                     const UpdaterOptions& options) {
  const StrategyTraits& traits = strategy_traits(name);
  if (!traits.provenance) return {};
  return traits.provenance(options);
}

const std::string& library_strategy() {
  for (const auto& e : registry())
    if (e.traits.loads_library) return e.name;
  throw std::logic_error("no strategy loads external kernels");
}

const std::string& baseline_strategy() {
  for (const auto& e : registry())
    if (e.traits.baseline) return e.name;
  throw std::logic_error("no baseline strategy registered");
}

std::vector<std::string> registered_strategies() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

std::vector<std::string> known_strategies() {
  std::vector<std::string> names;
  for (const auto& e : registry())
    if (!strategy_unavailable(e.name)) names.push_back(e.name);
  return names;
}

std::optional<std::string> strategy_unavailable(const std::string& name) {
  return unavailable_on_cuda(name, device_strategies());
}

std::vector<Precision> supported_precisions(const std::string& name) {
  const Entry* e = find(name);
  return e ? e->traits.precisions : std::vector<Precision>{};
}

std::unique_ptr<DeterminantUpdater> make_updater(const std::string& name,
                                                 const UpdaterOptions& options) {
  const Entry* e = find(name);
  if (const auto why = strategy_unavailable(name)) throw std::invalid_argument(*why);
  if (!e) throw std::invalid_argument("unknown strategy '" + name + "'");
  const auto& precisions = e->traits.precisions;
  if (std::find(precisions.begin(), precisions.end(), options.precision) == precisions.end()) {
    throw std::invalid_argument("strategy '" + name + "' does not support precision '" +
                                std::string(to_string(options.precision)) + "'");
  }
  if (options.recompute_every < 0)
    throw std::invalid_argument("recompute_every must be >= 0");
  if (!(options.breakdown >= 0.0))
    throw std::invalid_argument("breakdown threshold must be >= 0");
  if (options.k < 1) throw std::invalid_argument("k must be >= 1");
  return e->build(options);
}

void register_strategy(std::string name, std::vector<Precision> precisions, UpdaterBuilder build,
                       StrategyTraits traits) {
  if (name.empty()) throw std::invalid_argument("register_strategy: empty name");
  if (precisions.empty() || !build)
    throw std::invalid_argument("register_strategy: '" + name + "' needs precisions and a builder");
  if (find(name)) throw std::invalid_argument("strategy '" + name + "' is already registered");
  for (std::size_t i = 0; i < traits.events.size(); ++i) {
    const std::string& event = traits.events[i].name;
    const bool word = !event.empty() && std::islower(static_cast<unsigned char>(event[0])) &&
                      std::all_of(event.begin(), event.end(), [](char c) {
                        return std::islower(static_cast<unsigned char>(c)) ||
                               std::isdigit(static_cast<unsigned char>(c)) || c == '_';
                      });
    if (!word)
      throw std::invalid_argument("strategy '" + name + "': event name '" + event +
                                  "' is not lower case letters, digits and '_' after a letter");
    for (std::size_t j = 0; j < i; ++j)
      if (traits.events[j].name == event)
        throw std::invalid_argument("strategy '" + name + "': event '" + event + "' is repeated");
  }
  traits.precisions = std::move(precisions);
  registry().push_back({std::move(name), std::move(traits), std::move(build)});
}

}  // namespace slaterlab
