#pragma once
// A strategy that forwards every call to a wrapped one. Tests derive from it
// to plant a defect (a perturbed ratio, a perturbed column) in an otherwise
// correct strategy, overriding only the call they break.

#include <memory>
#include <utility>

#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab::testing {

class ForwardingUpdater : public DeterminantUpdater {
 public:
  explicit ForwardingUpdater(std::unique_ptr<DeterminantUpdater> inner) : inner_(std::move(inner)) {}

  Eigen::Index size() const override { return inner_->size(); }
  std::string label() const override { return inner_->label(); }
  Precision precision() const override { return inner_->precision(); }
  void reset(const Eigen::MatrixXd& a) override { inner_->reset(a); }
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& column) override {
    return inner_->ratio(k, column);
  }
  void accept() override { inner_->accept(); }
  void reject() override { inner_->reject(); }
  void flush() override { inner_->flush(); }
  LogDet log_det() const override { return inner_->log_det(); }
  MaintainedState maintained() const override { return inner_->maintained(); }
  UpdaterCounters counters() const override { return inner_->counters(); }

 protected:
  DeterminantUpdater& inner() { return *inner_; }

 private:
  std::unique_ptr<DeterminantUpdater> inner_;
};

}  // namespace slaterlab::testing
