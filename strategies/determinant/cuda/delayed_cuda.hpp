#pragma once
// The delayed rank-K update on a CUDA GPU ("delayed-cuda"), behind the
// DeterminantUpdater interface. Every build declares the builder; in a build
// without CUDA, or without a device at run time, it throws
// std::invalid_argument naming the reason (strategies/cuda/device.hpp).

#include <memory>

#include "slaterlab/strategies/determinant/updater_options.hpp"

namespace slaterlab {

/// Builds delayed-cuda for options.precision: double -> <double, double>,
/// float -> <float, float>, mixed -> <float, double> (Storage, LookAheadScalar, as the
/// CPU delayed update). options.variant: "" or "incremental" (the naive
/// look-ahead is CPU only).
std::unique_ptr<DeterminantUpdater> make_delayed_cuda(const UpdaterOptions& options);

}  // namespace slaterlab
