// The error model of update cycles (contract in cycle_model.hpp, derivation
// in docs/properties.md).

#include "verify/properties/cycle_model.hpp"

#include <algorithm>
#include <cmath>

namespace slaterlab::properties {

bool completes_cycle(const std::string& name, const UpdaterOptions& o, std::size_t updates,
                     const CycleStep& step) {
  switch (strategy_traits(name, o).cycles) {
    case StrategyTraits::Cycles::whole: return true;
    case StrategyTraits::Cycles::window:
      return updates == step.columns.size() && updates <= std::size_t(std::max(o.k, 0));
    case StrategyTraits::Cycles::per_update: break;
  }
  return false;
}

void CycleModel::restart(const MatrixInfo& a) {
  m_ = 0;
  growth_ = std::max(1.0, a.lu_growth / ErrorModel::kGrowthCovered);
  kappa_ = kappa_f(a);
}

double CycleModel::kappa(const CycleStep& s, bool completes) const {
  return std::max({kappa_, s.kappa_before, s.kappa_after, completes ? 0.0 : s.kappa_path});
}

ErrorModel::Bound CycleModel::bound(const CycleStep& s, bool completes, int updates) const {
  const double eps_m = kC * (growth_ + factor_ * (m_ + updates)) * n_ * eps_;
  ErrorModel::Bound b;
  b.kappa = kappa(s, completes);
  const double e = completes ? 2 * eps_m * b.kappa + kC * 2 * updates * n_ * eps_ * s.beta
                             : 3 * updates * eps_m * b.kappa;
  b.valid = std::isfinite(e) && e < 0.5;
  b.rel = e / (1 - e) + kC * n_ * kEpsLongDouble * (b.kappa + s.beta);
  return b;
}

bool CycleModel::singular_allowed(const CycleStep& s, bool completes) const {
  const double kappa = completes ? s.kappa_after : std::max(s.kappa_after, s.kappa_path);
  return !(kC * n_ * eps_ * kappa < 0.5);
}

void CycleModel::applied(const CycleStep& s, bool completes, int updates, bool refactorised) {
  if (refactorised) {
    restart(s.after);
    if (!completes) kappa_ = std::max(kappa_, s.kappa_path);
    return;
  }
  m_ += updates;
  kappa_ = kappa(s, completes);
}

}  // namespace slaterlab::properties
