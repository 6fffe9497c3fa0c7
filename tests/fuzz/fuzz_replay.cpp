// Fuzz target: the replay reader (read_replay_shape, used by every command's
// plan, and read_replay, used by the run) on hostile files. A shipped replay
// file (data/fuzz-corpus/) gets 1 to 4 of its attributes and datasets
// replaced by decoded hostile objects (fuzz_input.hpp) and is read
// in-process, a prefix of `moves` moves too: any exception but ReplayError,
// or a sanitizer report, is a bug of ours. One input in four instead damages
// bytes and reads through the child-process defence.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "tests/fuzz/fuzz_input.hpp"
#include "verify/inputs/replay.hpp"
#include "verify/store/hdf5_handle.hpp"
#include "verify/store/isolated.hpp"

namespace slaterlab::fuzz {
namespace {

struct Template {
  std::vector<std::uint8_t> bytes;
  std::vector<Slot> slots;
};

std::vector<Template> make_templates() {
  h5::library_init();
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(SLATERLAB_SOURCE_DIR) / "data" /
                                           "fuzz-corpus"))
    if (entry.path().extension() == ".h5") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<Template> templates;
  for (const auto& path : files) {
    Template t{read_bytes(path), {}};
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    t.slots = slots_of(file);
    H5Fclose(file);
    templates.push_back(std::move(t));
  }
  if (templates.empty()) __builtin_trap();  // no seed files: the target would test nothing
  return templates;
}

}  // namespace
}  // namespace slaterlab::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slaterlab;
  using namespace slaterlab::fuzz;
  static const std::vector<Template> templates = make_templates();
  static const auto path = scratch_file("replay");
  FuzzInput in(data, size);
  const Template& t = templates[in.byte() % templates.size()];
  const std::int64_t moves = std::int64_t(in.byte()) - 1;  // -1: all
  const bool byte_level = write_mutated(path, t.bytes, t.slots, in);
  // The template is a few KB, read in milliseconds: 2 s is a hang.
  set_file_isolation(byte_level, std::chrono::seconds(2));
  try {
    (void)read_replay_shape(path);
    (void)read_replay(path, moves);
  } catch (const ReplayError&) {
  }
  return 0;
}
