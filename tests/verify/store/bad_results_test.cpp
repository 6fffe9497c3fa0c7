// Hostile and damaged results files: every attribute and dataset is checked
// for type, shape and size before its data is read (hdf5_handle.hpp), damage
// that crashes libhdf5 is caught in a child process (isolated.hpp), an append
// to a damaged file leaves it as it was, a .partial is never a baseline, and
// an output path that is not a regular file is refused, never replaced.

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/verify/hostile_hdf5.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/store/hdf5_handle.hpp"
#include "verify/store/hdf5_store.hpp"
#include "verify/store/isolated.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;
using testing::damage_heap_string;
using testing::file_bytes;
using testing::Rewrite;

constexpr const char* kTool = "tool-version-under-test";

class BadResults : public testing::ScratchTest {
 protected:
  /// A committed file: one experiment with one strategy of 3 checkpoints and
  /// a VMC run of 2 walkers x 3 sweeps.
  fs::path good(const std::string& name = "good.h5") {
    const fs::path file = path(name);
    RunMetadata metadata{kTool, "abc", "2026-11-21T10:00:00Z", "host", "slaterlab run", "x = 1\n"};
    ResultWriter writer = ResultWriter::create(file, metadata);
    ExperimentInfo info;
    info.name = "e1";
    info.workload = "gaussian";
    info.n = 4;
    info.moves = 30;
    info.checkpoint_every = 10;
    const ExperimentHandle e = writer.begin_experiment(info);
    const StrategyHandle s = writer.begin_strategy(e, {"sm-double", "sm", "double", 0x1p-52, 0,
                                                       1e-8, 1, "", {}});
    for (int i = 1; i <= 3; ++i) {
      ReferenceCheckpoint reference{};
      reference.move = 10 * i;
      writer.append(e, reference);
      StrategyCheckpoint row{};
      row.move = 10 * i;
      writer.append(s, row);
    }
    writer.finish_strategy(s, StrategySummary{});
    VmcRun run;
    run.info.name = "vmc1";
    run.info.walkers = 2;
    run.walkers.resize(2);
    run.energy = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
    writer.add_vmc_run(run);
    writer.commit();
    return file;
  }

