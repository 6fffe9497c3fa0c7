// The strategy configurations the properties run over (contract in
// configs.hpp).

#include "verify/properties/configs.hpp"

#include <ostream>
#include <stdexcept>

namespace slaterlab {

std::ostream& operator<<(std::ostream& os, const PropertyConfig& c) { return os << c.label; }

std::vector<PropertyConfig> property_configs() {
  static const int kWindows[] = {16, 1, 3};  // the default first
  std::vector<PropertyConfig> configs;
  auto add = [&](const std::string& name, Precision p, int k, const std::string& variant) {
    UpdaterOptions o;
    o.precision = p;
    o.k = k;
    o.variant = variant;
    std::string label;
    try {
      label = make_updater(name, o)->label();
    } catch (const std::invalid_argument&) {
      return;  // a variant or K this strategy does not have
    }
    for (const PropertyConfig& c : configs)
      if (c.label == label) return;
    configs.push_back({name, o, label});
  };
  for (const std::string& name : known_strategies())
    for (Precision p : supported_precisions(name)) add(name, p, kWindows[0], "");
  for (const std::string& name : known_strategies()) {
    const StrategyTraits& traits = strategy_traits(name);
    std::vector<std::string> variants = {""};
    variants.insert(variants.end(), traits.variants.begin(), traits.variants.end());
    for (Precision p : supported_precisions(name))
      for (int k : kWindows) {
        if (!traits.windowed && k != kWindows[0]) continue;
        for (const std::string& variant : variants) add(name, p, k, variant);
      }
  }
  return configs;
}

}  // namespace slaterlab
