#include "verify/inputs/strategy_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "verify/inputs/toml_access.hpp"

namespace slaterlab {
namespace {

using namespace toml_access;

/// `library` (relative to the study file) and `options` (a table of
/// scalars, passed through as text) of a strategy that loads a library.
void parse_library(const toml::table& t, const std::string& name, const std::string& source,
                   UpdaterOptions& o, const std::string& where) {
  const bool loads = strategy_traits(name).loads_library;
  if (!loads) {
    for (const char* key : {"library", "options"})
      if (t.contains(key)) fail(where, fmt::format("'{}' applies only to external kernels", key));
    return;
  }
  std::filesystem::path library = get_string(t, "library", "", where);
  if (library.empty()) fail(where, "missing 'library' (the kernel's shared library)");
  if (library.is_relative()) library = std::filesystem::path(source).parent_path() / library;
  o.library = library.lexically_normal().string();
  const toml::node* options = t.get("options");
  if (!options) return;
  if (!options->is_table()) fail(where, "'options' must be a table of key = value");
  for (auto&& [key, value] : *options->as_table()) {
    const std::string k(key.str());
    if (value.is_string()) {
      o.kernel_options.emplace_back(k, value.value<std::string>().value_or(""));
    } else if (value.is_table() || value.is_array()) {
      fail(where, fmt::format("'options.{}' must be a number, a string or a boolean", k));
    } else {
      std::ostringstream text;
      value.visit([&](auto&& scalar) { text << scalar; });
      o.kernel_options.emplace_back(k, text.str());
    }
  }
}

}  // namespace

StrategyConfig parse_strategy(const toml::table& t, const std::string& source,
                              const std::string& where) {
  StrategyConfig s;
  s.name = get_string(t, "name", "", where);
  if (s.name.empty()) fail(where, "missing 'name' (one of the strategies)");
  if (const auto why = strategy_unavailable(s.name)) fail(where, *why);
  const auto known = known_strategies();
  if (std::find(known.begin(), known.end(), s.name) == known.end()) {
    fail(where, "unknown strategy '" + s.name + "'" + suggestion_suffix(s.name, known));
  }
  UpdaterOptions& o = s.options;
  try {
    o.precision = parse_precision(get_string(t, "precision", "double", where));
  } catch (const std::invalid_argument& error) {
    fail(where, error.what());
  }
  parse_library(t, s.name, source, o, where);
  o.recompute_every = get_int<int>(t, "recompute_every", o.recompute_every, where, {0});
  double default_breakdown = 0;
  try {
    default_breakdown = strategy_traits(s.name, o).default_breakdown;
  } catch (const std::invalid_argument& error) {
    fail(where, error.what());
  }
  o.breakdown = get_double(t, "breakdown", default_breakdown, where, kNonNegative);
  o.k = get_int<int>(t, "k", o.k, where, {1});
  o.variant = get_string(t, "variant", o.variant, where);
  std::string default_label;
  try {
    default_label = make_updater(s.name, o)->label();
  } catch (const std::invalid_argument& error) {
    fail(where, error.what());
  }
  s.label = get_name(t, "label", default_label, where);
  return s;
}

}  // namespace slaterlab
