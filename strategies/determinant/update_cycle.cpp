// The default update cycle: one ratio() + accept() per column replacement.
// Where an intermediate matrix is (nearly) singular the strategy sees a
// breakdown ratio, and its accept() recovers as it always does: by
// refactorising the exact updated matrix, which throws SingularMatrixError
// when that matrix is singular to the strategy's precision. That error
// leaves apply_cycle() as it leaves accept(); the caller re-establishes the
// strategy from a regular matrix (reset()).

#include "slaterlab/strategies/determinant/determinant_updater.hpp"

namespace slaterlab {

CycleRatio DeterminantUpdater::apply_cycle(const std::vector<ColumnUpdate>& updates) {
  CycleRatio cycle;
  cycle.value = 1.0;
  cycle.per_update.reserve(updates.size());
  for (const ColumnUpdate& update : updates) {
    const Ratio r = ratio(update.k, update.column);
    accept();
    cycle.per_update.push_back(r);
    cycle.value *= r.value;
    cycle.breakdown = cycle.breakdown || r.breakdown;
  }
  return cycle;
}

}  // namespace slaterlab
