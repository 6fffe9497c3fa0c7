// Tests of the replay workload: the file schema and its two layouts, the
// workload and the configuration keys, the runner applying recorded
// decisions and uniforms, every kind of bad file (one line naming the file
// and the problem, exit code 2, no output), and scripts/write_replay.py
// (when /usr/bin/python3 has h5py) end to end through the command line.
#include "verify/inputs/replay.hpp"
#include "verify/inputs/workload_registry.hpp"

#include <gtest/gtest.h>

#include "tests/verify/molecule_fixtures.hpp"
#include "tests/verify/scratch_test.hpp"
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "verify/inputs/config.hpp"
#include "verify/inputs/rng.hpp"
#include "verify/run/runner.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;

/// A valid replay: Gaussian N x N matrix and M Gaussian columns, sweep order.
ReplayData example(Eigen::Index n = 6, Eigen::Index m = 10, std::uint64_t seed = 3) {
  Rng rng(seed, 0);
  ReplayData d;
  d.initial = rng.normal_matrix(n, n);
  d.columns = rng.normal_matrix(n, m);
  for (Eigen::Index t = 0; t < m; ++t) d.electron.push_back(t % n);
  d.metadata = {{"code", "test"}, {"system", "gaussian"}};
  return d;
}

class Replay : public slaterlab::testing::ScratchTest {
 protected:
  /// A study replaying `file` with sm in double (file relative to the TOML).
  std::string study(const std::string& file, const std::string& extra = "") const {
    return write("replay.toml",
                 "[reference]\ncertify = false\n[[experiment]]\nworkload = "
                 "\"replay\"\nfile = \"" +
                     file + "\"\ncheckpoint_every = 5\n" + extra + "[[strategy]]\nname = \"sm\"\n");
  }

  ResultsFile run(const StudyConfig& s) const {
    const fs::path out = dir_ / "r.h5";
    ResultWriter writer = ResultWriter::create(out, RunMetadata{"t", "t", "t", "t", "t", "t"});
    run_study(s, writer, {});
    writer.commit();
    return read_results(out);
  }

  using Cli = slaterlab::testing::CommandResult;
  Cli cli(const std::string& arguments) const { return ScratchTest::run(arguments); }
};

/// dataset[r][c] of a 2-D float64 dataset, read with the plain HDF5 API.
double element(const std::string& file, const char* dataset, hsize_t r, hsize_t c) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
  hsize_t dims[2] = {0, 0};
  const hid_t space = H5Dget_space(d);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  std::vector<double> all(dims[0] * dims[1]);
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data());
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  return all[r * dims[1] + c];  // HDF5 (and numpy) order: the last index runs fastest
}

TEST_F(Replay, BothLayoutsRoundTripAndMeanWhatTheSchemaSays) {
  ReplayData d = example();
  d.accept = std::vector<bool>{1, 0, 1, 1, 0, 0, 1, 0, 1, 1};
  d.uniform = std::vector<double>(10, 0.25);
  for (const std::string layout : {"row-major", "column-major"}) {
    d.layout = layout;
    const std::string file = path(layout + ".h5");
    write_replay(file, d);
    const ReplayData back = read_replay(file);
    EXPECT_EQ(back.initial, d.initial) << layout;
    EXPECT_EQ(back.columns, d.columns);
    EXPECT_EQ(back.electron, d.electron);
    EXPECT_EQ(back.accept, d.accept);
    EXPECT_EQ(back.uniform, d.uniform);
    EXPECT_EQ(back.layout, layout);
    EXPECT_EQ(back.metadata, d.metadata);
    // The documented meaning: row-major dataset[i, j] = A(i, j), column-major
    // dataset[j, i] = A(i, j); moves/column[m, i] = entry i of move m's column.
    if (layout == "row-major") {
      EXPECT_EQ(element(file, "initial_matrix", 1, 4), d.initial(1, 4));
    } else {
      EXPECT_EQ(element(file, "initial_matrix", 4, 1), d.initial(1, 4));
    }
    EXPECT_EQ(element(file, "moves/column", 7, 2), d.columns(2, 7));
    const ReplayShape shape = read_replay_shape(file);
    EXPECT_EQ(shape.n, 6);
    EXPECT_EQ(shape.moves, 10);
  }
}

