#include <algorithm>
#include <functional>
#include <stdexcept>

#include "slaterlab/strategies/cuda/device.hpp"
#include "slaterlab/strategies/determinant/cuda/delayed_cuda.hpp"
#include "slaterlab/strategies/determinant/delayed_update.hpp"
#include "slaterlab/strategies/determinant/qr_givens.hpp"
#include "slaterlab/strategies/determinant/recompute.hpp"
#include "slaterlab/strategies/determinant/sherman_morrison.hpp"
#include "slaterlab/strategies/determinant/splitting.hpp"
#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab {
namespace {

using Builder = std::function<std::unique_ptr<DeterminantUpdater>(const UpdaterOptions&)>;

struct Entry {
  std::string name;
  std::vector<Precision> precisions;
  Builder build;
};

/// Builds Strategy<float> for float and mixed storage, Strategy<double> otherwise.
template <template <class> class Strategy>
Builder by_storage() {
  return [](const UpdaterOptions& o) -> std::unique_ptr<DeterminantUpdater> {
    if (o.precision == Precision::double_) return std::make_unique<Strategy<double>>(o);
    return std::make_unique<Strategy<float>>(o);
  };
}

// Mutable only through register_strategy().
std::vector<Entry>& registry() {
  static std::vector<Entry> entries = {
      {"recompute", {Precision::single, Precision::double_}, by_storage<Recompute>()},
      {"sm", {Precision::single, Precision::double_, Precision::mixed},
       by_storage<ShermanMorrison>()},
      // options.variant: "incremental" (default) or "naive"; options.k is the delay.
      {"delayed", {Precision::single, Precision::double_, Precision::mixed},
       make_delayed_update},
      // Threshold: options.breakdown, 1e-3 when left at the generic default.
      {"splitting", {Precision::single, Precision::double_, Precision::mixed}, make_splitting},
      {"qr-givens", {Precision::single, Precision::double_}, by_storage<QrGivens>()},
      {"qr-rank1", {Precision::single, Precision::double_}, by_storage<QrRank1>()},
  };
  // Strategies that run on a CUDA device are known only where one is usable
  // (device_strategies() names them otherwise).
  static const bool with_device = [] {
    if (!cuda_unavailable()) {
      entries.push_back({"delayed-cuda", {Precision::single, Precision::double_, Precision::mixed},
                         make_delayed_cuda});
    }
    return true;
  }();
  (void)with_device;
  return entries;
}

// The strategies that need a CUDA device.
const std::vector<std::string>& device_strategies() {
  static const std::vector<std::string> names = {"delayed-cuda"};
  return names;
}

const Entry* find(const std::string& name) {
  for (const auto& e : registry())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace

std::vector<std::string> known_strategies() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

std::optional<std::string> strategy_unavailable(const std::string& name) {
  return unavailable_on_cuda(name, device_strategies());
}

std::vector<Precision> supported_precisions(const std::string& name) {
  const Entry* e = find(name);
  return e ? e->precisions : std::vector<Precision>{};
}

std::unique_ptr<DeterminantUpdater> make_updater(const std::string& name,
                                                 const UpdaterOptions& options) {
  const Entry* e = find(name);
  if (const auto why = strategy_unavailable(name)) throw std::invalid_argument(*why);
  if (!e) throw std::invalid_argument("unknown strategy '" + name + "'");
  if (std::find(e->precisions.begin(), e->precisions.end(), options.precision) ==
      e->precisions.end()) {
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

void register_strategy(std::string name, std::vector<Precision> precisions, UpdaterBuilder build) {
  if (name.empty()) throw std::invalid_argument("register_strategy: empty name");
  if (precisions.empty() || !build)
    throw std::invalid_argument("register_strategy: '" + name + "' needs precisions and a builder");
  if (find(name)) throw std::invalid_argument("strategy '" + name + "' is already registered");
  registry().push_back({std::move(name), std::move(precisions), std::move(build)});
}

}  // namespace slaterlab
