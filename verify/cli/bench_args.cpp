#include "verify/cli/bench_args.hpp"

#include <algorithm>
#include <exception>
#include <sstream>
#include <stdexcept>

#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab::bench_detail {

BenchOptions& bench_options() {
  static BenchOptions options;
  return options;
}

/// Every combination of a kernel's --kernel-option values, one value per
/// key, in the order given (a single empty set without the option).
std::vector<std::vector<std::pair<std::string, std::string>>> kernel_option_sets(
    const BenchOptions::Kernel& kernel) {
  std::vector<std::vector<std::pair<std::string, std::string>>> sets(1);
  for (const auto& [key, values] : kernel.options) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& set : sets)
      for (const std::string& value : values) {
        next.push_back(set);
        next.back().emplace_back(key, value);
      }
    sets = std::move(next);
  }
  return sets;
}

namespace {

/// Whether every --kernel takes every combination of its --kernel-option
/// values at every precision it declares (each checked by the kernel's own
/// create(), before any case runs); false with the kernel's message
/// otherwise, a kernel that crashes or hangs in create() included.
bool kernel_options_valid(const BenchOptions& options, std::string& error) {
  for (const BenchOptions::Kernel& kernel : options.kernels) {
    UpdaterOptions o;
    o.library = kernel.library;
    for (const Precision p : strategy_traits(library_strategy(), o).precisions) {
      o.precision = p;
      for (const auto& set : kernel_option_sets(kernel)) {
        o.kernel_options = set;
        try {
          make_updater(library_strategy(), o);
        } catch (const std::exception& bad) {
          return error = bad.what(), false;
        }
      }
    }
  }
  return true;
}

/// One --kernel-option=KEY=V1[,V2...] for the --kernel before it; false
/// with a message when malformed, when that kernel has KEY already, or when
/// a value repeats (two cases of one name).
bool take_kernel_option(const std::string& text, BenchOptions& options, std::string& error) {
  if (options.kernels.empty())
    return error = "--kernel-option '" + text + "' needs a --kernel before it", false;
  const auto split = text.find('=');
  std::vector<std::string> values;
  if (split != std::string::npos) {
    std::stringstream list(text.substr(split + 1));
    for (std::string item; std::getline(list, item, ',');) values.push_back(item);
  }
  // getline drops a last, empty item: "k=2," is caught by its comma.
  const bool empty_value = values.empty() || text.back() == ',' ||
                           std::find(values.begin(), values.end(), "") != values.end();
  if (split == 0 || split == std::string::npos || empty_value)
    return error = "--kernel-option takes KEY=VALUE[,VALUE...], got '" + text + "'", false;
  const std::string key = text.substr(0, split);
  if (text.find('/') != std::string::npos)
    return error = "--kernel-option '" + text + "': no '/' in a key or value (it names the case)",
           false;
  auto& kernel_options = options.kernels.back().options;
  for (const auto& [known, unused] : kernel_options)
    if (known == key) return error = "--kernel-option: '" + key + "' given twice for one --kernel", false;
  std::vector<std::string> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return error = "--kernel-option: a value of '" + key + "' repeats in '" + text + "'", false;
  kernel_options.emplace_back(key, std::move(values));
  return true;
}

}  // namespace

bool take_bench_options(int& argc, char** argv, BenchOptions& options, std::string& error) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string name = arg, value;
    const auto eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    if (name == "--benchmark_format" || name == "--benchmark_out_format") {
      if (value != "console" && value != "json" && value != "csv")
        return error = name + " takes console, json or csv, got '" + value + "'", false;
      (name == "--benchmark_format" ? options.display_format : options.file_format) = value;
    }
    if (name == "--benchmark_out" && !value.empty()) options.file_out = true;
    if (name != "--n" && name != "--seconds" && name != "--kernel" && name != "--kernel-option") {
      argv[out++] = argv[i];
      continue;
    }
    if (eq == std::string::npos) {
      if (i + 1 >= argc) return error = name + " needs a value", false;
      value = argv[++i];
    }
    if (name == "--kernel") {
      UpdaterOptions o;
      o.library = value;
      try {
        strategy_traits(library_strategy(), o);  // loads and validates the library
      } catch (const std::invalid_argument& bad) {
        return error = bad.what(), false;
      }
      options.kernels.push_back({value, {}});
      continue;
    }
    if (name == "--kernel-option") {
      if (!take_kernel_option(value, options, error)) return false;
      continue;
    }
    try {
      if (name == "--seconds") {
        std::size_t used = 0;
        options.seconds = std::stod(value, &used);
        if (used != value.size() || !(options.seconds > 0) || options.seconds > 60)
          throw std::invalid_argument("range");
      } else {
        options.sizes.clear();
        std::stringstream list(value);
        for (std::string item; std::getline(list, item, ',');) {
          std::size_t used = 0;
          const long long n = std::stoll(item, &used);
          if (used != item.size() || n < 2 || n > 16384) throw std::invalid_argument("range");
          options.sizes.push_back(Eigen::Index(n));
        }
        if (options.sizes.empty()) throw std::invalid_argument("empty");
      }
    } catch (const std::exception&) {
      error = name == "--n" ? "--n takes sizes 2..16384 separated by commas, got '" + value + "'"
                            : "--seconds takes a number in (0, 60], got '" + value + "'";
      return false;
    }
  }
  argc = out;
  return kernel_options_valid(options, error);
}

}  // namespace slaterlab::bench_detail
