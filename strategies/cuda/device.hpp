#pragma once
// Whether CUDA strategies and orbital sets can run in this process: built
// with CUDA (configure with -DSLATERLAB_CUDA=ON or AUTO where nvcc is found)
// and a device present at run time. Plain C++: no CUDA header is needed to
// ask, so every build (with or without CUDA) compiles the callers alike.

#include <optional>
#include <string>
#include <vector>

namespace slaterlab {

/// True when this build contains the CUDA code.
bool built_with_cuda();

/// Why CUDA code cannot run here, or nullopt when a device is usable:
/// "not built with CUDA (configure with -DSLATERLAB_CUDA=ON)", or
/// "no CUDA device available (cudaGetDeviceCount: <runtime's reason>)".
/// The device is probed once per process (the first call initialises the
/// CUDA runtime).
const std::optional<std::string>& cuda_unavailable();

/// For a name among `cuda_names` (the strategies or orbital sets that need a
/// device): "<name>: <cuda_unavailable()>" when CUDA cannot run here;
/// nullopt otherwise, and for any other name.
std::optional<std::string> unavailable_on_cuda(const std::string& name,
                                               const std::vector<std::string>& cuda_names);

}  // namespace slaterlab
