// Input validation, digit dispatch and the MpReference protocol. Free of
// multiprecision types: the numerics are in mp_kernels.cpp.

#include "slaterlab/reference/mp.hpp"

// mp.hpp is free of multiprecision types: the templates live in
// mp_kernels.cpp, instantiated once per digit count.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "slaterlab/reference/mp_engine.hpp"

namespace slaterlab::reference {
namespace {

void check_square(const Eigen::MatrixXd& a) {
  if (a.rows() != a.cols() || a.rows() == 0) {
    throw std::invalid_argument("reference: expected a non-empty square matrix, got " +
                                std::to_string(a.rows()) + " x " + std::to_string(a.cols()));
  }
}

void check_finite(const Eigen::MatrixXd& a) {
  for (Eigen::Index j = 0; j < a.cols(); ++j) {
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      if (!std::isfinite(a(i, j))) {
        throw SingularMatrixError("reference: matrix entry (" + std::to_string(i) + ", " +
                                  std::to_string(j) + ") is not finite");
      }
    }
  }
}

void check_matrix(const Eigen::MatrixXd& a) {
  check_square(a);
  check_finite(a);
}

template <class Error>
void check_vector(const Eigen::VectorXd& v, Eigen::Index n, const char* name) {
  if (v.size() != n) {
    throw Error(std::string("reference: ") + name + " has length " + std::to_string(v.size()) +
                ", expected " + std::to_string(n));
  }
  if (!v.allFinite()) throw Error(std::string("reference: ") + name + " is not finite");
}

template <class Error>
void check_index(Eigen::Index k, Eigen::Index n) {
  if (k < 0 || k >= n) {
    throw Error("reference: column index " + std::to_string(k) + " is out of range [0, " +
                std::to_string(n) + ")");
  }
}

/// Calls f.template operator()<Digits>() for the runtime digit count.
template <class F>
decltype(auto) dispatch(int digits, F&& f) {
  validate_digits(digits);
  if (digits == 50) return std::forward<F>(f).template operator()<50>();
  return std::forward<F>(f).template operator()<100>();
}

}  // namespace

void validate_digits(int digits) {
  if (digits != 50 && digits != 100) {
    throw std::invalid_argument("reference: mp digits must be 50 or 100, got " +
                                std::to_string(digits));
  }
}

double mp_epsilon(int digits) {
  return dispatch(digits, []<int D>() { return detail::MpKernels<D>::epsilon(); });
}

MpLogDet mp_log_det(const Eigen::MatrixXd& a, int digits) {
  validate_digits(digits);
  check_matrix(a);
  return dispatch(digits, [&]<int D>() { return detail::MpKernels<D>::log_det(a); });
}

Eigen::MatrixXd mp_inverse(const Eigen::MatrixXd& a, int digits) {
  validate_digits(digits);
  check_matrix(a);
  return dispatch(digits, [&]<int D>() { return detail::MpKernels<D>::inverse(a); });
}

Eigen::VectorXd mp_solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, int digits) {
  validate_digits(digits);
  check_matrix(a);
  check_vector<std::invalid_argument>(b, a.rows(), "right-hand side");
  return dispatch(digits, [&]<int D>() { return detail::MpKernels<D>::solve(a, b); });
}

double mp_ratio(const Eigen::MatrixXd& a, Eigen::Index k, const Eigen::VectorXd& new_column,
                int digits) {
  validate_digits(digits);
  check_matrix(a);
  check_index<std::invalid_argument>(k, a.rows());
  check_vector<std::invalid_argument>(new_column, a.rows(), "new column");
  return dispatch(digits, [&]<int D>() { return detail::MpKernels<D>::ratio(a, k, new_column); });
}

// --- MpReference -----------------------------------------------------------

MpReference::MpReference(int digits, int recompute_every)
    : digits_(digits), recompute_every_(recompute_every) {
  validate_digits(digits);
  safeguard_conditioning_ = 1.0 / std::sqrt(mp_epsilon(digits));
  if (recompute_every < 0) {
    throw std::invalid_argument("reference: recompute_every must be >= 0, got " +
                                std::to_string(recompute_every));
  }
  engine_ = dispatch(digits, []<int D>() { return detail::MpKernels<D>::make_engine(); });
}

MpReference::~MpReference() = default;
MpReference::MpReference(MpReference&&) noexcept = default;
MpReference& MpReference::operator=(MpReference&&) noexcept = default;

void MpReference::require_ready(const char* what) const {
  if (!ready_) {
    throw std::logic_error(std::string("MpReference::") + what +
                           ": no valid state; call reset() first");
  }
}

void MpReference::reset(const Eigen::MatrixXd& a) {
  ready_ = false;
  pending_ = false;
  check_matrix(a);
  engine_->factorize(a);
  a_ = a;
  a_frobenius_ = a_.stableNorm();  // no overflow for huge entries
  accepted_since_recompute_ = 0;
  recomputes_ = 0;
  singular_ = false;
  ready_ = true;
}

