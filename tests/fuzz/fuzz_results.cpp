// Fuzz target: the results reader (read_results, used by table, regress
// --baseline and run --append) on hostile files. A template results file,
// written once by the store itself, gets 1 to 4 of its attributes and
// datasets replaced by decoded hostile objects (fuzz_input.hpp) and is read
// in-process: any exception but IoError, or a sanitizer report, is a bug of
// ours. One input in four instead damages bytes of the template and reads
// it through the child-process defence: the caller must get IoError.

#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_input.hpp"
#include "verify/store/hdf5_handle.hpp"
#include "verify/store/hdf5_store.hpp"
#include "verify/store/isolated.hpp"

namespace slaterlab::fuzz {
namespace {

struct Template {
  std::vector<std::uint8_t> bytes;
  std::vector<Slot> slots;
};

Template make_template() {
  h5::library_init();
  const auto path = scratch_file("results-template");
  {
    ResultWriter writer = ResultWriter::create(path, {"0", "abc", "t", "host", "fuzz", "x = 1\n"});
    ExperimentInfo info;
    info.name = "e1";
    info.n = 4;
    info.moves = 30;
    info.checkpoint_every = 10;
    info.parameters = {{"kappa", "1e8"}};
    const ExperimentHandle e = writer.begin_experiment(info);
    const StrategyHandle s =
        writer.begin_strategy(e, {"sm-double", "sm", "double", 0x1p-52, 0, 1e-8, 1, "", {}});
    for (int i = 1; i <= 3; ++i) {
      writer.append(e, ReferenceCheckpoint{10 * i, i, 0.5, 1, 2.0, 3.0, 0.1});
      StrategyCheckpoint row{};
      row.move = 10 * i;
      writer.append(s, row);
    }
    writer.set_certified(e, "initial", CertifiedLogDet{});
    writer.finish_strategy(s, StrategySummary{});
    VmcRun run;
    run.info.name = "vmc1";
    run.info.walkers = 2;
    run.walkers.resize(2);
    run.blocking.resize(2);
    run.energy = {{1.0, 2.0}, {3.0, 4.0}};
    writer.add_vmc_run(run);
    OrbitalAccuracyRecord record;
    record.label = "bspline-double";
    writer.add_orbital_accuracy(record);
    writer.commit();
  }
  Template t{read_bytes(path), {}};
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  t.slots = slots_of(file);
  H5Fclose(file);
  std::filesystem::remove(path);
  return t;
}

}  // namespace
}  // namespace slaterlab::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slaterlab;
  using namespace slaterlab::fuzz;
  static const Template t = make_template();
  static const auto path = scratch_file("results");
  FuzzInput in(data, size);
  const bool byte_level = write_mutated(path, t.bytes, t.slots, in);
  // The template is a few KB, read in milliseconds: 2 s is a hang.
  set_file_isolation(byte_level, std::chrono::seconds(2));
  try {
    (void)read_results(path, {.checkpoints = true, .isolate = byte_level});
  } catch (const IoError&) {
  }
  return 0;
}
