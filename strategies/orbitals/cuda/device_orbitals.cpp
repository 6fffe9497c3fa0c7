#include "slaterlab/strategies/orbitals/cuda/device_orbitals.hpp"

#include <stdexcept>

#include "slaterlab/strategies/cuda/device.hpp"

#if SLATERLAB_HAVE_CUDA
#include "slaterlab/strategies/orbitals/cuda/bspline_cuda.hpp"
#endif

namespace slaterlab {
namespace {

template <class T>
std::unique_ptr<OrbitalSet> to_device(const BsplineOrbitals<T>& cpu) {
  const std::string name = cpu.label() + "-cuda";
  if (const auto why = orbital_set_unavailable(name)) throw std::invalid_argument(*why);
#if SLATERLAB_HAVE_CUDA
  return std::make_unique<CudaBsplineOrbitals<T>>(cpu);
#else
  throw std::logic_error(name + ": unreachable without CUDA");
#endif
}

}  // namespace

const std::vector<std::string>& cuda_orbital_sets() {
  static const std::vector<std::string> names = {"bspline-double-cuda", "bspline-float-cuda"};
  return names;
}

std::optional<std::string> orbital_set_unavailable(const std::string& name) {
  return unavailable_on_cuda(name, cuda_orbital_sets());
}

std::unique_ptr<OrbitalSet> on_cuda_device(const BsplineOrbitals<float>& cpu) { return to_device(cpu); }
std::unique_ptr<OrbitalSet> on_cuda_device(const BsplineOrbitals<double>& cpu) { return to_device(cpu); }

std::optional<BsplineBox> cuda_bspline_box([[maybe_unused]] const OrbitalSet& set) {
#if SLATERLAB_HAVE_CUDA
  if (const auto* f = dynamic_cast<const CudaBsplineOrbitals<float>*>(&set)) return f->box();
  if (const auto* d = dynamic_cast<const CudaBsplineOrbitals<double>*>(&set)) return d->box();
#endif
  return std::nullopt;
}

}  // namespace slaterlab
