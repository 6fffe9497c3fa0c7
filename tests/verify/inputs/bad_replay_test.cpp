// Hostile and damaged replay files: attributes and datasets are checked for
// shape and size before their data is read, declared sizes the file cannot
// hold are refused before any plan, a study reads only the moves it uses,
// damage that crashes libhdf5 is reported as damage, and a path that is not
// a regular file is refused before it is opened (even under --dry-run).

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/verify/hostile_hdf5.hpp"
#include "tests/verify/scratch_test.hpp"
#include "verify/inputs/replay.hpp"
#include "verify/inputs/rng.hpp"
#include "verify/inputs/workload_registry.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;
using testing::Rewrite;

class BadReplay : public testing::ScratchTest {
 protected:
  /// A valid replay of N = n and m Gaussian moves, with metadata strings.
  fs::path good(const std::string& name, Eigen::Index n = 4, Eigen::Index m = 40) {
    Rng rng(7, 0);
    ReplayData d;
    d.initial = rng.normal_matrix(n, n);
    d.columns = rng.normal_matrix(n, m);
    for (Eigen::Index t = 0; t < m; ++t) d.electron.push_back(t % n);
    d.metadata = {{"code", "code-under-test"}};
    write_replay(path(name), d);
    return path(name);
  }

  std::string study(const fs::path& file, const std::string& extra = "") const {
    return write("study.toml", "[reference]\ncertify = false\n[[experiment]]\nworkload = "
                               "\"replay\"\nfile = \"" + file.string() + "\"\n" + extra +
                                   "[[strategy]]\nname = \"sm\"\n");
  }

  /// read_replay_shape must throw ReplayError naming the file and fragments.
  static void expect_refused(const fs::path& file, const std::vector<std::string>& fragments) {
    try {
      (void)read_replay_shape(file);
      ADD_FAILURE() << "accepted " << file;
    } catch (const ReplayError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(file.string()), std::string::npos) << message;
      for (const auto& fragment : fragments)
        EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }
};

TEST_F(BadReplay, ArrayShapedVersionAndLayoutAreRefused) {
  for (hsize_t count : {2u, 1000u}) {
    const fs::path version = good("version.h5");
    Rewrite(version).array_attribute("/", "replay_schema_version", count);
    expect_refused(version, {"replay_schema_version", "must be an integer"});
    const fs::path layout = good("layout.h5");
    Rewrite(layout).string_array_attribute("/", "layout", count);
    expect_refused(layout, {"'layout'", "must be a string"});
  }
}

// Declared sizes the file does not hold: refused from the header, by the
// shape reader the plan uses, naming the dataset.
TEST_F(BadReplay, DeclaredMovesTheFileDoesNotHoldAreRefusedBeforeThePlan) {
  const fs::path file = good("huge.h5", 1, 3);
  Rewrite(file).declared_only("/moves/column", {hsize_t(1) << 61, 1});
  expect_refused(file, {"'moves/column'", "2305843009213693952", "the file is damaged"});
  // Within any memory bound (8 GiB), but not stored in this 10 KB file.
  const fs::path large = good("large.h5", 1, 3);
  Rewrite(large).declared_only("/moves/column", {hsize_t(1) << 30, 1});
  expect_refused(large, {"'moves/column'", "1073741824", "the file stores 0 bytes"});
  const auto dry = run("run --dry-run " + study(file, "moves = 2\n"));
  EXPECT_EQ(dry.exit_code, 2) << dry.err;
  EXPECT_NE(dry.err.find("moves/column"), std::string::npos) << dry.err;
}

// The run reads the first `moves` moves, the number the plan counts.
TEST_F(BadReplay, AStudyReadsOnlyTheMovesItUses) {
  const fs::path file = good("long.h5", 4, 400);
  const ReplayData all = read_replay(file);
  const ReplayData prefix = read_replay(file, 5);
  EXPECT_EQ(all.moves(), 400);
  EXPECT_EQ(prefix.moves(), 5);
  EXPECT_EQ(prefix.file_moves, 400);
  EXPECT_EQ(prefix.columns, all.columns.leftCols(5));
  EXPECT_EQ(prefix.initial, all.initial);
  WorkloadSpec spec;
  spec.kind = "replay";
  spec.n = 4;
  spec.file = file.string();
  spec.replay_moves = 5;
  auto workload = make_workload(spec);
  Eigen::MatrixXd a = workload->initial_matrix();
  for (int t = 0; t < 5; ++t) EXPECT_NO_THROW((void)workload->next_move(a));
  EXPECT_THROW((void)workload->next_move(a), std::logic_error);  // only 5 were loaded
  const auto params = workload->parameters();
  EXPECT_NE(std::find(params.begin(), params.end(),
                      std::pair<std::string, std::string>{"moves_in_file", "400"}),
            params.end());
}

TEST_F(BadReplay, DamageThatCrashesTheHdf5LibraryIsReportedAsDamage) {
  const fs::path file = good("heap.h5");
  ASSERT_TRUE(testing::damage_heap_string(file, "code-under-test", 1ull << 40));
  expect_refused(file, {"the file is damaged"});
  const auto dry = run("run --dry-run " + study(file, "moves = 2\n"));
  EXPECT_EQ(dry.exit_code, 2) << dry.err;
  EXPECT_NE(dry.err.find("damaged"), std::string::npos) << dry.err;
  EXPECT_EQ(std::count(dry.err.begin(), dry.err.end(), '\n'), 1) << dry.err;
}

// A FIFO with no writer blocked the open forever, even under --dry-run.
TEST_F(BadReplay, APathThatIsNotARegularFileIsRefusedBeforeItIsOpened) {
  const fs::path fifo = path("fifo.h5");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(fifo, {"not a regular file"});
  const auto dry = run("run --dry-run " + study(fifo, "n = 4\nmoves = 2\n"));
  EXPECT_EQ(dry.exit_code, 2) << dry.err;
  EXPECT_NE(dry.err.find("not a regular file"), std::string::npos) << dry.err;
}

}  // namespace
}  // namespace slaterlab
