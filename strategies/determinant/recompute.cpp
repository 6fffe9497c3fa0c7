#include "slaterlab/strategies/determinant/recompute.hpp"

#include <cmath>
#include <limits>

namespace slaterlab {

template <class Storage>
Recompute<Storage>::Recompute(UpdaterOptions options) : UpdaterBase(std::move(options)) {}

template <class Storage>
std::string Recompute<Storage>::label() const {
  return "recompute-" + std::string(to_string(precision()));
}

template <class Storage>
void Recompute<Storage>::reset(const Eigen::MatrixXd& a) {
  begin_reset(a);
  log_det_ = lu_factor<Storage>(a.cast<Storage>()).log_det;
}

template <class Storage>
Ratio Recompute<Storage>::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  begin_proposal(k, new_column);
  MatrixX<Storage> candidate = matrix().template cast<Storage>();
  candidate.col(k) = new_column.cast<Storage>();
  try {
    candidate_ = lu_factor<Storage>(std::move(candidate)).log_det;
  } catch (const SingularMatrixError&) {
    candidate_ = {-std::numeric_limits<double>::infinity(), 0};
    return classify(0.0);
  }
  const double rho =
      double(candidate_.sign * log_det_.sign) * std::exp(candidate_.log_abs - log_det_.log_abs);
  return classify(rho);
}

template <class Storage>
void Recompute<Storage>::accept() {
  commit_pending();  // nothing to refactorise: every ratio is already fresh
  if (candidate_.sign == 0) throw SingularMatrixError("accepted move makes the matrix singular");
  log_det_ = candidate_;
}

template <class Storage>
void Recompute<Storage>::reject() {
  drop_pending();
}

template <class Storage>
MaintainedState Recompute<Storage>::maintained() const {
  const auto inv = invert<Storage, Storage>(matrix());
  return {inv.inverse.template cast<double>(), std::nullopt};
}

template class Recompute<float>;
template class Recompute<double>;

}  // namespace slaterlab
