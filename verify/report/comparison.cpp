#include "verify/report/comparison.hpp"

#include <algorithm>
#include <utility>

namespace slaterlab {

std::string Comparison::where() const {
  if (experiment.empty()) return "baseline";
  return strategy.empty() ? experiment : experiment + " / " + strategy;
}

std::size_t RegressReport::failures() const {
  return std::size_t(std::count_if(comparisons.begin(), comparisons.end(),
                                   [](const Comparison& c) { return !c.passed; }));
}

Comparison structural(const std::string& experiment, const std::string& strategy,
                      const std::string& metric, bool passed, std::string detail) {
  Comparison c;
  c.experiment = experiment;
  c.strategy = strategy;
  c.metric = metric;
  c.kind = ComparisonKind::structure;
  c.passed = passed;
  c.detail = std::move(detail);
  return c;
}

}  // namespace slaterlab
