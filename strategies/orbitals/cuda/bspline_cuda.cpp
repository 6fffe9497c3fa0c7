#include "slaterlab/strategies/orbitals/cuda/bspline_cuda.hpp"

#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "slaterlab/strategies/orbitals/cuda/bspline_kernels.hpp"

namespace slaterlab {

template <class T>
CudaBsplineOrbitals<T>::CudaBsplineOrbitals(const BsplineOrbitals<T>& cpu)
    : n_(cpu.size()), npad_(cpu.padded_size()), box_(cpu.box()) {
  const auto g = std::size_t(box_.grid);
  const std::size_t count = g * g * g * std::size_t(npad_);
  table_ = cuda::DeviceArray<T>(count);
  cuda::upload(table_.data(), cpu.table(), count);
}

template <class T>
std::string CudaBsplineOrbitals<T>::label() const {
  return std::is_same_v<T, float> ? "bspline-float-cuda" : "bspline-double-cuda";
}

template <class T>
void CudaBsplineOrbitals<T>::upload_positions(const Eigen::Matrix3Xd& positions) const {
  if (!positions.allFinite())
    throw std::invalid_argument("CudaBsplineOrbitals: non-finite position coordinate");
  const auto count = std::size_t(positions.size());
  positions_.reserve(count);
  cuda::upload(positions_.data(), positions.data(), count);  // x y z per column
}

template <class T>
void CudaBsplineOrbitals<T>::widen(const T* device, Eigen::Index count, Eigen::MatrixXd& out,
                                   Eigen::Index rows_per_orbital, Eigen::Index row) const {
  host_.resize(std::size_t(count * npad_));
  cuda::download(host_.data(), device, host_.size());
  for (Eigen::Index m = 0; m < count; ++m) {
    const T* at = host_.data() + m * npad_;
    for (Eigen::Index i = 0; i < n_; ++i) out(rows_per_orbital * i + row, m) = double(at[i]);
  }
}

namespace {
template <class T>
cuda::SplineTable<T> table_of(const T* coefs, const BsplineBox& box, Eigen::Index npad) {
  return {coefs, int(box.grid), long(npad), box.half_width, 1.0 / box.spacing()};
}
}  // namespace

template <class T>
void CudaBsplineOrbitals<T>::evaluate_values(const Eigen::Matrix3Xd& positions,
                                             Eigen::MatrixXd& values) const {
  const Eigen::Index count = positions.cols();
  values.resize(n_, count);
  if (count == 0) return;
  std::lock_guard lock(mutex_);
  upload_positions(positions);
  results_.reserve(std::size_t(count * npad_));
  cuda::spline_values(table_of(table_.data(), box_, npad_), positions_.data(), int(count),
                      results_.data());
  widen(results_.data(), count, values, 1, 0);
}

template <class T>
void CudaBsplineOrbitals<T>::evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const {
  const Eigen::Index count = positions.cols();
  out.value.resize(n_, count);
  out.gradient.resize(3 * n_, count);
  out.laplacian.resize(n_, count);
  if (count == 0) return;
  std::lock_guard lock(mutex_);
  upload_positions(positions);
  const std::size_t block = std::size_t(count * npad_);
  results_.reserve(5 * block);
  T* v = results_.data();
  T* gx = v + block;
  T* gy = gx + block;
  T* gz = gy + block;
  T* lap = gz + block;
  cuda::spline_vgl(table_of(table_.data(), box_, npad_), positions_.data(), int(count), v, gx, gy, gz,
                   lap);
  widen(v, count, out.value, 1, 0);
  widen(gx, count, out.gradient, 3, 0);
  widen(gy, count, out.gradient, 3, 1);
  widen(gz, count, out.gradient, 3, 2);
  widen(lap, count, out.laplacian, 1, 0);
}

template class CudaBsplineOrbitals<float>;
template class CudaBsplineOrbitals<double>;

}  // namespace slaterlab
