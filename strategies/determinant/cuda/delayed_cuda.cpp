#include "slaterlab/strategies/determinant/cuda/delayed_cuda.hpp"

#include <stdexcept>

#include "slaterlab/strategies/cuda/device.hpp"

#if SLATERLAB_HAVE_CUDA
#include "slaterlab/strategies/determinant/cuda/delayed_cuda_update.hpp"
#endif

namespace slaterlab {

std::unique_ptr<DeterminantUpdater> make_delayed_cuda([[maybe_unused]] const UpdaterOptions& options) {
  if (const auto& why = cuda_unavailable()) throw std::invalid_argument("delayed-cuda: " + *why);
#if SLATERLAB_HAVE_CUDA
  switch (options.precision) {
    case Precision::double_: return std::make_unique<CudaDelayedUpdate<double, double>>(options);
    case Precision::single: return std::make_unique<CudaDelayedUpdate<float, float>>(options);
    case Precision::mixed: return std::make_unique<CudaDelayedUpdate<float, double>>(options);
  }
#endif
  throw std::invalid_argument("delayed-cuda: unknown precision");
}

}  // namespace slaterlab
