#include "slaterlab/strategies/cuda/device.hpp"

#include <algorithm>

#if SLATERLAB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace slaterlab {
namespace {

std::optional<std::string> probe() {
#if SLATERLAB_HAVE_CUDA
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    return std::string("no CUDA device available (cudaGetDeviceCount: ") +
           cudaGetErrorString(status) + ")";
  }
  if (count < 1) return std::string("no CUDA device available (cudaGetDeviceCount: 0 devices)");
  return std::nullopt;
#else
  return std::string("not built with CUDA (configure with -DSLATERLAB_CUDA=ON)");
#endif
}

}  // namespace

bool built_with_cuda() { return SLATERLAB_HAVE_CUDA != 0; }

const std::optional<std::string>& cuda_unavailable() {
  static const std::optional<std::string> reason = probe();
  return reason;
}

std::optional<std::string> unavailable_on_cuda(const std::string& name,
                                               const std::vector<std::string>& cuda_names) {
  if (std::find(cuda_names.begin(), cuda_names.end(), name) == cuda_names.end()) return std::nullopt;
  if (const auto& why = cuda_unavailable()) return name + ": " + *why;
  return std::nullopt;
}

}  // namespace slaterlab
