#pragma once
// The error model of update cycles: the bound on a cycle's ratio
// det(A_after) / det(A_before) for one strategy along a case of cycles
// (derivation: docs/properties.md, "Update cycles").
//
// - A strategy that completes the cycle (StrategyTraits::cycles: whole, or a
//   window holding the whole cycle) never forms an intermediate matrix:
//   e = 2 eps_m kappa + c 2 m N eps beta. One that goes update by update
//   multiplies m ratios: e = 3 m eps_m kappa, kappa over the intermediate
//   matrices too (+inf when one is exactly singular: no claim).
// - The bound is valid where e < 1/2; singular_allowed() says where a
//   SingularMatrixError is the documented outcome (a matrix the strategy
//   forms beyond the model).
// - applied() carries the cycle's updates; a refactorisation restarts the
//   model from the matrix after the cycle.

#include <Eigen/Core>

#include <cstddef>
#include <string>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/properties/error_model.hpp"
#include "verify/properties/oracle.hpp"

namespace slaterlab::properties {

/// Whether the strategy completes this cycle without forming its
/// intermediate matrices (StrategyTraits::cycles).
bool completes_cycle(const std::string& name, const UpdaterOptions& o, std::size_t updates,
                     const CycleStep& step);

/// The error model along a sequence of cycles (derivation: docs/properties.md).
class CycleModel {
 public:
  CycleModel(double eps, Eigen::Index n, const MatrixInfo& a0, double factor)
      : eps_(eps), n_(double(n)), factor_(factor) {
    restart(a0);
  }

  void restart(const MatrixInfo& a);

  /// kappa over the state's window and the matrices this cycle forms.
  double kappa(const CycleStep& s, bool completes) const;

  ErrorModel::Bound bound(const CycleStep& s, bool completes, int updates) const;

  /// Whether a SingularMatrixError is the documented outcome of the cycle.
  bool singular_allowed(const CycleStep& s, bool completes) const;

  /// `refactorised`: the strategy refactorised during the cycle, at a
  /// matrix the model does not know (for update-at-a-time cycles possibly
  /// an intermediate one, whose conditioning then stays in the window).
  void applied(const CycleStep& s, bool completes, int updates, bool refactorised);

 private:
  double eps_;
  double n_;
  double factor_;
  int m_ = 0;
  double growth_ = 1;
  double kappa_ = 1;
};

}  // namespace slaterlab::properties