TEST_F(Replay, WorkloadServesTheMovesInOrderWithTheirDecisions) {
  ReplayData d = example();
  d.accept = std::vector<bool>(10, true);
  d.uniform = std::vector<double>(10, 0.5);
  write_replay(path("r.h5"), d);
  WorkloadSpec spec;
  spec.kind = "replay";
  spec.n = 6;
  spec.file = path("r.h5");
  auto w = make_workload(spec);
  EXPECT_EQ(w->initial_matrix(), d.initial);
  for (Eigen::Index t = 0; t < 10; ++t) {
    const Move m = w->next_move(d.initial);
    EXPECT_EQ(m.k, d.electron[std::size_t(t)]);
    EXPECT_EQ(m.column, d.columns.col(t));
    EXPECT_EQ(m.accept, std::optional<bool>(true));
    EXPECT_EQ(m.uniform, std::optional<double>(0.5));
  }
  EXPECT_THROW(w->next_move(d.initial), std::logic_error);  // only 10 moves
  bool meta = false;
  for (const auto& [key, value] : w->parameters())
    meta = meta || (key == "meta.code" && value == "test");
  EXPECT_TRUE(meta);

  spec.n = 7;
  EXPECT_THROW(make_workload(spec), std::invalid_argument);
}

TEST_F(Replay, ConfigTakesNAndMovesFromTheFileRelativeToTheToml) {
  write_replay(path("r.h5"), example());
  StudyConfig s = load_study(study("r.h5"));
  ASSERT_EQ(s.experiments.size(), 1u);
  EXPECT_EQ(s.experiments[0].workload.n, 6);
  EXPECT_EQ(s.experiments[0].moves, 10);
  EXPECT_EQ(s.experiments[0].name, "replay-n6");
  EXPECT_EQ(fs::path(s.experiments[0].workload.file), fs::path(path("r.h5")));
  EXPECT_NE(s.resolved_toml.find("file = '" + path("r.h5") + "'"), std::string::npos)
      << s.resolved_toml;

  s = load_study(study("r.h5", "n = 6\nmoves = 4\n"));
  EXPECT_EQ(s.experiments[0].moves, 4);
  EXPECT_THROW(load_study(study("r.h5", "n = 5\n")), ConfigError);
  EXPECT_THROW(load_study(study("r.h5", "moves = 11\n")), ConfigError);
  EXPECT_THROW(
      parse_study("[[experiment]]\nworkload = \"replay\"\n[[strategy]]\nname = \"sm\"\n", "t"),
      ConfigError);  // no file
  EXPECT_THROW(
      parse_study("[[experiment]]\nn = 4\nfile = \"x.h5\"\n[[strategy]]\nname = \"sm\"\n", "t"),
      ConfigError);  // file for a gaussian workload
}

TEST_F(Replay, RunnerAppliesRecordedDecisionsAndUniforms) {
  ReplayData d = example(8, 40);
  // Recorded decisions override the reference's: accept exactly these.
  d.accept = std::vector<bool>(40, false);
  for (std::size_t t = 0; t < 40; t += 3) (*d.accept)[t] = true;
  write_replay(path("a.h5"), d);
  ResultsFile r = run(load_study(study("a.h5")));
  ASSERT_EQ(r.experiments[0].reference.size(), 9u);           // move 0 and every 5th up to 40
  EXPECT_EQ(r.experiments[0].reference.back().accepted, 14);  // t = 0, 3, ..., 39
  EXPECT_EQ(r.experiments[0].reference[1].accepted, 2);       // t = 0, 3 in moves 0..4

  // A recorded uniform of 0 makes Metropolis (u < rho^2) accept every move;
  // the shared stream would have rejected some of these Gaussian proposals.
  d.accept.reset();
  d.uniform = std::vector<double>(40, 0.0);
  write_replay(path("u.h5"), d);
  r = run(load_study(study("u.h5")));
  EXPECT_EQ(r.experiments[0].reference.back().accepted, 40);
  d.uniform.reset();
  write_replay(path("none.h5"), d);
  r = run(load_study(study("none.h5")));
  EXPECT_LT(r.experiments[0].reference.back().accepted, 40);
}

