#pragma once
// Direct baseline: LU-factorises (LAPACK getrf) the candidate matrix for
// every ratio, rho = det(A') / det(A) from the two log-determinants.
// O(N^3) per proposal; no state beyond the current matrix and its log-det,
// so it cannot drift. Its maintained inverse is formed on request, from a
// fresh LU of the current matrix.

#include "slaterlab/strategies/determinant/linalg.hpp"
#include "slaterlab/strategies/determinant/updater_base.hpp"

namespace slaterlab {

template <class Storage>
class Recompute final : public UpdaterBase {
 public:
  explicit Recompute(UpdaterOptions options);

  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  void reject() override;
  void flush() override {}
  LogDet log_det() const override { return log_det_; }
  MaintainedState maintained() const override;

 private:
  LogDet log_det_;
  LogDet candidate_;  // log-det of the pending candidate matrix
};

}  // namespace slaterlab