  /// read_results(file) must throw IoError naming the file and every fragment.
  static void expect_refused(const fs::path& file, const std::vector<std::string>& fragments) {
    try {
      (void)read_results(file);
      ADD_FAILURE() << "read " << file << " without an error";
    } catch (const IoError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(file.string()), std::string::npos) << message;
      for (const auto& fragment : fragments)
        EXPECT_NE(message.find(fragment), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
};

TEST_F(BadResults, TheGoodFileReadsAndIsCommitted) {
  const ResultsFile results = read_results(good());
  EXPECT_TRUE(results.committed);
  ASSERT_EQ(results.vmc.size(), 1u);
  EXPECT_EQ(results.vmc[0].energy.size(), 2u);
  EXPECT_EQ(results.experiments.at(0).strategies.at(0).checkpoints.size(), 3u);
}

// Class: an attribute where one value belongs holds an array. Before the
// checks HDF5 wrote all 1000 elements into one int (a stack overflow), and
// with 2 elements the read went on silently.
TEST_F(BadResults, AnArrayWhereOneValueBelongsIsRefused) {
  for (hsize_t count : {2u, 1000u}) {
    SCOPED_TRACE(count);
    const fs::path file = good();
    Rewrite(file).array_attribute("/", "schema_version", count);
    expect_refused(file, {"schema_version", std::to_string(count) + " values where one belongs"});
  }
  const fs::path file = good();
  Rewrite(file).array_attribute("/experiments/e1", "n", 1000);
  expect_refused(file, {"'n'", "/experiments/e1", "1000 values where one belongs"});
  const fs::path strings = good();
  Rewrite(strings).string_array_attribute("/", "tool_version", 1000);
  expect_refused(strings, {"tool_version", "1000 values where one belongs"});
}

TEST_F(BadResults, ConfigStoredAsAStringArrayIsRefused) {
  const fs::path file = good();
  Rewrite(file).string_array_dataset("/config", 1000);
  expect_refused(file, {"'config'", "1000 values where one belongs"});
}

TEST_F(BadResults, ANumberOfTheWrongClassIsRefused) {
  const fs::path file = good();
  {
    Rewrite rewrite(file);
    rewrite.string_array_attribute("/", "schema_version", 1);  // a string where an int belongs
  }
  expect_refused(file, {"schema_version", "not an integer"});
}

// Class: declared sizes the file cannot hold (a damaged extent, a hostile
// header). Before the checks: std::length_error or an allocation of 2^65
// bytes; now refused before any allocation, naming the dataset.
TEST_F(BadResults, DeclaredRowsTheFileDoesNotHoldAreRefused) {
  const fs::path checkpoints = good();
  Rewrite(checkpoints).extend("/experiments/e1/strategies/sm-double/checkpoints", {1ull << 62});
  expect_refused(checkpoints, {"checkpoints", "4611686018427387904"});
  const fs::path walkers = good();
  Rewrite(walkers).extend("/vmc/vmc1/walkers", {1ull << 62});
  expect_refused(walkers, {"walkers", "4611686018427387904"});
  // Rows the file does hold cannot exceed 1032 per stored byte (deflate's
  // bound): 2^20 rows in a few hundred stored bytes is refused too.
  const fs::path modest = good();
  Rewrite(modest).extend("/vmc/vmc1/walkers", {1ull << 20});
  expect_refused(modest, {"walkers", "1048576", "the file stores"});
}

TEST_F(BadResults, AnEnergySeriesOf2To62ElementsIsRefused) {
  const fs::path file = good();
  Rewrite(file).declared_only("/vmc/vmc1/energy", {1ull << 31, 1ull << 31});
  expect_refused(file, {"energy", "2147483648"});
}

TEST_F(BadResults, SeriesRowsMustMatchTheWalkers) {
  const fs::path file = good();
  {
    Rewrite rewrite(file);
    H5Ldelete(rewrite.file(), "/vmc/vmc1/energy", H5P_DEFAULT);
    const hsize_t dims[2] = {3, 1};
    const double values[3] = {1, 2, 3};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t set = H5Dcreate2(rewrite.file(), "/vmc/vmc1/energy", H5T_IEEE_F64LE, space,
                                 H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    H5Dclose(set);
    H5Sclose(space);
  }
  expect_refused(file, {"energy", "3 rows", "2 walkers"});
}

// Class 7: the stored size of a global-heap object (the tool_version
// string) is damaged; libhdf5 1.10 then overflows a buffer or loops inside
// H5Aread. The reader runs in a child first, so this is an IoError.
TEST_F(BadResults, DamageThatCrashesTheHdf5LibraryIsReportedAsDamage) {
  const fs::path file = good();
  ASSERT_TRUE(damage_heap_string(file, kTool, 1ull << 40));
  expect_refused(file, {"damaged"});
}

TEST_F(BadResults, IsolatedCheckReportsCrashesHangsAndMessages) {
  EXPECT_NO_THROW(check_isolated([] {}, std::chrono::seconds(30)));
  try {
    check_isolated([] { throw std::runtime_error("a message"); }, std::chrono::seconds(30));
    ADD_FAILURE();
  } catch (const IsolatedFailure& failure) {
    EXPECT_FALSE(failure.crashed());
    EXPECT_STREQ(failure.what(), "a message");
  }
  try {
    check_isolated([] { std::raise(SIGSEGV); }, std::chrono::seconds(30));
    ADD_FAILURE();
  } catch (const IsolatedFailure& failure) {
    EXPECT_TRUE(failure.crashed());
    EXPECT_NE(std::string(failure.what()).find("SIGSEGV"), std::string::npos) << failure.what();
  }
  try {
    check_isolated([] { for (;;) ::pause(); }, std::chrono::seconds(1));
    ADD_FAILURE();
  } catch (const IsolatedFailure& failure) {
    EXPECT_TRUE(failure.crashed());
    EXPECT_NE(std::string(failure.what()).find("did not finish"), std::string::npos);
  }
}

// Class 6a: an append to a damaged file must leave it as it was. Every
// object header of the file is damaged in turn (one flipped byte past its
// signature); each append either fails with the file unchanged, or succeeds
// and the file then reads whole.
TEST_F(BadResults, AppendToADamagedFileLeavesItUnchangedOrReadable) {
  const std::vector<char> pristine = file_bytes(good());
  std::vector<std::size_t> headers;
  for (std::size_t at = 0; at + 4 <= pristine.size(); ++at)
    if (std::memcmp(pristine.data() + at, "OHDR", 4) == 0) headers.push_back(at);
  ASSERT_GE(headers.size(), 8u);
  int refused = 0;
  for (std::size_t at : headers) {
    SCOPED_TRACE(at);
    std::vector<char> damaged = pristine;
    damaged[at + 12] = char(damaged[at + 12] ^ 0x10);
    const fs::path file = path("damaged.h5");
    testing::put_bytes(file, damaged);
    try {
      ResultWriter writer = ResultWriter::create(
          file, {kTool, "abc", "2026-11-22T10:00:00Z", "host", "append", ""}, true);
      ExperimentInfo info;
      info.name = "appended";
      info.n = 2;
      writer.begin_experiment(info);
      writer.commit();
      EXPECT_NO_THROW((void)read_results(file));
    } catch (const IoError&) {
      ++refused;
      EXPECT_EQ(file_bytes(file), damaged);
      EXPECT_FALSE(fs::exists(partial_path(file)));
    }
  }
  EXPECT_GT(refused, 0);
}

// Class 6b: a .partial (a killed run) is never committed; commit marks it,
// and an append's copy is unmarked until its own commit.
TEST_F(BadResults, OnlyACommittedFileCarriesTheCommittedMark) {
  const fs::path file = path("run.h5");
  {
    ResultWriter writer =
        ResultWriter::create(file, {kTool, "abc", "t", "host", "run", ""});
    writer.keep_partial();
  }  // destroyed without commit: the .partial of a killed run
  EXPECT_FALSE(read_results(partial_path(file)).committed);
  // `table` shows it (a .partial is readable on purpose) and says it is one.
  const auto shown = run("table " + partial_path(file).string());
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.err.find("was not committed by a finished run"), std::string::npos) << shown.err;
  const fs::path committed = good();
  {
    ResultWriter killed = ResultWriter::create(committed, {kTool, "a", "t", "h", "append", ""}, true);
    killed.keep_partial();
  }
  EXPECT_FALSE(read_results(partial_path(committed)).committed);
  EXPECT_TRUE(read_results(committed).committed);
  ResultWriter append = ResultWriter::create(committed, {kTool, "a", "t", "h", "append", ""}, true);
  append.commit();
  EXPECT_TRUE(read_results(committed).committed);
}

// Class 6c: an output that is not a regular file is refused; the node stays.
TEST_F(BadResults, OutputThatIsNotARegularFileIsRefusedAndKept) {
  const fs::path fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const fs::path& node : {fs::path("/dev/null"), fifo}) {
    SCOPED_TRACE(node);
    try {
      check_output_path(node);
      ADD_FAILURE() << "accepted " << node;
    } catch (const IoError& error) {
      EXPECT_NE(std::string(error.what()).find("not a regular file"), std::string::npos)
          << error.what();
    }
  }
  struct stat info {};
  ASSERT_EQ(::stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  ASSERT_EQ(::stat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  // Reading a FIFO with no writer would block forever inside HDF5.
  expect_refused(fifo, {"not a regular file", "a FIFO"});
}

// Through the command line: one line, exit 2, files unchanged.
TEST_F(BadResults, CommandLineAnswersEachClassWithOneLineAndExitTwo) {
  const fs::path array = good("array.h5");
  Rewrite(array).array_attribute("/", "schema_version", 1000);
  const fs::path walkers = good("walkers.h5");
  Rewrite(walkers).extend("/vmc/vmc1/walkers", {1ull << 62});
  const fs::path heap = good("heap.h5");
  ASSERT_TRUE(damage_heap_string(heap, kTool, 1ull << 40));
  for (const fs::path& file : {array, walkers, heap}) {
    SCOPED_TRACE(file);
    const auto before = file_bytes(file);
    const auto table = run("table " + file.string());
    EXPECT_EQ(table.exit_code, 2) << table.err;
    EXPECT_TRUE(table.err.starts_with("slaterlab: error: ")) << table.err;
    EXPECT_EQ(std::count(table.err.begin(), table.err.end(), '\n'), 1) << table.err;
    const auto append = run("run --append -o " + file.string());
    EXPECT_EQ(append.exit_code, 2) << append.err;
    EXPECT_EQ(file_bytes(file), before);
  }
  // A killed run's .partial is refused as a baseline.
  const fs::path study = write("study.toml",
                               "[[experiment]]\nworkload = \"gaussian\"\nn = 4\nmoves = 8\n"
                               "[[strategy]]\nname = \"sm\"\nprecision = \"double\"\n");
  {
    ResultWriter killed = ResultWriter::create(path("base.h5"), {kTool, "a", "t", "h", "run", ""});
    killed.keep_partial();
  }
  const auto regress = run("regress " + study.string() + " --baseline " + path("base.h5.partial"));
  EXPECT_EQ(regress.exit_code, 2) << regress.err;
  EXPECT_NE(regress.err.find("never committed"), std::string::npos) << regress.err;
  const auto device = run("run -o /dev/null");
  EXPECT_EQ(device.exit_code, 2) << device.err;
  EXPECT_NE(device.err.find("not a regular file"), std::string::npos) << device.err;
  struct stat info {};
  ASSERT_EQ(::stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
}

}  // namespace
}  // namespace slaterlab