// --replay-out: a walk written as a replay file reproduces the study. Every
// strategy sees the same initial matrix, columns and decisions again, so
// every metric of every checkpoint is bit-identical, on the electron gas's
// and a molecule's Metropolis walks and on update cycles (replay schema
// version 2).
TEST_F(Replay, AWalkWrittenAsAReplayFileReproducesTheStudy) {
  write("atom.molden", testing::spd_atom_molden());
  for (const std::string workload :
       {"workload = \"electron-gas\"\nn = 19\nrs = 2.0\nsweeps = 3\n",
        "workload = \"molecule\"\nfile = \"atom.molden\"\nsweeps = 8\n",
        "workload = \"excitation-cycles\"\nn = 12\nrank = 3\nmoves = 40\n"}) {
    SCOPED_TRACE(workload);
    const std::string strategies =
        "[[strategy]]\nname = \"sm\"\nprecision = [\"double\", \"float\"]\n"
        "[[strategy]]\nname = \"delayed\"\nk = 4\n";
    const StudyConfig walk = load_study(write(
        "walk.toml", "[reference]\ncertify = false\n[[experiment]]\nname = \"walk\"\n" + workload +
                         "checkpoint_every = 7\n" + strategies));
    const fs::path recorded = dir_ / "walk.h5";
    {
      ResultWriter writer = ResultWriter::create(recorded, RunMetadata{"t", "t", "t", "t", "t", "t"});
      RunOptions options;
      options.replay_dir = dir_;
      run_study(walk, writer, options);
      writer.commit();
    }
    ASSERT_TRUE(fs::exists(dir_ / "walk.replay.h5"));
    EXPECT_FALSE(fs::exists(dir_ / "walk.replay.h5.partial"));
    const ResultsFile a = read_results(recorded);
    const ResultsFile b = run(load_study(write(
        "again.toml", "[reference]\ncertify = false\n[[experiment]]\nname = \"walk\"\n"
                      "workload = \"replay\"\nfile = \"walk.replay.h5\"\ncheckpoint_every = 7\n" +
                          strategies)));
    ASSERT_EQ(a.experiments.size(), 1u);
    ASSERT_EQ(b.experiments.size(), 1u);
    const auto& x = a.experiments[0];
    const auto& y = b.experiments[0];
    ASSERT_EQ(x.reference.size(), y.reference.size());
    ASSERT_GT(x.reference.size(), 2u);
    for (std::size_t c = 0; c < x.reference.size(); ++c) {
      EXPECT_EQ(x.reference[c].accepted, y.reference[c].accepted);
      EXPECT_EQ(x.reference[c].log_det, y.reference[c].log_det);
    }
    ASSERT_EQ(x.strategies.size(), 3u);
    ASSERT_EQ(y.strategies.size(), 3u);
    // Bit for bit, NaN (nothing measured, e.g. per-update ratios of cycles) included.
    const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    for (std::size_t s = 0; s < x.strategies.size(); ++s) {
      ASSERT_TRUE(x.strategies[s].summary && y.strategies[s].summary);
      const StrategySummary& p = *x.strategies[s].summary;
      const StrategySummary& q = *y.strategies[s].summary;
      EXPECT_TRUE(same(p.worst_log_det_error, q.worst_log_det_error)) << s;
      EXPECT_TRUE(std::isfinite(p.worst_log_det_error)) << s;  // something was compared
      EXPECT_TRUE(same(p.max_ratio_error, q.max_ratio_error)) << s;
      EXPECT_TRUE(same(p.final_inverse_divergence, q.final_inverse_divergence)) << s;
    }
  }
}

// ---- bad files ------------------------------------------------------------------

struct BadFile {
  const char* name;
  std::function<void(ReplayData&)> edit;          // before writing
  std::function<void(const std::string&)> spoil;  // after writing
  const char* message;
};

void set_int_attribute(const std::string& file, const char* name, std::int64_t value) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Adelete(f, name);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(f, name, H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_INT64, &value);
  H5Aclose(a);
  H5Sclose(space);
  H5Fclose(f);
}

void delete_link(const std::string& file, const char* name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, name, H5P_DEFAULT);
  H5Fclose(f);
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const auto kNoEdit = [](ReplayData&) {};
const auto kNoSpoil = [](const std::string&) {};