void MpReference::assign(const Eigen::MatrixXd& a) {
  check_square(a);
  try {
    reset(a);
  } catch (const SingularMatrixError&) {
    a_ = a;
    a_frobenius_ = a_.stableNorm();
    accepted_since_recompute_ = 0;
    recomputes_ = 0;
    singular_ = true;
    ready_ = true;
  }
}

RatioInfo MpReference::ratio(Eigen::Index k, const Eigen::VectorXd& new_column) {
  require_ready("ratio");
  if (pending_) {
    throw std::logic_error("MpReference::ratio: a proposal is pending; accept() or reject() it");
  }
  check_index<std::logic_error>(k, size());
  check_vector<std::logic_error>(new_column, size(), "new column");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const RatioInfo info =
      singular_ ? RatioInfo{nan, nan, false} : engine_->propose(k, new_column, a_frobenius_);
  pending_singular_ = info.defined && info.value == 0.0;
  pending_ = true;
  pending_k_ = k;
  pending_column_ = new_column;
  pending_conditioning_ = info.conditioning;
  return info;
}

void MpReference::accept() {
  require_ready("accept");
  if (!pending_) throw std::logic_error("MpReference::accept: no pending proposal");
  pending_ = false;
  a_.col(pending_k_) = pending_column_;
  a_frobenius_ = a_.stableNorm();
  if (singular_) {  // no inverse to update: try the exact matrix afresh
    refactor_or_singular();
    return;
  }
  if (pending_singular_) {
    singular_ = true;
    return;
  }
  engine_->commit(pending_k_);
  ++accepted_since_recompute_;
  // An update through a ratio conditioned beyond 1/sqrt(eps) may have lost
  // half the mp digits: refactorise so the reference stays one.
  const bool safeguard = !(pending_conditioning_ < safeguard_conditioning_);
  const bool periodic = recompute_every_ > 0 && accepted_since_recompute_ >= recompute_every_;
  if (safeguard || periodic) refactor_or_singular();
}

void MpReference::refactor_or_singular() {
  try {
    refactor();
    singular_ = false;
  } catch (const SingularMatrixError&) {
    singular_ = true;
  }
}

CycleInfo MpReference::apply_cycle(const std::vector<Eigen::Index>& k,
                                   const Eigen::MatrixXd& columns) {
  require_ready("apply_cycle");
  if (pending_) throw std::logic_error("MpReference::apply_cycle: a proposal is pending");
  if (Eigen::Index(k.size()) != columns.cols()) {
    throw std::logic_error("MpReference::apply_cycle: " + std::to_string(k.size()) +
                           " indices for " + std::to_string(columns.cols()) + " columns");
  }
  // The block ratio over distinct columns, the last write to each winning.
  std::vector<Eigen::Index> distinct;
  std::vector<Eigen::Index> source;
  for (std::size_t i = k.size(); i-- > 0;) {
    check_index<std::logic_error>(k[i], size());
    check_vector<std::logic_error>(columns.col(Eigen::Index(i)), size(), "new column");
    if (std::find(distinct.begin(), distinct.end(), k[i]) != distinct.end()) continue;
    distinct.push_back(k[i]);
    source.push_back(Eigen::Index(i));
  }
  Eigen::MatrixXd block_columns(size(), Eigen::Index(source.size()));
  for (std::size_t j = 0; j < source.size(); ++j) block_columns.col(Eigen::Index(j)) = columns.col(source[j]);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CycleInfo cycle;
  cycle.ratio = singular_ ? RatioInfo{nan, nan, false}
                          : RatioInfo{engine_->block_ratio(distinct, block_columns), nan, true};
  for (std::size_t i = 0; i < k.size(); ++i) {
    cycle.per_update.push_back(ratio(k[i], columns.col(Eigen::Index(i))));
    accept();
  }
  if (singular_ && cycle.ratio.defined) cycle.ratio.value = 0.0;
  return cycle;
}

void MpReference::reject() {
  require_ready("reject");
  if (!pending_) throw std::logic_error("MpReference::reject: no pending proposal");
  pending_ = false;
}

void MpReference::recompute() {
  require_ready("recompute");
  if (singular_) {
    refactor_or_singular();
    return;
  }
  refactor();
}

void MpReference::refactor() {
  engine_->factorize(a_);
  accepted_since_recompute_ = 0;
  ++recomputes_;
}

MpLogDet MpReference::log_det() const {
  require_ready("log_det");
  if (singular_) return {-std::numeric_limits<long double>::infinity(), 0};
  return engine_->log_det();
}

Eigen::MatrixXd MpReference::inverse() const {
  require_ready("inverse");
  if (singular_) throw std::logic_error("MpReference::inverse: the matrix is singular");
  return engine_->inverse();
}

const Eigen::MatrixXd& MpReference::matrix() const { return a_; }

double MpReference::condition_1() const {
  require_ready("condition_1");
  if (singular_) return std::numeric_limits<double>::infinity();
  return a_.cwiseAbs().colwise().sum().maxCoeff() * engine_->inverse_norm_1();
}

}  // namespace slaterlab::reference
