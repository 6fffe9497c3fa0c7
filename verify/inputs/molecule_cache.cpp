#include "verify/inputs/molecule_cache.hpp"

#include <filesystem>
#include <map>
#include <mutex>

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

std::string molecule_stem(const std::string& path) {
  const std::string file = std::filesystem::path(path).filename().string();
  return file.substr(0, file.find('.'));
}

}  // namespace slaterlab