const std::vector<BadFile> kBadFiles = {
    {"non-square initial matrix", [](ReplayData& d) { d.initial.conservativeResize(6, 5); },
     kNoSpoil, "'initial_matrix' must be a square N x N dataset with N >= 1, got 6 x 5"},
    {"columns of the wrong length", [](ReplayData& d) { d.columns.conservativeResize(5, 10); },
     kNoSpoil, "'moves/column' must be M x N = 10 x 6 (one row per move), got 10 x 5"},
    {"accept of the wrong length", [](ReplayData& d) { d.accept = std::vector<bool>(9, true); },
     kNoSpoil, "'moves/accept' must have one entry per move (M = 10), got 9"},
    {"NaN in the initial matrix", [](ReplayData& d) { d.initial(2, 3) = kNaN; }, kNoSpoil,
     "'initial_matrix' has a non-finite value (NaN) at A(2, 3) (orbital 2, electron 3)"},
    {"infinity in a column",
     [](ReplayData& d) { d.columns(4, 7) = std::numeric_limits<double>::infinity(); }, kNoSpoil,
     "'moves/column' has a non-finite value (inf) in move 7, entry 4"},
    {"electron out of range", [](ReplayData& d) { d.electron[5] = 6; }, kNoSpoil,
     "'moves/electron'[5] = 6 is out of range (N = 6: 0 to 5)"},
    {"negative electron", [](ReplayData& d) { d.electron[0] = -1; }, kNoSpoil,
     "'moves/electron'[0] = -1 is out of range"},
    {"uniform outside [0, 1)", [](ReplayData& d) { d.uniform = std::vector<double>(10, 1.0); },
     kNoSpoil, "'moves/uniform'[0] = 1 is not in [0, 1)"},
    {"wrong schema version", kNoEdit,
     [](const std::string& f) { set_int_attribute(f, "replay_schema_version", 3); },
     "replay_schema_version 3 is not supported (this build reads versions 1 to 2)"},
    {"not a replay file", kNoEdit,
     [](const std::string& f) {
       const hid_t h = H5Fopen(f.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
       H5Adelete(h, "replay_schema_version");
       H5Fclose(h);
     },
     "not a replay file: no root attribute 'replay_schema_version'"},
    {"unknown layout", [](ReplayData& d) { d.layout = "fortran"; }, kNoSpoil,
     "layout 'fortran' must be \"row-major\" or \"column-major\""},
    {"missing dataset", kNoEdit, [](const std::string& f) { delete_link(f, "moves/column"); },
     "missing dataset 'moves/column'"},
    {"missing initial matrix", kNoEdit,
     [](const std::string& f) { delete_link(f, "initial_matrix"); },
     "missing dataset 'initial_matrix'"},
    {"truncated file", kNoEdit,
     [](const std::string& f) { fs::resize_file(f, fs::file_size(f) / 2); }, "truncated"},
    {"not HDF5", kNoEdit, [](const std::string& f) { std::ofstream(f) << "electron,column\n"; },
     "not an HDF5 file"},
};

TEST_F(Replay, EveryBadFileIsOneLineNamingTheFileAndTheProblem) {
  for (const BadFile& bad : kBadFiles) {
    SCOPED_TRACE(bad.name);
    ReplayData d = example();
    bad.edit(d);
    const std::string file = path("bad.h5");
    write_replay(file, d);
    bad.spoil(file);
    try {
      read_replay(file);
      ADD_FAILURE() << "accepted";
    } catch (const ReplayError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("replay file " + file + ": ", 0), 0u) << what;
      EXPECT_NE(what.find(bad.message), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST_F(Replay, EveryBadFileIsRejectedByTheCommandLineWithExitTwo) {
  write_replay(path("missing-not.h5"), example());
  for (const BadFile& bad : kBadFiles) {
    SCOPED_TRACE(bad.name);
    ReplayData d = example();
    bad.edit(d);
    write_replay(path("bad.h5"), d);
    bad.spoil(path("bad.h5"));
    const std::string out = path("out.h5");
    const Cli c = cli("run " + study("bad.h5") + " -o " + out);
    EXPECT_EQ(c.exit_code, 2) << c.err;
    EXPECT_EQ(c.err.rfind("slaterlab: error: ", 0), 0u) << c.err;
    EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
    EXPECT_NE(c.err.find("replay file " + path("bad.h5")), std::string::npos) << c.err;
    EXPECT_NE(c.err.find(bad.message), std::string::npos) << c.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out + ".partial"));
  }
  const Cli c = cli("run " + study("no-such.h5") + " -o " + path("out.h5"));
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("replay file " + path("no-such.h5") + ": no such file"), std::string::npos)
      << c.err;
}

// ---- scripts/write_replay.py ----------------------------------------------------

bool python_has(const char* modules) {
  const std::string command =
      std::string("/usr/bin/python3 -c 'import ") + modules + "' >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

const std::string kScript = std::string(SLATERLAB_SOURCE_DIR) + "/scripts/write_replay.py";

TEST_F(Replay, ExampleScriptWritesAFileThatReplaysThroughTheCommandLine) {
  if (!python_has("h5py, numpy")) GTEST_SKIP() << "/usr/bin/python3 has no h5py/numpy";
  const std::string file = path("replay.h5");
  ASSERT_EQ(std::system(("/usr/bin/python3 " + kScript + " -o " + file +
                         " --n 32 --moves 100 --seed 1 >/dev/null")
                            .c_str()),
            0);
  const ReplayData d = read_replay(file);
  ASSERT_EQ(d.n(), 32);
  ASSERT_EQ(d.moves(), 100);
  ASSERT_TRUE(d.accept && d.uniform);
  const auto recorded = std::count(d.accept->begin(), d.accept->end(), true);
  EXPECT_GT(recorded, 0);
  EXPECT_LT(recorded, 100);

  // The layout convention end to end: without the recorded decisions but
  // with the recorded uniforms, slaterlab's own Metropolis decisions (from
  // the mp reference's ratios of A as it reads it) must reproduce the
  // script's, which came from numpy's A[i, j] = phi_i(r_j). A transposed
  // reading would replace rows instead of columns and decide otherwise.
  delete_link(file, "moves/accept");
  const Cli c = cli("run " + study("replay.h5") + " -q -o " + path("r.h5"));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const ResultsFile r = read_results(path("r.h5"));
  ASSERT_EQ(r.experiments.size(), 1u);
  EXPECT_EQ(r.experiments[0].info.workload, "replay");
  EXPECT_EQ(r.experiments[0].info.n, 32);
  EXPECT_EQ(r.experiments[0].info.moves, 100);
  EXPECT_EQ(r.experiments[0].reference.back().accepted, recorded);

  // The same walk stored column-major gives the same run.
  ASSERT_EQ(std::system(("/usr/bin/python3 " + kScript + " -o " + path("cm.h5") +
                         " --n 32 --moves 100 --seed 1 --layout column-major >/dev/null")
                            .c_str()),
            0);
  EXPECT_EQ(read_replay(path("cm.h5")).initial, d.initial);
  EXPECT_EQ(cli("run " + study("cm.h5") + " -q -o " + path("cm-r.h5")).exit_code, 0);
  const ResultsFile cm = read_results(path("cm-r.h5"));
  ASSERT_EQ(cm.experiments[0].reference.size(), r.experiments[0].reference.size());
  for (std::size_t i = 0; i < cm.experiments[0].reference.size(); ++i) {
    EXPECT_EQ(cm.experiments[0].reference[i].log_det, r.experiments[0].reference[i].log_det);
  }
}

TEST_F(Replay, ExampleScriptHelpAndBadArguments) {
  if (!python_has("h5py, numpy")) GTEST_SKIP() << "/usr/bin/python3 has no h5py/numpy";
  EXPECT_EQ(std::system(("/usr/bin/python3 " + kScript + " --help >/dev/null").c_str()), 0);
  const int status =
      std::system(("/usr/bin/python3 " + kScript + " -o x.h5 --n 0 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const int unwritable = std::system(
      ("/usr/bin/python3 " + kScript + " -o " + path("no/such/dir/x.h5") + " 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(unwritable), 2);
}

}  // namespace
}  // namespace slaterlab
