// Tests of scripts/plot.py (skipped when /usr/bin/python3 lacks h5py or
// matplotlib): one non-empty PNG per experiment of a small results file, a
// VMC energy plot only when the file has VMC runs, and bad input as one line
// with exit code 2.
#include <gtest/gtest.h>

#include "tests/verify/scratch_test.hpp"
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "verify/inputs/config.hpp"
#include "verify/run/runner.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;

const std::string kScript = std::string(SLATERLAB_SOURCE_DIR) + "/scripts/plot.py";
const std::string kDriftScript = std::string(SLATERLAB_SOURCE_DIR) + "/scripts/plot-drift.py";

class Plot : public slaterlab::testing::ScratchTest {
 protected:
  void SetUp() override {
    if (std::system("/usr/bin/python3 -c 'import h5py, numpy, matplotlib' >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "/usr/bin/python3 has no h5py/numpy/matplotlib";
    }
    ScratchTest::SetUp();
  }

  /// Two experiments; an inverse strategy and a QR one (no inverse residual).
  std::string results() const {
    return run(R"(
[reference]
certify = false
[[experiment]]
workload = ["gaussian", "small-step"]
n = 10
moves = 40
checkpoint_every = 10
[[strategy]]
name = "sm"
precision = ["float", "double"]
[[strategy]]
name = "qr-givens"
)", "results.h5");
  }

  std::string run(const std::string& toml, const std::string& name) const {
    const StudyConfig study = parse_study(toml, "plot study");
    const std::string out = path(name);
    ResultWriter writer = ResultWriter::create(out, RunMetadata{"t", "t", "t", "t", "t", "t"});
    run_study(study, writer, {});
    writer.commit();
    return out;
  }

  struct Outcome {
    int code;
    std::string err;
  };
  Outcome plot(const std::string& arguments, const std::string& script = kScript) const {
    const std::string err = path("stderr.txt");
    const int status = std::system(
        ("/usr/bin/python3 " + script + " " + arguments + " >/dev/null 2>" + err).c_str());
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
  }

};

/// Width in pixels from a PNG's IHDR chunk, 0 if the file is not a PNG.
std::uint32_t png_width(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char header[24] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (!in || !std::equal(signature, signature + 8, header)) return 0;
  return std::uint32_t(header[16]) << 24 | std::uint32_t(header[17]) << 16 |
         std::uint32_t(header[18]) << 8 | header[19];
}

TEST_F(Plot, OnePngPerExperiment) {
  const std::string file = results();
  const Outcome o = plot(file + " -o " + path("plots"));
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* name : {"gaussian-n10.png", "small-step-n10.png"}) {
    const std::string png = path("plots/") + name;
    ASSERT_TRUE(fs::exists(png)) << png;
    EXPECT_GT(fs::file_size(png), 10000u) << png;  // three drawn panels, not a blank canvas
    // Three panels of 4.2 in plus 1.8 in for the legend, at 100 dpi.
    EXPECT_EQ(png_width(png), 1440u) << png;
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(path("plots")), fs::directory_iterator()), 2);

  // --experiment selects; an unknown name is bad input.
  ASSERT_EQ(plot(file + " -o " + path("one") + " -e small-step-n10").code, 0);
  EXPECT_TRUE(fs::exists(path("one/small-step-n10.png")));
  EXPECT_FALSE(fs::exists(path("one/gaussian-n10.png")));
  const Outcome unknown = plot(file + " -o " + path("none") + " -e nope");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("no experiment named nope"), std::string::npos) << unknown.err;
}

TEST_F(Plot, VmcEnergiesGetTheirOwnPlotWhenPresent) {
  const std::string without = results();
  ASSERT_EQ(plot(without + " -o " + path("plain")).code, 0);
  EXPECT_FALSE(fs::exists(path("plain/vmc-energies.png")));

  // A file with two finished VMC runs (values as a VMC study writes them).
  const std::string with = path("vmc.h5");
  {
    ResultWriter writer = ResultWriter::create(with, RunMetadata{"t", "t", "t", "t", "t", "t"});
    for (const char* name : {"pbp-n4", "qs-n4"}) {
      VmcRun run;
      run.info.name = name;
      run.info.n = 4;
      run.info.alpha = 0.8;
      run.info.omega = 1.0;
      run.info.orbitals = "analytic";
      run.info.scheme = name[0] == 'p' ? "pbp" : "qs";
      run.info.strategy = "sm-double";
      run.info.walkers = 1;
      run.info.sweeps = 4;
      run.summary.exact_energy = 9.225;
      run.summary.energy = name[0] == 'p' ? 9.23 : 9.30;
      run.summary.error = 0.01;
      run.walkers = {VmcWalkerRow{}};
      run.blocking = {BlockingRow{}};
      run.energy = {{9.2, 9.3, 9.2, 9.22}};
      writer.add_vmc_run(run);
    }
    writer.commit();
  }
  const Outcome o = plot(with + " -o " + path("plots"));
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string png = path("plots/vmc-energies.png");
  ASSERT_TRUE(fs::exists(png));
  EXPECT_GT(png_width(png), 0u);
  EXPECT_GT(fs::file_size(png), 5000u);
}

TEST_F(Plot, DriftOverRepeatsIsOnePngWithAColumnPerN) {
  const std::string file = run(R"(
[reference]
certify = false
[[experiment]]
n = [8, 12]
moves = 48
checkpoint_every = 8
repeats = 2
[[strategy]]
name = "sm"
precision = ["float", "double"]
[[strategy]]
name = "delayed"
k = [2, 4]
)", "repeats.h5");
  const Outcome o = plot(file + " -o " + path("drift.png"), kDriftScript);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(png_width(path("drift.png")), 1000u);  // two columns of 5 in at 100 dpi
  EXPECT_GT(fs::file_size(path("drift.png")), 20000u);  // four drawn panels

  const Outcome none = plot(results() + " -o " + path("none.png"), kDriftScript);
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("has no repeated experiments"), std::string::npos) << none.err;
  EXPECT_FALSE(fs::exists(path("none.png")));
}

TEST_F(Plot, BadInputIsOneLineAndExitTwo) {
  EXPECT_EQ(plot("--help").code, 0);
  Outcome o = plot(path("missing.h5") + " -o " + path("plots"));
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err, "plot.py: error: cannot read " + path("missing.h5") + ": no such file\n");
  EXPECT_FALSE(fs::exists(path("plots")));

  std::ofstream(path("text.h5")) << "not HDF5\n";
  o = plot(path("text.h5") + " -o " + path("plots"));
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err.rfind("plot.py: error: cannot read " + path("text.h5"), 0), 0u) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;

  o = plot(results() + " -o /proc/plots");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("/proc/plots"), std::string::npos) << o.err;
  EXPECT_EQ(plot("").code, 2);  // no file at all: argparse's usage error
}

}  // namespace
}  // namespace slaterlab
