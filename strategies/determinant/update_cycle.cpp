#include "slaterlab/strategies/determinant/determinant_updater.hpp"

namespace slaterlab {

CycleRatio DeterminantUpdater::apply_cycle(const std::vector<ColumnUpdate>& updates) {
  CycleRatio out;
  out.value = 1.0;
  for (const ColumnUpdate& u : updates) {
    const Ratio r = ratio(u.k, u.column);
    accept();
    out.per_update.push_back(r);
    out.value *= r.value;
    out.breakdown = out.breakdown || r.breakdown;
  }
  return out;
}

}  // namespace slaterlab
