#include "slaterlab/strategies/determinant/sherman_morrison.hpp"

#include <cmath>

namespace slaterlab {

template <class Storage>
ShermanMorrison<Storage>::ShermanMorrison(UpdaterOptions options)
    : UpdaterBase(std::move(options)) {}

template <class Storage>
std::string ShermanMorrison<Storage>::label() const {
  return "sm-" + std::string(to_string(precision()));
}

template <class Storage>
void ShermanMorrison<Storage>::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  refactorise();
  mutable_counters().recomputes = 0;  // the initial factorisation is not a recompute
}

template <class Storage>
void ShermanMorrison<Storage>::refactorise() {
  Inversion<Storage> inv = invert_at<Storage>(precision(), matrix());
  ainvt_ = transposed<Storage>(inv.inverse);
  log_det_ = inv.log_det;
  note_recompute();
}

template <class Storage>
Ratio ShermanMorrison<Storage>::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  new_column_ = new_column.cast<Storage>();
  const double rho = sm_pivot(ainvt_, k, new_column_.data(), precision());
  pending_ratio_ = rho;
  return classify(rho);
}

template <class Storage>
void ShermanMorrison<Storage>::accept() {
  const Eigen::Index k = pending().k;
  const double rho = pending_ratio_;
  if (commit_pending()) {  // breakdown, or the periodic recompute is due
    refactorise();
    return;
  }
  sm_update<Storage>(ainvt_, k, new_column_.data(), Storage(1), rho, x_, row_);
  log_det_.log_abs += std::log(std::abs(rho));
  if (rho < 0) log_det_.sign = -log_det_.sign;
}

template <class Storage>
void ShermanMorrison<Storage>::reject() {
  drop_pending();
}

template <class Storage>
MaintainedState ShermanMorrison<Storage>::maintained() const {
  return {transposed<double>(ainvt_), std::nullopt};
}

template class ShermanMorrison<float>;
template class ShermanMorrison<double>;

}  // namespace slaterlab
