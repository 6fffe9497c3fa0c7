// A strategy of one's own (toys.hpp): Sherman-Morrison on a double inverse,
//   Ainv' = Ainv - (Ainv a_k' - e_k)(e_k^T Ainv) / rho,  rho = e_k^T Ainv a_k',
// whose inverse is refreshed from the exact matrix every options.k accepted
// moves. What the verification code needs to know of it is declared once,
// in its traits at registration: the core (double only; a named event,
// "refreshes", which the results file stores without knowing the strategy)
// and the hooks of the consumers it differs for: the plan (an LU workspace
// besides the inverse) and bench (walked at k = 16). Its rounding is
// Sherman-Morrison's between refreshes, so the rounding model keeps its
// default factor 1.

#include <cmath>
#include <string>

#include "slaterlab/strategies/determinant/linalg.hpp"
#include "slaterlab/strategies/determinant/updater_base.hpp"
#include "tests/extending/toys.hpp"

namespace slaterlab::toys {
namespace {

constexpr const char* kRefreshEvent = "refreshes";

class ToyRefresh final : public UpdaterBase {
 public:
  explicit ToyRefresh(UpdaterOptions options) : UpdaterBase(std::move(options)) {}

  std::string label() const override {
    return "toy-refresh-" + std::to_string(options().k) + "-double";
  }

  void reset(const Eigen::MatrixXd& a) override {
    begin_reset(a);  // clears the counters
    factorise();
  }

  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override {
    const Proposal& p = begin_proposal(k, new_column);
    rho_ = inverse_.row(p.k).dot(p.column);
    return classify(rho_);
  }

  void accept() override {
    const Eigen::Index k = pending().k;
    x_.noalias() = inverse_ * pending().column;
    if (commit_pending()) {  // a breakdown, or the study's periodic recompute
      factorise();
      note_recompute();
      return;
    }
    x_(k) -= 1.0;
    row_ = inverse_.row(k);
    inverse_.noalias() -= (x_ / rho_) * row_;
    log_det_.log_abs += std::log(std::abs(rho_));
    if (rho_ < 0) log_det_.sign = -log_det_.sign;
    if (++since_refresh_ == options().k) {
      factorise();
      mutable_counters().count(kRefreshEvent);
    }
  }

  void reject() override { drop_pending(); }
  void flush() override {}
  LogDet log_det() const override { return log_det_; }
  MaintainedState maintained() const override { return {inverse_, std::nullopt}; }

 private:
  /// The inverse and log|det| of the exact matrix (SingularMatrixError
  /// when it is singular to double precision).
  void factorise() {
    Inversion<double> inversion = invert_at<double>(Precision::double_, matrix());
    inverse_ = std::move(inversion.inverse);
    log_det_ = inversion.log_det;
    since_refresh_ = 0;
  }

  Eigen::MatrixXd inverse_;
  LogDet log_det_;
  double rho_ = 0.0;
  int since_refresh_ = 0;
  Eigen::VectorXd x_;
  Eigen::RowVectorXd row_;
};

}  // namespace

void register_toy_strategy() {
  StrategyTraits traits;
  traits.events = {{kRefreshEvent, "inverse refreshed from the exact matrix so far"}};
  traits.plan.matrices = 2;  // the inverse, and the LU of a refresh
  traits.bench.walks = {{16, ""}};
  register_strategy(
      "toy-refresh", {Precision::double_},
      [](const UpdaterOptions& options) { return std::make_unique<ToyRefresh>(options); }, traits);
}

}  // namespace slaterlab::toys
