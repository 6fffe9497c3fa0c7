// The orbital-set registry (contract in orbital_registry.hpp).

#include "verify/inputs/orbital_registry.hpp"

#include <stdexcept>

#include "slaterlab/strategies/orbitals/cuda/device_orbitals.hpp"
#include "verify/inputs/suggest.hpp"

namespace slaterlab {
namespace {

template <class T>
OrbitalSetKind bspline_kind(const char* name) {
  return {.name = name,
          .make = [](const OrbitalSource& s) -> std::shared_ptr<const OrbitalSet> {
            return std::make_shared<BsplineOrbitals<T>>(*s.exact, s.box);
          },
          .gridded = true,
          .build_bytes = bspline_build_bytes<T>,
          .epsilon = std::numeric_limits<T>::epsilon()};
}

/// The CPU set's table copied to the device; the CPU copy is dropped once
/// it is there. Its build peaks at the CPU set's.
template <class T>
OrbitalSetKind cuda_kind(const char* name) {
  const std::string label = name;
  return {.name = name,
          .make = [](const OrbitalSource& s) -> std::shared_ptr<const OrbitalSet> {
            return on_cuda_device(BsplineOrbitals<T>(*s.exact, s.box));
          },
          .gridded = true,
          .build_bytes = bspline_build_bytes<T>,
          .unavailable = [label] { return orbital_set_unavailable(label); },
          .walks = false,
          .epsilon = std::numeric_limits<T>::epsilon()};
}

std::vector<OrbitalSetKind>& registry() {
  static std::vector<OrbitalSetKind> kinds = {
      {.name = kAnalyticOrbitals, .make = [](const OrbitalSource& s) { return s.exact; }},
      bspline_kind<double>("bspline-double"),
      bspline_kind<float>("bspline-float"),
      cuda_kind<double>("bspline-double-cuda"),
      cuda_kind<float>("bspline-float-cuda"),
  };
  return kinds;
}

const OrbitalSetKind* find(const std::string& name) {
  for (const OrbitalSetKind& kind : registry())
    if (kind.name == name) return &kind;
  return nullptr;
}

}  // namespace

void register_orbital_set(OrbitalSetKind kind) {
  if (kind.name.empty()) throw std::invalid_argument("register_orbital_set: empty name");
  if (!kind.make)
    throw std::invalid_argument("register_orbital_set: '" + kind.name + "' needs a factory");
  if (find(kind.name))
    throw std::invalid_argument("orbital set '" + kind.name + "' is already registered");
  registry().push_back(std::move(kind));
}

std::vector<std::string> known_orbital_sets() {
  std::vector<std::string> names;
  for (const OrbitalSetKind& kind : registry()) names.push_back(kind.name);
  return names;
}

const OrbitalSetKind& orbital_set_kind(const std::string& name) {
  if (const OrbitalSetKind* kind = find(name)) return *kind;
  throw std::invalid_argument("unknown orbitals '" + name + "'" +
                              suggestion_suffix(name, known_orbital_sets()));
}

std::optional<std::string> orbital_set_unusable(const std::string& name) {
  const OrbitalSetKind* kind = find(name);
  return kind && kind->unavailable ? kind->unavailable() : std::nullopt;
}

std::shared_ptr<const OrbitalSet> make_orbital_set(const std::string& name,
                                                   const OrbitalSource& source) {
  const OrbitalSetKind& kind = orbital_set_kind(name);
  if (const auto why = orbital_set_unusable(name)) throw std::invalid_argument(*why);
  return kind.make(source);
}

}  // namespace slaterlab
