#pragma once
// Tricubic B-spline orbitals evaluated on a CUDA device ("bspline-float-cuda",
// "bspline-double-cuda"; built only with CUDA). The coefficient table is the
// CPU set's (BsplineOrbitals<T>, strategies/orbitals/bspline.hpp), copied to
// the device once as it is: same coefficients, same layout (orbital index
// fastest), same weights. A call evaluates a whole batch of positions (all
// electrons of a walker, or of many walkers: 3 x M) in one kernel launch,
// one thread per (orbital, position): the positions go up, the T results
// come back and are widened to double for the OrbitalSet interface.
//
// Accuracy. Each result is the same 64-term sum as the CPU kernel's, in T,
// with the same T weights; it differs from the CPU result only by the order
// and fusing of the roundings (nvcc contracts a * b + c into FMA), i.e. by at
// most 2 gamma_d times the sum of the terms' magnitudes (d the roundings on
// the longest path; tests/orbitals/cuda_bspline_test.cpp derives the bound).
//
// Evaluation is const and thread-safe (the device scratch is reused under a
// lock).

#include <memory>
#include <mutex>

#include "slaterlab/strategies/cuda/runtime.hpp"
#include "slaterlab/strategies/orbitals/bspline.hpp"

namespace slaterlab {

template <class T>
class CudaBsplineOrbitals final : public OrbitalSet {
 public:
  /// Copies the table of `cpu` to the device (throws std::runtime_error when
  /// the device has no room).
  explicit CudaBsplineOrbitals(const BsplineOrbitals<T>& cpu);

  Eigen::Index size() const override { return n_; }
  /// "bspline-float-cuda" or "bspline-double-cuda".
  std::string label() const override;
  double computing_epsilon() const override { return std::numeric_limits<T>::epsilon(); }
  void evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const override;
  void evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const override;

  const BsplineBox& box() const { return box_; }
  Eigen::Index padded_size() const { return npad_; }

 private:
  /// Checks the positions (finite) and copies them to the device.
  void upload_positions(const Eigen::Matrix3Xd& positions) const;
  /// Device results (M x Npad, position-major) into an N x M double matrix.
  void widen(const T* device, Eigen::Index count, Eigen::MatrixXd& out, Eigen::Index rows_per_orbital,
             Eigen::Index row) const;

  Eigen::Index n_;
  Eigen::Index npad_;
  BsplineBox box_;
  cuda::DeviceArray<T> table_;
  mutable std::mutex mutex_;
  mutable cuda::DeviceArray<double> positions_;
  mutable cuda::DeviceArray<T> results_;  // 5 blocks of M x Npad
  mutable std::vector<T> host_;
};

extern template class CudaBsplineOrbitals<float>;
extern template class CudaBsplineOrbitals<double>;

}  // namespace slaterlab
