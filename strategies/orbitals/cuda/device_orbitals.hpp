#pragma once
// The orbital sets evaluated on a CUDA device, by name, in every build:
// "bspline-float-cuda" and "bspline-double-cuda" are the CPU B-spline sets'
// tables on the GPU (bspline_cuda.hpp). Where this build has no CUDA or no
// device is present, they are named as unavailable with the reason.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slaterlab/strategies/orbitals/bspline.hpp"

namespace slaterlab {

/// "bspline-double-cuda", "bspline-float-cuda".
const std::vector<std::string>& cuda_orbital_sets();

/// Why the named orbital set cannot be used here ("bspline-float-cuda: no
/// CUDA device available (...)" or "...: not built with CUDA (...)"), or
/// nullopt (usable, or not a CUDA set).
std::optional<std::string> orbital_set_unavailable(const std::string& name);

/// The CPU set's table on the device (CudaBsplineOrbitals<T>); throws
/// std::invalid_argument with orbital_set_unavailable's reason where CUDA
/// cannot be used.
std::unique_ptr<OrbitalSet> on_cuda_device(const BsplineOrbitals<float>& cpu);
std::unique_ptr<OrbitalSet> on_cuda_device(const BsplineOrbitals<double>& cpu);

/// The box of a set made by on_cuda_device, nullopt for any other set.
std::optional<BsplineBox> cuda_bspline_box(const OrbitalSet& set);

}  // namespace slaterlab
