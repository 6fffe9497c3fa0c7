#pragma once
// Sherman-Morrison: keeps the explicit inverse and applies each accepted
// column replacement as a rank-1 update (one GEMV + one GER, O(N^2)):
//   Ainv' = Ainv - (Ainv a_k' - e_k)(e_k^T Ainv) / rho.
// The ratio itself is a dot product of row k of Ainv with a_k' (O(N)).
//
// Ainv is stored TRANSPOSED (as delayed's), so that row k of Ainv, read by
// every ratio and every update, is a contiguous column instead of N entries
// N apart (one cache line per entry). The update is then
//   Ainv'^T = Ainv^T - (e_k^T Ainv)^T (Ainv a_k' - e_k)^T / rho,
// with Ainv a_k' = (Ainv^T)^T a_k' a transposed GEMV: the same flops and the
// same memory traffic as on Ainv itself.
//
// Precision: Storage is float or double. With Precision::mixed (Storage =
// float) the inversions run in double and the ratio's dot product is
// accumulated in double; the O(N^2) update stays in float.

#include "slaterlab/strategies/determinant/linalg.hpp"
#include "slaterlab/strategies/determinant/updater_base.hpp"

namespace slaterlab {

template <class Storage>
class ShermanMorrison final : public UpdaterBase {
 public:
  explicit ShermanMorrison(UpdaterOptions options);

  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  void reject() override;
  void flush() override {}
  LogDet log_det() const override { return log_det_; }
  MaintainedState maintained() const override;

 private:
  void refactorise();

  MatrixX<Storage> ainvt_;  // Ainv^T
  LogDet log_det_;
  double pending_ratio_ = 0.0;
  VectorX<Storage> new_column_;  // the pending column, rounded to Storage
  VectorX<Storage> x_;           // workspace: Ainv a_k' - e_k
  VectorX<Storage> row_;         // workspace: e_k^T Ainv
};

}  // namespace slaterlab
