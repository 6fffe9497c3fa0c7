#include "verify/inputs/molecule_cache.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

#include "verify/inputs/molecule_file.hpp"

namespace slaterlab {

std::shared_ptr<const MolecularWavefunction> load_molecule(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const MolecularWavefunction>> read;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = read.find(path);
  if (it == read.end())
    it = read.emplace(path, std::make_shared<const MolecularWavefunction>(read_molecule(path))).first;
  return it->second;
}

const std::vector<std::string>& molecule_orbital_keys() {
  static const std::vector<std::string> keys = {"double", "float"};
  return keys;
}

OrbitalPrecision molecule_orbital_precision(const std::string& key) {
  if (key == "double") return OrbitalPrecision::kDouble;
  if (key == "float") return OrbitalPrecision::kFloat;
  throw std::invalid_argument("molecule orbitals: unknown key '" + key + "'");
}

std::string molecule_stem(const std::string& path) {
  const std::string file = std::filesystem::path(path).filename().string();
  return file.substr(0, file.find('.'));
}

}  // namespace slaterlab
