#pragma once
// Internal to the mp reference: the multiprecision numerics behind mp.hpp,
// seen through an interface free of multiprecision types. MpKernels<Digits>
// and the engine are defined and explicitly instantiated (Digits = 50, 100)
// in mp_kernels.cpp only. Inputs are validated by mp.cpp before they get here
// (square, non-empty, finite, k in range, matching lengths).

#include <Eigen/Core>

#include <memory>
#include <vector>

#include "slaterlab/reference/mp.hpp"

namespace slaterlab::reference::detail {

/// The mp state of an MpReference: inverse, pending solve, log|det|.
class MpEngine {
 public:
  virtual ~MpEngine() = default;

  /// Fresh LU of `a`: replaces inverse and log|det|. Throws
  /// SingularMatrixError and leaves the state unchanged if `a` is singular
  /// to working precision.
  virtual void factorize(const Eigen::MatrixXd& a) = 0;
  /// Solves x = A^{-1} a' and keeps x for commit(); `a_frobenius` = ||A||_F.
  virtual RatioInfo propose(Eigen::Index k, const Eigen::VectorXd& column, double a_frobenius) = 0;
  /// det(P^T A^{-1} C), P = [e_k(0) ..], C = columns (distinct k): the
  /// ratio det(A') / det(A) of replacing those columns at once.
  virtual double block_ratio(const std::vector<Eigen::Index>& k,
                             const Eigen::MatrixXd& columns) const = 0;
  /// Sherman-Morrison update with the kept x. Throws SingularMatrixError,
  /// leaving the state unchanged, if x_k == 0.
  virtual void commit(Eigen::Index k) = 0;

  virtual MpLogDet log_det() const = 0;
  virtual Eigen::MatrixXd inverse() const = 0;
  /// ||A^{-1}||_1 of the mp inverse.
  virtual double inverse_norm_1() const = 0;
};

template <int Digits>
struct MpKernels {
  static double epsilon();
  static MpLogDet log_det(const Eigen::MatrixXd& a);
  static Eigen::MatrixXd inverse(const Eigen::MatrixXd& a);
  static Eigen::VectorXd solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);
  static double ratio(const Eigen::MatrixXd& a, Eigen::Index k, const Eigen::VectorXd& column);
  static std::unique_ptr<MpEngine> make_engine();
};

extern template struct MpKernels<50>;
extern template struct MpKernels<100>;

}  // namespace slaterlab::reference::detail
