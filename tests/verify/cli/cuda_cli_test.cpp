// The command line with the CUDA names: a study that asks for delayed-cuda
// or a CUDA orbital set where none can run is bad input, named with the
// reason ("no CUDA device available (cudaGetDeviceCount: ...)" in a CUDA
// build without a device, "not built with CUDA (...)" in a build without
// CUDA): exit code 2, one line, no output file. With a device, the same
// studies run.
#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/verify/scratch_test.hpp"
#include "slaterlab/strategies/cuda/device.hpp"

namespace {

namespace fs = std::filesystem;
using slaterlab::testing::CommandResult;

class CudaCli : public slaterlab::testing::ScratchTest {
 protected:
  static std::string reason() {
    return slaterlab::built_with_cuda() ? "no CUDA device available (cudaGetDeviceCount: "
                                        : "not built with CUDA (configure with -DSLATERLAB_CUDA=ON)";
  }

  void expect_refused(const std::string& study, const std::string& name) {
    const std::string out = path("r.h5");
    const CommandResult r = run("run " + write("s.toml", study) + " -o " + out);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("slaterlab: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(name + ": " + reason()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out + ".partial"));
  }

  void expect_runs(const std::string& study) {
    const CommandResult r = run("run " + write("s.toml", study) + " -q -o " + path("r.h5"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(path("r.h5")));
  }

  static constexpr const char* kDelayedStudy =
      "[[experiment]]\nworkload = \"gaussian\"\nn = 24\nmoves = 60\ncheckpoint_every = 20\n"
      "[[strategy]]\nname = \"delayed-cuda\"\nk = 8\nprecision = [\"float\", \"double\", \"mixed\"]\n"
      "[[strategy]]\nname = \"delayed\"\nk = 8\n";
  static std::string vmc_study(const std::string& orbitals) {
    return "[[vmc]]\nn = 4\nalpha = 0.8\ngrid = 16\nwalkers = 2\nsweeps = 40\nequilibration = 4\n"
           "orbitals = \"" + orbitals + "\"\n";
  }
};

TEST_F(CudaCli, DelayedCudaWithoutDeviceIsBadInputNamingTheReason) {
  if (!slaterlab::cuda_unavailable()) {
    expect_runs(kDelayedStudy);  // with a device the lockstep runner judges it like any strategy
    return;
  }
  expect_refused(kDelayedStudy, "delayed-cuda");
}

TEST_F(CudaCli, CudaOrbitalsWithoutDeviceAreBadInputNamingTheReason) {
  for (const std::string orbitals : {"bspline-float-cuda", "bspline-double-cuda"}) {
    SCOPED_TRACE(orbitals);
    if (!slaterlab::cuda_unavailable()) {
      expect_runs(vmc_study(orbitals));
      continue;
    }
    expect_refused(vmc_study(orbitals), orbitals);
  }
}

}  // namespace
