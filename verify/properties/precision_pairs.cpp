// Float against double (contract in precision_pairs.hpp; the window's
// derivation in docs/properties.md).

#include "verify/properties/precision_pairs.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "verify/properties/check_steps.hpp"
#include "verify/properties/oracle.hpp"

namespace slaterlab {

std::ostream& operator<<(std::ostream& os, const PrecisionPair& p) {
  return os << p.low.label << " vs " << p.high.label;
}

std::vector<PrecisionPair> precision_pairs() {
  const std::vector<PropertyConfig> configs = property_configs();
  std::vector<PrecisionPair> pairs;
  for (const PropertyConfig& low : configs) {
    if (low.options.precision == Precision::double_) continue;
    for (const PropertyConfig& high : configs) {
      if (high.options.precision == Precision::double_ && high.name == low.name &&
          high.options.k == low.options.k && high.options.variant == low.options.variant) {
        pairs.push_back({low, high});
      }
    }
  }
  return pairs;
}

namespace {

double max_ratio_error(const PropertyConfig& cfg, const Case& c, const CaseTrace& t) {
  auto up = properties::make_strategy(cfg.name, cfg.options, 0);
  up->reset(c.initial);
  double worst = 0;
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const Ratio r = up->ratio(c.moves[i].electron, c.moves[i].column);
    // Well-conditioned proposals only (the ones a Metropolis walk accepts):
    // a ratio near a nodal crossing has kappa_rho ~ 1/|rho| and would make
    // the maximum a statement about one proposal rather than the precision.
    const properties::LongDouble rho = std::abs(t.steps[i].rho);
    if (rho >= 1.0L / 3 && rho <= 3)
      worst = std::max(worst, properties::rel_error(r.value, t.steps[i].rho));
    c.moves[i].accept ? up->accept() : up->reject();
  }
  return worst;
}

}  // namespace

PrecisionSample precision_sample(const PrecisionPair& pair, const Case& c) {
  const auto t = trace_case(c);
  PrecisionSample s;
  s.low = max_ratio_error(pair.low, c, *t);
  s.high = max_ratio_error(pair.high, c, *t);
  // The oracle's own error (~2^-63) is the floor of what can be measured.
  s.ratio = s.low / std::max(s.high, 1e3 * properties::kEpsLongDouble);
  return s;
}

double precision_target(const PrecisionPair& pair) {
  return storage_epsilon(pair.low.options.precision) / storage_epsilon(pair.high.options.precision);
}

}  // namespace slaterlab
