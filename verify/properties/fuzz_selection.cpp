// What a fuzz run checks (contract in fuzz_selection.hpp).

#include "verify/properties/fuzz_selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "verify/inputs/suggest.hpp"

namespace slaterlab {
namespace {

std::string group_of(Precision p) { return p == Precision::double_ ? "double" : "float"; }

/// One configuration per precision each external kernel declares.
std::vector<PropertyConfig> kernel_configs(const FuzzArgs& args) {
  std::vector<PropertyConfig> configs;
  for (const std::string& library : args.kernels) {
    UpdaterOptions o;
    o.library = library;
    const StrategyTraits traits = strategy_traits(library_strategy(), o);  // loads it
    for (Precision p : traits.precisions) {
      o.precision = p;
      o.breakdown = traits.default_breakdown;
      configs.push_back({library_strategy(), o, make_updater(library_strategy(), o)->label()});
    }
  }
  return configs;
}

std::vector<PropertyConfig> select_configs(const FuzzArgs& args) {
  std::vector<PropertyConfig> all = args.kernels.empty() || !args.strategies.empty()
                                        ? property_configs()
                                        : std::vector<PropertyConfig>{};
  for (PropertyConfig& c : kernel_configs(args)) all.push_back(std::move(c));
  std::vector<Precision> precisions;
  for (const auto& p : args.precisions) precisions.push_back(parse_precision(p));
  std::vector<std::string> words = known_strategies();
  for (const auto& c : all) words.push_back(c.label);
  for (const auto& s : args.strategies) {
    if (std::find(words.begin(), words.end(), s) != words.end()) continue;
    const std::string close = closest_match(s, words);
    throw std::invalid_argument("unknown strategy '" + s + "'" +
                                (close.empty() ? suggestion_suffix(s, known_strategies())
                                               : " (did you mean '" + close + "'?)"));
  }
  std::vector<PropertyConfig> chosen;
  for (const auto& c : all) {
    const bool by_name =
        args.strategies.empty() || !c.options.library.empty() ||
        std::any_of(args.strategies.begin(), args.strategies.end(),
                    [&](const std::string& s) { return s == c.name || s == c.label; });
    const bool by_precision =
        precisions.empty() ||
        std::find(precisions.begin(), precisions.end(), c.options.precision) != precisions.end();
    if (by_name && by_precision) chosen.push_back(c);
  }
  if (chosen.empty()) {
    std::string supported;
    for (const auto& s : args.strategies) {
      std::string list;
      for (Precision p : supported_precisions(s))
        list += (list.empty() ? "" : ", ") + std::string(to_string(p));
      if (!list.empty()) supported += fmt::format("; '{}' supports {}", s, list);
    }
    throw std::invalid_argument(
        "no strategy configuration matches the --strategy and "
        "--precision given" +
        supported);
  }
  return chosen;
}

}  // namespace

FuzzSelection select_fuzz(const FuzzArgs& args) {
  FuzzSelection s;
  s.configs = select_configs(args);
  for (const auto& p : args.properties) s.properties.push_back(parse_property(p));
  if (s.properties.empty()) s.properties = all_properties();
  for (const auto& w : args.workloads) s.modes.push_back(parse_case_mode(w));
  if (s.modes.empty()) s.modes = {CaseMode::randsvd, CaseMode::adversarial, CaseMode::cycles};
  const bool any = std::any_of(s.properties.begin(), s.properties.end(), [&](Property p) {
    return std::any_of(s.modes.begin(), s.modes.end(), [&](CaseMode m) { return applies(p, m); });
  });
  if (!any) {
    throw std::invalid_argument(fmt::format(
        "no selected property is checked on the selected workloads ({} is checked on the cycles "
        "workload only, the others on randsvd and adversarial)",
        to_string(Property::cycle_ratio_matches_oracle)));
  }
  for (std::size_t i = 0; i < s.configs.size(); ++i) {
    const std::string name = group_of(s.configs[i].options.precision);
    auto it = std::find_if(s.groups.begin(), s.groups.end(),
                           [&](const FuzzGroup& g) { return g.name == name; });
    if (it == s.groups.end()) {
      s.groups.push_back({name, s.configs[i].options.precision, {}});
      it = s.groups.end() - 1;
    }
    it->configs.push_back(i);
  }
  // A stable order whatever the selection: double first.
  std::sort(s.groups.begin(), s.groups.end(),
            [](const FuzzGroup& a, const FuzzGroup& b) { return a.name < b.name; });
  return s;
}

}  // namespace slaterlab
