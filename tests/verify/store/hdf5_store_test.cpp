// The HDF5 results store: round trip, crash safety, no in-place overwrite,
// append mode and error reporting.

#include "verify/store/hdf5_store.hpp"

#include "verify/store/hdf5_handle.hpp"

#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace slaterlab {
namespace {

namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- sample data: every field distinct and derived from the arguments -------

RunMetadata sample_metadata(const std::string& tag) {
  return {"0.1.0-" + tag, "abc123" + tag, "2026-11-21T10:00:00Z", "host-" + tag,
          "slaterlab run --out results.h5 # " + tag,
          "[experiment.gauss]\nworkload = \"gaussian\"\nnote = \"ünïcode " + tag + "\"\n"};
}

ExperimentInfo sample_experiment(const std::string& name, int salt) {
  ExperimentInfo info;
  info.name = name;
  info.workload = salt % 2 ? "randsvd" : "gaussian";
  info.n = 16 + salt;
  info.moves = 1000 * (salt + 1);
  info.checkpoint_every = 100 + salt;
  info.seed = std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(salt);
  info.acceptance = salt % 2 ? "forced" : "metropolis";
  info.acceptance_rate = 0.5 + 1.0 / (3.0 + salt);
  // Deliberately not in alphabetical order: the order must survive.
  info.parameters = {{"kappa", "1e" + std::to_string(salt + 6)}, {"delta", "0.01"},
                     {"mode", std::to_string(salt)}};
  return info;
}

StrategyInfo sample_strategy(const std::string& label, int salt) {
  return {label, salt % 2 ? "delayed" : "sm", salt % 2 ? "float" : "double",
          salt % 2 ? 0x1p-23 : 0x1p-52, 50 + salt, 1e-8 * (salt + 1), 4 + salt,
          "variant-" + std::to_string(salt),
          // An external kernel's record on odd salts, none (a built-in) on even ones.
          salt % 2 ? std::vector<std::pair<std::string, std::string>>{
                         {"library", "/lib/libk" + std::to_string(salt) + ".so"},
                         {"library_sha256", std::string(64, 'a')},
                         {"kernel_name", "k"},
                         {"kernel_version", "1." + std::to_string(salt)}}
                   : std::vector<std::pair<std::string, std::string>>{},
          // Named events on odd salts (columns after the fixed ones), none on even ones.
          salt % 2 ? std::vector<EventColumn>{{"flushes", "flushes so far"},
                                              {"splits", "splits so far"},
                                              {"cycles_declined", "cycles declined so far"}}
                   : std::vector<EventColumn>{}};
}

ReferenceCheckpoint sample_reference_row(int i, int salt) {
  return {100 * (i + 1), 60 * (i + 1) + salt, -12.345678901234567 * (i + 1) / 7.0,
          i % 2 ? -1 : 1, 1e3 + i / 3.0, i == 0 ? kNaN : 1e5 * (i + salt), 0.1 * i / 3.0};
}

StrategyCheckpoint sample_strategy_row(int i, int salt) {
  StrategyCheckpoint row;
  const double base = (i + 1) * (salt + 1) / 7.0;
  row.move = 100 * (i + 1);
  row.accepted = 60 * (i + 1) + salt;
  row.log_det_error = base * 1e-13;
  row.log_det_error_eps = base * 1e-13 / 0x1p-52;
  row.sign_agrees = (i + salt) % 3 ? 1 : 0;
  row.ratio_error_max = base * 3e-12;
  row.ratio_error_max_eps = base * 3e-12 / 0x1p-52;
  row.ratio_error_rms = base * 1e-12;
  row.ratio_error_normalised_max = base * 0.01;
  row.flips = i + salt;
  row.inverse_residual_max = salt % 2 ? kNaN : base * 1e-11;
  row.inverse_residual_fro = salt % 2 ? kNaN : base * 5e-12;
  row.inverse_divergence = base * 2e-10;
  row.qr_residual = salt % 2 ? base * 1e-15 : kNaN;
  row.orthogonality_loss = salt % 2 ? base * 2e-15 : kNaN;
  row.condition_estimate = 1e4 * base;
  row.breakdowns = i / 2;
  row.recomputes = i / 3 + salt;
  if (salt % 2) row.events = {{"flushes", i * 4}, {"splits", i % 2}, {"cycles_declined", i / 2}};
  row.elapsed_s = 0.001 * base;
  return row;
}

StrategySummary sample_summary(int salt) {
  StrategySummary s;
  s.worst_log_det_error = 1.1e-12 * (salt + 1) / 3.0;
  s.final_log_det_error = 7e-13 * (salt + 1);
  s.max_ratio_error = 3.1e-12 * (salt + 1);
  s.max_ratio_error_eps = 3.1e-12 * (salt + 1) / 0x1p-52;
  s.max_ratio_error_normalised = 0.02 * (salt + 1);
  s.max_inverse_residual = salt % 2 ? kNaN : 4e-11;
  s.final_inverse_divergence = 2e-10 / (salt + 1);
  s.max_inverse_divergence = 3e-10 / (salt + 1);
  s.max_qr_residual = salt % 2 ? 1e-15 : kNaN;
  s.max_orthogonality_loss = salt % 2 ? 2e-15 : kNaN;
  s.sign_disagreements = salt;
  s.flips = 3 + salt;
  s.breakdowns = 2 * salt;
  s.recomputes = 10 + salt;
  if (salt % 2) s.events = {{"flushes", 4 * salt}, {"splits", salt}, {"cycles_declined", 2 * salt}};
  s.elapsed_s = 0.25 * (salt + 1);
  s.failed = salt == 3;
  s.failure = s.failed ? "singular update at move 812" : "";
  return s;
}

CertifiedLogDet sample_certified(int salt) {
  return {salt != 2, -12.3 - salt / 7.0, 1e-30 * (salt + 1), salt % 2 ? -1 : 1, 128 + salt,
          -12.3 - salt / 7.0 + 1e-31, salt != 2, salt == 2 ? "precision exhausted" : ""};
}

// ---- bit-exact comparisons ----------------------------------------------------

::testing::AssertionResult same_bits(double a, double b) {
  if (std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " != " << b << " (bitwise)";
}

void expect_equal(const RunMetadata& a, const RunMetadata& b) {
  EXPECT_EQ(a.tool_version, b.tool_version);
  EXPECT_EQ(a.git_commit, b.git_commit);
  EXPECT_EQ(a.created_utc, b.created_utc);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.command_line, b.command_line);
  EXPECT_EQ(a.config_toml, b.config_toml);
}

void expect_equal(const ExperimentInfo& a, const ExperimentInfo& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.moves, b.moves);
  EXPECT_EQ(a.checkpoint_every, b.checkpoint_every);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.acceptance, b.acceptance);
  EXPECT_TRUE(same_bits(a.acceptance_rate, b.acceptance_rate));
  EXPECT_EQ(a.parameters, b.parameters);
}

void expect_equal(const StrategyInfo& a, const StrategyInfo& b) {
  EXPECT_EQ(a.label, b.label);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_TRUE(same_bits(a.epsilon, b.epsilon));
  EXPECT_EQ(a.recompute_every, b.recompute_every);
  EXPECT_TRUE(same_bits(a.breakdown, b.breakdown));
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.provenance, b.provenance);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].name, b.events[i].name);
    EXPECT_EQ(a.events[i].description, b.events[i].description);
  }
}

void expect_equal(const ReferenceCheckpoint& a, const ReferenceCheckpoint& b) {
  EXPECT_EQ(a.move, b.move);
  EXPECT_EQ(a.accepted, b.accepted);
  EXPECT_TRUE(same_bits(a.log_det, b.log_det));
  EXPECT_EQ(a.sign, b.sign);
  EXPECT_TRUE(same_bits(a.condition_1, b.condition_1));
  EXPECT_TRUE(same_bits(a.ratio_condition_max, b.ratio_condition_max));
  EXPECT_TRUE(same_bits(a.elapsed_s, b.elapsed_s));
}

void expect_equal(const StrategyCheckpoint& a, const StrategyCheckpoint& b) {
  EXPECT_EQ(a.move, b.move);
  EXPECT_EQ(a.accepted, b.accepted);
  EXPECT_TRUE(same_bits(a.log_det_error, b.log_det_error));
  EXPECT_TRUE(same_bits(a.log_det_error_eps, b.log_det_error_eps));
  EXPECT_EQ(a.sign_agrees, b.sign_agrees);
  EXPECT_TRUE(same_bits(a.ratio_error_max, b.ratio_error_max));
  EXPECT_TRUE(same_bits(a.ratio_error_max_eps, b.ratio_error_max_eps));
  EXPECT_TRUE(same_bits(a.ratio_error_rms, b.ratio_error_rms));
  EXPECT_TRUE(same_bits(a.ratio_error_normalised_max, b.ratio_error_normalised_max));
  EXPECT_EQ(a.flips, b.flips);
  EXPECT_TRUE(same_bits(a.inverse_residual_max, b.inverse_residual_max));
  EXPECT_TRUE(same_bits(a.inverse_residual_fro, b.inverse_residual_fro));
  EXPECT_TRUE(same_bits(a.inverse_divergence, b.inverse_divergence));
  EXPECT_TRUE(same_bits(a.qr_residual, b.qr_residual));
  EXPECT_TRUE(same_bits(a.orthogonality_loss, b.orthogonality_loss));
  EXPECT_TRUE(same_bits(a.condition_estimate, b.condition_estimate));
  EXPECT_EQ(a.breakdowns, b.breakdowns);
  EXPECT_EQ(a.recomputes, b.recomputes);
  EXPECT_EQ(a.events, b.events);
  EXPECT_TRUE(same_bits(a.elapsed_s, b.elapsed_s));
}

void expect_equal(const StrategySummary& a, const StrategySummary& b) {
  EXPECT_TRUE(same_bits(a.worst_log_det_error, b.worst_log_det_error));
  EXPECT_TRUE(same_bits(a.final_log_det_error, b.final_log_det_error));
  EXPECT_TRUE(same_bits(a.max_ratio_error, b.max_ratio_error));
  EXPECT_TRUE(same_bits(a.max_ratio_error_eps, b.max_ratio_error_eps));
  EXPECT_TRUE(same_bits(a.max_ratio_error_normalised, b.max_ratio_error_normalised));
  EXPECT_TRUE(same_bits(a.max_inverse_residual, b.max_inverse_residual));
  EXPECT_TRUE(same_bits(a.final_inverse_divergence, b.final_inverse_divergence));
  EXPECT_TRUE(same_bits(a.max_inverse_divergence, b.max_inverse_divergence));
  EXPECT_TRUE(same_bits(a.max_qr_residual, b.max_qr_residual));
  EXPECT_TRUE(same_bits(a.max_orthogonality_loss, b.max_orthogonality_loss));
  EXPECT_EQ(a.sign_disagreements, b.sign_disagreements);
  EXPECT_EQ(a.flips, b.flips);
  EXPECT_EQ(a.breakdowns, b.breakdowns);
  EXPECT_EQ(a.recomputes, b.recomputes);
  EXPECT_EQ(a.events, b.events);
  EXPECT_TRUE(same_bits(a.elapsed_s, b.elapsed_s));
  EXPECT_EQ(a.failed, b.failed);
  EXPECT_EQ(a.failure, b.failure);
}

void expect_equal(const CertifiedLogDet& a, const CertifiedLogDet& b) {
  EXPECT_EQ(a.certified, b.certified);
  EXPECT_TRUE(same_bits(a.log_abs_mid, b.log_abs_mid));
  EXPECT_TRUE(same_bits(a.log_abs_radius, b.log_abs_radius));
  EXPECT_EQ(a.sign, b.sign);
  EXPECT_EQ(a.precision_bits, b.precision_bits);
  EXPECT_TRUE(same_bits(a.mp_log_abs, b.mp_log_abs));
  EXPECT_EQ(a.mp_inside, b.mp_inside);
  EXPECT_EQ(a.message, b.message);
}

// ---- a written run and its expected content ------------------------------------

struct ExpectedStrategy {
  StrategyInfo info;
  std::vector<StrategyCheckpoint> rows;
  std::optional<StrategySummary> summary;
};

struct ExpectedExperiment {
  ExperimentInfo info;
  std::vector<ReferenceCheckpoint> reference;
  std::optional<CertifiedLogDet> initial, final;
  std::vector<ExpectedStrategy> strategies;
};

/// Writes experiments named names (2 strategies each, some checkpoints) and
/// returns what was written. Does not commit.
std::vector<ExpectedExperiment> write_experiments(ResultWriter& writer,
                                                  const std::vector<std::string>& names,
                                                  int rows = 4) {
  std::vector<ExpectedExperiment> out;
  int salt = 0;
  for (const auto& name : names) {
    ExpectedExperiment e{sample_experiment(name, salt), {}, {}, {}, {}};
    const auto handle = writer.begin_experiment(e.info);
    for (int i = 0; i <= rows; ++i) {
      e.reference.push_back(sample_reference_row(i, salt));
      writer.append(handle, e.reference.back());
    }
    if (salt == 0) {
      e.initial = sample_certified(salt + 2);
      writer.set_certified(handle, "initial", *e.initial);
    }
    e.final = sample_certified(salt + 1);
    writer.set_certified(handle, "final", *e.final);
    for (const std::string label : {"sm_double", "delayed-float"}) {
      const int s = salt + static_cast<int>(e.strategies.size()) * 2 + 1;
      ExpectedStrategy st{sample_strategy(label, s), {}, sample_summary(s)};
      const auto sh = writer.begin_strategy(handle, st.info);
      for (int i = 0; i < rows; ++i) {
        st.rows.push_back(sample_strategy_row(i, s));
        writer.append(sh, st.rows.back());
      }
      writer.finish_strategy(sh, *st.summary);
      e.strategies.push_back(std::move(st));
    }
    out.push_back(std::move(e));
    ++salt;
  }
  return out;
}

void expect_matches(const ExperimentResult& got, const ExpectedExperiment& want) {
  SCOPED_TRACE("experiment " + want.info.name);
  expect_equal(got.info, want.info);
  ASSERT_EQ(got.certified_initial.has_value(), want.initial.has_value());
  if (want.initial) expect_equal(*got.certified_initial, *want.initial);
  ASSERT_EQ(got.certified_final.has_value(), want.final.has_value());
  if (want.final) expect_equal(*got.certified_final, *want.final);
  ASSERT_EQ(got.reference.size(), want.reference.size());
  for (std::size_t i = 0; i < want.reference.size(); ++i)
    expect_equal(got.reference[i], want.reference[i]);
  ASSERT_EQ(got.strategies.size(), want.strategies.size());
  for (std::size_t s = 0; s < want.strategies.size(); ++s) {
    SCOPED_TRACE("strategy " + want.strategies[s].info.label);
    const auto& gs = got.strategies[s];
    const auto& ws = want.strategies[s];
    expect_equal(gs.info, ws.info);
    ASSERT_EQ(gs.summary.has_value(), ws.summary.has_value());
    if (ws.summary) expect_equal(*gs.summary, *ws.summary);
    ASSERT_EQ(gs.checkpoints.size(), ws.rows.size());
    for (std::size_t i = 0; i < ws.rows.size(); ++i) expect_equal(gs.checkpoints[i], ws.rows[i]);
  }
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs fn, expects IoError whose message names path and contains fragment.
template <class Fn>
void expect_io_error(Fn&& fn, const fs::path& path, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no IoError for " << path;
  } catch (const IoError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

class Hdf5StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "slaterlab-h5-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    final_ = dir_ / "results.h5";
  }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0700);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  /// A committed file holding experiments named names.
  std::vector<ExpectedExperiment> write_committed(const std::vector<std::string>& names,
                                                  const std::string& tag = "a") {
    auto writer = ResultWriter::create(final_, sample_metadata(tag));
    auto expected = write_experiments(writer, names);
    writer.commit();
    return expected;
  }

  fs::path dir_;
  fs::path final_;
};

// ---- round trip ------------------------------------------------------------------

TEST_F(Hdf5StoreTest, RoundTripPreservesEveryFieldBitExact) {
  const auto metadata = sample_metadata("rt");
  auto writer = ResultWriter::create(final_, metadata);
  EXPECT_EQ(writer.partial_path(), partial_path(final_));
  const auto expected = write_experiments(writer, {"zeta_gauss", "alpha_randsvd"});
  EXPECT_TRUE(fs::exists(partial_path(final_)));
  EXPECT_FALSE(fs::exists(final_));
  writer.commit();
  EXPECT_TRUE(fs::exists(final_));
  EXPECT_FALSE(fs::exists(partial_path(final_)));

  const auto results = read_results(final_);
  EXPECT_EQ(results.schema_version, kSchemaVersion);
  expect_equal(results.metadata, metadata);
  EXPECT_TRUE(results.complete());
  ASSERT_EQ(results.experiments.size(), 2u);  // in the order written, not by name
  for (std::size_t e = 0; e < expected.size(); ++e) {
    expect_matches(results.experiments[e], expected[e]);
    EXPECT_FALSE(results.experiments[e].appended_by.has_value());
  }
}

TEST_F(Hdf5StoreTest, ReadWithoutCheckpointsSkipsTablesOnly) {
  const auto expected = write_committed({"e1"});
  const auto results = read_results(final_, ReadOptions{.checkpoints = false});
  ASSERT_EQ(results.experiments.size(), 1u);
  const auto& e = results.experiments[0];
  EXPECT_TRUE(e.reference.empty());
  ASSERT_EQ(e.strategies.size(), expected[0].strategies.size());
  for (const auto& s : e.strategies) {
    EXPECT_TRUE(s.checkpoints.empty());
    EXPECT_TRUE(s.summary.has_value());
  }
  expect_equal(e.info, expected[0].info);
}

// The layout promised to h5py/h5dump users, checked with the plain C API.
TEST_F(Hdf5StoreTest, FileIsSelfDescribing) {
  write_committed({"e1"});
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(final_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  auto string_array = [](hid_t object, const char* name) {
    std::vector<std::string> out;
    const hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
    if (attr < 0) return out;
    const hid_t space = H5Aget_space(attr);
    std::vector<char*> data(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    if (H5Aread(attr, type, data.data()) >= 0)
      for (char* s : data) out.emplace_back(s), H5free_memory(s);
    H5Tclose(type), H5Sclose(space), H5Aclose(attr);
    return out;
  };
  for (const char* path : {"/experiments/e1/reference/checkpoints",
                           "/experiments/e1/strategies/sm_double/checkpoints"}) {
    SCOPED_TRACE(path);
    const hid_t dataset = H5Dopen2(file, path, H5P_DEFAULT);
    ASSERT_GE(dataset, 0);
    const hid_t type = H5Dget_type(dataset);
    EXPECT_EQ(H5Tget_class(type), H5T_COMPOUND);
    const int members = H5Tget_nmembers(type);
    EXPECT_EQ(string_array(dataset, "column_units").size(), static_cast<std::size_t>(members));
    EXPECT_EQ(string_array(dataset, "column_descriptions").size(),
              static_cast<std::size_t>(members));
    hsize_t maximum = 0;
    const hid_t space = H5Dget_space(dataset);
    H5Sget_simple_extent_dims(space, nullptr, &maximum);
    EXPECT_EQ(maximum, H5S_UNLIMITED);  // extendible
    H5Sclose(space), H5Tclose(type), H5Dclose(dataset);
  }
  const hid_t group = H5Gopen2(file, "/experiments/e1/strategies/sm_double", H5P_DEFAULT);
  ASSERT_GE(group, 0);
  const auto keys = string_array(group, "summary_keys");
  const auto units = string_array(group, "summary_units");
  EXPECT_FALSE(keys.empty());
  EXPECT_EQ(keys.size(), units.size());
  for (const auto& key : keys) EXPECT_GT(H5Aexists(group, key.c_str()), 0) << key;
  EXPECT_GT(H5Aexists(file, "schema_version"), 0);
  EXPECT_GT(H5Aexists(group, "label"), 0);
  H5Gclose(group);
  H5Fclose(file);
}

TEST_F(Hdf5StoreTest, HeaderDumpsWithH5dump) {
  if (std::system("command -v h5dump > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "h5dump not installed";
  write_committed({"e1"});
  const auto out = dir_ / "dump.txt";
  const std::string command = "h5dump -H '" + final_.string() + "' > '" + out.string() + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << file_bytes(out);
  const auto dump = file_bytes(out);
  EXPECT_NE(dump.find("ratio_error_max_eps"), std::string::npos);
  EXPECT_NE(dump.find("summary_units"), std::string::npos);
}

// ---- crash safety -----------------------------------------------------------

TEST_F(Hdf5StoreTest, KilledRunLeavesReadablePartialWithEveryCompletedCheckpoint) {
  constexpr int kRows = 7;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Child: write some checkpoints, then die without any clean-up.
    try {
      auto writer = ResultWriter::create(final_, sample_metadata("killed"));
      const auto e = writer.begin_experiment(sample_experiment("crash", 0));
      const auto s = writer.begin_strategy(e, sample_strategy("sm_float", 1));
      const auto done = writer.begin_strategy(e, sample_strategy("recompute", 2));
      for (int i = 0; i < kRows; ++i) {
        writer.append(e, sample_reference_row(i, 0));
        writer.append(s, sample_strategy_row(i, 1));
        writer.append(done, sample_strategy_row(i, 2));
      }
      writer.finish_strategy(done, sample_summary(2));
      ::raise(SIGKILL);
    } catch (...) {
    }
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  ASSERT_EQ(WTERMSIG(status), SIGKILL);

  EXPECT_FALSE(fs::exists(final_));
  const auto partial = partial_path(final_);
  ASSERT_TRUE(fs::exists(partial));
  const auto results = read_results(partial);
  EXPECT_FALSE(results.complete());
  expect_equal(results.metadata, sample_metadata("killed"));
  ASSERT_EQ(results.experiments.size(), 1u);
  const auto& e = results.experiments[0];
  ASSERT_EQ(e.reference.size(), static_cast<std::size_t>(kRows));
  ASSERT_EQ(e.strategies.size(), 2u);
  EXPECT_FALSE(e.strategies[0].summary.has_value());  // still running when killed
  ASSERT_TRUE(e.strategies[1].summary.has_value());
  expect_equal(*e.strategies[1].summary, sample_summary(2));
  for (int i = 0; i < kRows; ++i) {
    expect_equal(e.reference[i], sample_reference_row(i, 0));
    expect_equal(e.strategies[0].checkpoints.at(i), sample_strategy_row(i, 1));
    expect_equal(e.strategies[1].checkpoints.at(i), sample_strategy_row(i, 2));
  }
}

TEST_F(Hdf5StoreTest, KeepPartialKeepsTheFileOfAnInterruptedRun) {
  {
    auto writer = ResultWriter::create(final_, sample_metadata("int"));
    const auto e = writer.begin_experiment(sample_experiment("interrupted", 0));
    writer.append(e, sample_reference_row(0, 0));
    writer.keep_partial();
  }
  EXPECT_FALSE(fs::exists(final_));
  const auto results = read_results(partial_path(final_));
  ASSERT_EQ(results.experiments.size(), 1u);
  EXPECT_EQ(results.experiments[0].reference.size(), 1u);
}

// A second run aimed at the same path must not clobber the .partial that a
// live run is writing.
TEST_F(Hdf5StoreTest, LiveRunsPartialIsNotClobbered) {
  int ready[2], go[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(go), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    try {
      auto writer = ResultWriter::create(final_, sample_metadata("live"));
      const auto e = writer.begin_experiment(sample_experiment("live", 0));
      writer.append(e, sample_reference_row(0, 0));
      writer.keep_partial();
      char byte = 1;
      code = ::write(ready[1], &byte, 1) == 1 && ::read(go[0], &byte, 1) == 1 ? 0 : 6;
    } catch (...) {
      code = 7;
    }
    ::_exit(code);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  const auto partial = partial_path(final_);
  const auto before = file_bytes(partial);
  expect_io_error([&] { check_output_path(final_); }, partial, "another run is writing it");
  expect_io_error([&] { ResultWriter::create(final_, sample_metadata("second")); }, partial,
                  "another run is writing it");
  EXPECT_EQ(file_bytes(partial), before);
  ASSERT_EQ(::write(go[1], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  for (int fd : {ready[0], ready[1], go[0], go[1]}) ::close(fd);
  const auto results = read_results(partial);
  ASSERT_EQ(results.experiments.size(), 1u);
  EXPECT_EQ(results.experiments[0].reference.size(), 1u);
}

// ---- no in-place overwrite ------------------------------------------------------

TEST_F(Hdf5StoreTest, FailedRunLeavesExistingFileIntactAndCommitReplacesIt) {
  write_committed({"old"}, "first");
  const auto before = file_bytes(final_);
  ASSERT_FALSE(before.empty());

  EXPECT_THROW(
      {
        auto writer = ResultWriter::create(final_, sample_metadata("second"));
        write_experiments(writer, {"new"});
        EXPECT_EQ(file_bytes(final_), before);  // untouched while the run writes
        throw std::runtime_error("run failed");
      },
      std::runtime_error);
  EXPECT_EQ(file_bytes(final_), before);
  EXPECT_FALSE(fs::exists(partial_path(final_)));  // the failed run's partial is removed

  write_committed({"new"}, "third");
  const auto results = read_results(final_);
  ASSERT_EQ(results.experiments.size(), 1u);
  EXPECT_EQ(results.experiments[0].info.name, "new");
  EXPECT_EQ(results.metadata.host, sample_metadata("third").host);
}

// A full disk (simulated by a file-size limit in a child process) ends as
// IoError, removes the .partial and leaves the previous results intact.
TEST_F(Hdf5StoreTest, WriteFailureIsIoErrorAndRemovesPartial) {
  write_committed({"old"});
  const auto before = file_bytes(final_);
  const auto message_file = dir_ / "message.txt";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead
    const rlimit limit{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 4;  // no IoError
    try {
      auto writer = ResultWriter::create(final_, sample_metadata("full"));
      const auto e = writer.begin_experiment(sample_experiment("big", 0));
      const auto s = writer.begin_strategy(e, sample_strategy("sm", 0));
      for (int i = 0; i < 100000; ++i) writer.append(s, sample_strategy_row(i, 0));
      writer.commit();
    } catch (const IoError& error) {
      std::ofstream(message_file) << error.what();
      code = 0;
    } catch (...) {
      code = 5;
    }
    // A normal exit, at-exit handlers included: HDF5's own clean-up must not
    // crash on the file whose close failed.
    std::exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << WTERMSIG(status);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const auto message = file_bytes(message_file);
  EXPECT_NE(message.find(partial_path(final_).string()), std::string::npos) << message;
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(partial_path(final_)));
  EXPECT_EQ(file_bytes(final_), before);
}

// ---- append mode ---------------------------------------------------------------

TEST_F(Hdf5StoreTest, AppendAddsExperimentAndRecordsItsRun) {
  const auto first = write_committed({"first"}, "one");
  std::vector<ExpectedExperiment> second;
  {
    auto writer = ResultWriter::create(final_, sample_metadata("two"), /*append=*/true);
    second = write_experiments(writer, {"second"});
    writer.commit();
  }
  EXPECT_FALSE(fs::exists(partial_path(final_)));
  const auto results = read_results(final_);
  expect_equal(results.metadata, sample_metadata("one"));  // root describes the first run
  ASSERT_EQ(results.experiments.size(), 2u);
  expect_matches(results.experiments[0], first[0]);
  expect_matches(results.experiments[1], second[0]);
  EXPECT_FALSE(results.experiments[0].appended_by.has_value());
  ASSERT_TRUE(results.experiments[1].appended_by.has_value());
  expect_equal(*results.experiments[1].appended_by, sample_metadata("two"));
}

TEST_F(Hdf5StoreTest, AppendRejectsDuplicateExperimentAndKeepsFile) {
  write_committed({"first"});
  const auto before = file_bytes(final_);
  {
    auto writer = ResultWriter::create(final_, sample_metadata("dup"), /*append=*/true);
    try {
      writer.begin_experiment(sample_experiment("first", 1));
      ADD_FAILURE() << "duplicate experiment accepted";
    } catch (const IoError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("'first'"), std::string::npos) << message;
      EXPECT_NE(message.find(final_.string()), std::string::npos) << message;
    }
  }  // destroyed without commit
  EXPECT_FALSE(fs::exists(partial_path(final_)));
  EXPECT_EQ(file_bytes(final_), before);
}

TEST_F(Hdf5StoreTest, AppendNeedsAnExistingResultsFileOfThisSchema) {
  EXPECT_THROW(ResultWriter::create(final_, sample_metadata("x"), true), IoError);
  EXPECT_THROW(check_output_path(final_, true), IoError);

  write_committed({"e"});
  // Pretend a future schema wrote the file.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fopen(final_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const int future = kSchemaVersion + 1;
  const hid_t attr = H5Aopen(file, "schema_version", H5P_DEFAULT);
  ASSERT_GE(attr, 0);
  ASSERT_GE(H5Awrite(attr, H5T_NATIVE_INT, &future), 0);
  H5Aclose(attr);
  H5Fclose(file);

  for (auto attempt :
       {+[](const fs::path& p) { ResultWriter::create(p, sample_metadata("y"), true); },
        +[](const fs::path& p) { read_results(p); }}) {
    try {
      attempt(final_);
      ADD_FAILURE() << "schema_version " << future << " accepted";
    } catch (const IoError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(final_.string()), std::string::npos) << message;
      EXPECT_NE(message.find("schema_version " + std::to_string(future)), std::string::npos)
          << message;
    }
  }
}

// ---- error reporting -------------------------------------------------------------

TEST_F(Hdf5StoreTest, NonexistentDirectoryIsIoError) {
  const fs::path target = dir_ / "no" / "such" / "results.h5";
  expect_io_error([&] { check_output_path(target); }, partial_path(target),
                  "No such file or directory");
  expect_io_error([&] { ResultWriter::create(target, sample_metadata("x")); },
                  partial_path(target), "No such file or directory");
}

TEST_F(Hdf5StoreTest, ReadOnlyDirectoryIsIoError) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0500), 0);
  if (::access(dir_.c_str(), W_OK) == 0)
    GTEST_SKIP() << "running with privileges that ignore permissions";
  expect_io_error([&] { check_output_path(final_); }, partial_path(final_), "Permission denied");
  expect_io_error([&] { ResultWriter::create(final_, sample_metadata("x")); },
                  partial_path(final_), "Permission denied");
}

TEST_F(Hdf5StoreTest, DirectoryAsOutputIsIoError) {
  fs::create_directory(final_);
  expect_io_error([&] { check_output_path(final_); }, final_, "Is a directory");
}

TEST_F(Hdf5StoreTest, MissingFileIsIoError) {
  expect_io_error([&] { read_results(final_); }, final_, "No such file or directory");
}

TEST_F(Hdf5StoreTest, TruncatedFileIsIoError) {
  write_committed({"e1", "e2"});
  const auto size = fs::file_size(final_);
  fs::resize_file(final_, size / 2);
  expect_io_error([&] { read_results(final_); }, final_, "truncated");
}

TEST_F(Hdf5StoreTest, TextFileIsIoError) {
  std::ofstream(final_) << "experiment,strategy\nthis is not HDF5\n";
  expect_io_error([&] { read_results(final_); }, final_, "not an HDF5 file");
  expect_io_error([&] { check_output_path(final_, /*append=*/true); }, final_, "not an HDF5 file");
}

TEST_F(Hdf5StoreTest, ForeignHdf5FileIsIoError) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fcreate(final_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  H5Fclose(file);
  expect_io_error([&] { read_results(final_); }, final_, "no schema_version attribute");
}

// ---- misuse is reported, not written -------------------------------------------

TEST_F(Hdf5StoreTest, MisuseIsRejected) {
  auto writer = ResultWriter::create(final_, sample_metadata("misuse"));
  auto bad_name = sample_experiment("a/b", 0);
  EXPECT_THROW(writer.begin_experiment(bad_name), std::invalid_argument);
  auto repeated = sample_experiment("e", 0);
  repeated.parameters.push_back(repeated.parameters.front());
  EXPECT_THROW(writer.begin_experiment(repeated), std::invalid_argument);
  const auto e = writer.begin_experiment(sample_experiment("e", 0));
  EXPECT_THROW(writer.begin_experiment(sample_experiment("e", 1)), IoError);
  EXPECT_THROW(writer.set_certified(e, "middle", sample_certified(0)), std::invalid_argument);
  const auto s = writer.begin_strategy(e, sample_strategy("sm", 0));
  EXPECT_THROW(writer.begin_strategy(e, sample_strategy("sm", 1)), std::invalid_argument);
  EXPECT_THROW(writer.append(StrategyHandle{99}, sample_strategy_row(0, 0)), std::out_of_range);
  writer.finish_strategy(s, sample_summary(0));
  EXPECT_THROW(writer.finish_strategy(s, sample_summary(0)), std::logic_error);
  EXPECT_THROW(writer.append(s, sample_strategy_row(0, 0)), std::logic_error);
  writer.commit();
  EXPECT_THROW(writer.begin_experiment(sample_experiment("later", 0)), std::logic_error);

  const auto results = read_results(final_);
  ASSERT_EQ(results.experiments.size(), 1u);  // nothing of the rejected calls was written
  EXPECT_EQ(results.experiments[0].info.name, "e");
  ASSERT_EQ(results.experiments[0].strategies.size(), 1u);
  EXPECT_TRUE(results.experiments[0].strategies[0].checkpoints.empty());
}

// Named events (StrategyInfo::events) are columns and summary attributes
// only when their names cannot be taken for anything the file has already.
TEST_F(Hdf5StoreTest, EventsThatCannotNameAColumnAreRefused) {
  auto writer = ResultWriter::create(final_, sample_metadata("events"));
  const auto e = writer.begin_experiment(sample_experiment("e", 0));
  for (const std::string name : {"breakdowns", "worst_log_det_error", "label", "library",
                                 "summary_keys", "Flushes", "2nd", "with space", ""}) {
    SCOPED_TRACE(name);
    StrategyInfo info = sample_strategy("s", 0);
    info.events = {{name, "a description"}};
    EXPECT_THROW(writer.begin_strategy(e, info), std::invalid_argument);
  }
  StrategyInfo twice = sample_strategy("s", 0);
  twice.events = {{"refreshes", "one"}, {"refreshes", "two"}};
  EXPECT_THROW(writer.begin_strategy(e, twice), std::invalid_argument);
  // An event a row does not count is stored as 0 (not counted yet).
  StrategyInfo info = sample_strategy("s", 0);
  info.events = {{"refreshes", "refreshes so far"}};
  const auto s = writer.begin_strategy(e, info);
  writer.append(s, sample_strategy_row(0, 0));
  writer.finish_strategy(s, sample_summary(0));
  writer.commit();
  const StrategyResult got = read_results(final_).experiments.at(0).strategies.at(0);
  ASSERT_EQ(got.info.events.size(), 1u);
  EXPECT_EQ(got.info.events[0].description, "refreshes so far");
  EXPECT_EQ(got.checkpoints.at(0).events, (EventCounts{{"refreshes", 0}}));
  EXPECT_EQ(got.summary->events, (EventCounts{{"refreshes", 0}}));
}

// Files written before events were named stored flushes and splits as
// fixed columns of every strategy (and splits as a summary attribute): they
// read as events, which is how regress compares a new run with them.
TEST_F(Hdf5StoreTest, CountsOfAFileFromBeforeNamedEventsReadAsEvents) {
  const ResultsFile old =
      read_results(fs::path(SLATERLAB_SOURCE_DIR) / "data" / "baselines" / "nightly.h5");
  int splitting = 0;
  for (const ExperimentResult& e : old.experiments)
    for (const StrategyResult& s : e.strategies) {
      SCOPED_TRACE(e.info.name + " / " + s.info.label);
      std::vector<std::string> names;
      for (const EventColumn& event : s.info.events) names.push_back(event.name);
      EXPECT_NE(std::find(names.begin(), names.end(), "flushes"), names.end());
      EXPECT_NE(std::find(names.begin(), names.end(), "splits"), names.end());
      ASSERT_FALSE(s.checkpoints.empty());
      EXPECT_EQ(s.checkpoints.back().events.size(), names.size());
      ASSERT_TRUE(s.summary);
      // The summary's count is the last checkpoint's, as the runner folds it.
      EXPECT_EQ(event_count(s.summary->events, "splits"),
                event_count(s.checkpoints.back().events, "splits"));
      splitting += s.info.name == "splitting" && event_count(s.summary->events, "splits") > 0;
    }
  EXPECT_GT(splitting, 0) << "the nightly's splitting strategies split";
}

// ---- the documentation describes the files ----------------------------------------

std::string schema_doc() {
  return file_bytes(fs::path(SLATERLAB_SOURCE_DIR) / "docs" / "results.md");
}

/// The unit cells of the documentation's table rows for name ("| `name` | type | unit |").
std::vector<std::string> documented_units(const std::string& doc, const std::string& name) {
  std::vector<std::string> units;
  const std::string start = "| `" + name + "` |";
  std::istringstream in(doc);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(start)) continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) {
      const auto first = cell.find_first_not_of(' ');
      const auto last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    if (cells.size() >= 3) units.push_back(cells[2]);
  }
  return units;
}

// Every attribute and column of a real file appears in a table row of
// the schema document (docs/results.md), with the unit the file itself records.
TEST_F(Hdf5StoreTest, SchemaDocumentDescribesEveryAttributeAndColumnWithItsUnit) {
  write_committed({"e1"});
  {
    auto writer = ResultWriter::create(final_, sample_metadata("more"), /*append=*/true);
    write_experiments(writer, {"e2"});
    writer.commit();
  }
  const auto doc = schema_doc();
  ASSERT_FALSE(doc.empty());
  h5::library_init();
  h5::Handle file(H5Fopen(final_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  ASSERT_TRUE(file.valid());

  auto expect_documented = [&](hid_t object, const std::string& name, const std::string& unit) {
    SCOPED_TRACE(h5::object_name(object) + " " + name);
    if (name.starts_with("param.")) return;  // documented as param.<key>
    std::string row = name;
    for (const char* prefix : {"certified_initial.", "certified_final."})
      if (name.starts_with(prefix)) row = name.substr(std::string(prefix).size());
    if (name.starts_with("appended.")) {
      EXPECT_NE(doc.find("`" + name + "`"), std::string::npos);
      return;
    }
    const auto units = documented_units(doc, row);
    ASSERT_FALSE(units.empty()) << "not in any table of the schema document";
    if (!unit.empty()) {
      EXPECT_NE(std::find(units.begin(), units.end(), unit), units.end())
          << "file says unit '" << unit << "'";
    }
  };
  auto expect_attributes_documented = [&](hid_t object,
                                          const std::map<std::string, std::string>& units) {
    for (const auto& name : h5::attr_names(object)) {
      const auto it = units.find(name);
      expect_documented(object, name, it == units.end() ? "" : it->second);
    }
  };
  auto expect_table_documented = [&](hid_t parent) {
    h5::Handle dataset(H5Dopen2(parent, "checkpoints", H5P_DEFAULT), H5Dclose);
    ASSERT_TRUE(dataset.valid());
    std::vector<std::string> units;
    h5::read_attr(dataset, "column_units", units);
    h5::Handle type(H5Dget_type(dataset), H5Tclose);
    ASSERT_EQ(units.size(), static_cast<std::size_t>(H5Tget_nmembers(type)));
    for (unsigned i = 0; i < units.size(); ++i) {
      char* member = H5Tget_member_name(type, i);
      expect_documented(dataset, member, units[i]);
      H5free_memory(member);
    }
    expect_attributes_documented(dataset, {});
  };

  expect_attributes_documented(file, {});
  EXPECT_FALSE(documented_units(doc, "config").empty());
  h5::Handle experiments = h5::open_group(file, "experiments");
  for (const auto& name : h5::link_names(experiments)) {
    h5::Handle experiment = h5::open_group(experiments, name);
    expect_attributes_documented(experiment, {});
    h5::Handle reference = h5::open_group(experiment, "reference");
    expect_table_documented(reference);
    h5::Handle strategies = h5::open_group(experiment, "strategies");
    for (const auto& label : h5::link_names(strategies)) {
      h5::Handle strategy = h5::open_group(strategies, label);
      std::vector<std::string> keys, units;
      h5::read_attr(strategy, "summary_keys", keys);
      h5::read_attr(strategy, "summary_units", units);
      ASSERT_EQ(keys.size(), units.size());
      std::map<std::string, std::string> unit_of;
      for (std::size_t i = 0; i < keys.size(); ++i) unit_of[keys[i]] = units[i];
      expect_attributes_documented(strategy, unit_of);
      expect_table_documented(strategy);
    }
  }
}

/// A VMC run "run" (2 walkers, 3 blocking levels) and the orbital record
/// "bspline-float-n4-alpha1-grid8".
void add_vmc_and_orbitals(ResultWriter& writer) {
  VmcRun run;
  run.info.name = "run";
  run.walkers.resize(2);
  run.blocking.resize(3);
  run.energy = {{1.0, 2.0}, {3.0}};
  writer.add_vmc_run(run);
  OrbitalAccuracyRecord record;
  record.label = "bspline-float-n4-alpha1-grid8";
  writer.add_orbital_accuracy(record);
}

// The VMC and orbital-accuracy groups are documented the same way: every
// attribute and every column, with the unit the file records.
TEST_F(Hdf5StoreTest, SchemaDocumentDescribesVmcAndOrbitalGroups) {
  {
    auto writer = ResultWriter::create(final_, sample_metadata("vmc"));
    add_vmc_and_orbitals(writer);
    writer.commit();
  }
  const auto doc = schema_doc();
  h5::library_init();
  h5::Handle file(H5Fopen(final_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  ASSERT_TRUE(file.valid());
  auto expect_row = [&](const std::string& name, const std::string& unit) {
    SCOPED_TRACE(name);
    const auto units = documented_units(doc, name);
    ASSERT_FALSE(units.empty()) << "not in any table of the schema document";
    if (!unit.empty()) {
      EXPECT_NE(std::find(units.begin(), units.end(), unit), units.end()) << "unit " << unit;
    }
  };
  auto expect_group = [&](hid_t group) {
    std::vector<std::string> keys, units;
    h5::read_attr(group, "summary_keys", keys);
    h5::read_attr(group, "summary_units", units);
    ASSERT_EQ(keys.size(), units.size());
    std::map<std::string, std::string> unit_of;
    for (std::size_t i = 0; i < keys.size(); ++i) unit_of[keys[i]] = units[i];
    for (const auto& name : h5::attr_names(group)) {
      if (name == "summary_keys" || name == "summary_units") continue;  // documented in prose
      expect_row(name, unit_of.count(name) ? unit_of[name] : "");
    }
  };
  auto expect_table = [&](hid_t parent, const char* name) {
    h5::Handle dataset(H5Dopen2(parent, name, H5P_DEFAULT), H5Dclose);
    ASSERT_TRUE(dataset.valid()) << name;
    std::vector<std::string> units;
    h5::read_attr(dataset, "column_units", units);
    h5::Handle type(H5Dget_type(dataset), H5Tclose);
    ASSERT_EQ(units.size(), static_cast<std::size_t>(H5Tget_nmembers(type)));
    for (unsigned i = 0; i < units.size(); ++i) {
      char* member = H5Tget_member_name(type, i);
      expect_row(member, units[i]);
      H5free_memory(member);
    }
  };
  h5::Handle runs = h5::open_group(file, "vmc");
  h5::Handle run = h5::open_group(runs, "run");
  expect_group(run);
  expect_table(run, "walkers");
  expect_table(run, "blocking");
  EXPECT_NE(doc.find("`/vmc/<run>/energy`"), std::string::npos);
  h5::Handle sets = h5::open_group(file, "orbitals");
  h5::Handle set = h5::open_group(sets, "bspline-float-n4-alpha1-grid8");
  expect_group(set);
}

/// Every name a results file holds: its groups' members, attributes,
/// datasets and the members of its compound tables, at any depth.
void collect_names(hid_t object, std::set<std::string>& names) {
  for (const auto& attr : h5::attr_names(object)) names.insert(attr);
  if (H5Iget_type(object) == H5I_DATASET) {
    h5::Handle type(H5Dget_type(object), H5Tclose);
    if (H5Tget_class(type) == H5T_COMPOUND) {
      for (int i = 0; i < H5Tget_nmembers(type); ++i) {
        char* member = H5Tget_member_name(type, unsigned(i));
        names.insert(member);
        H5free_memory(member);
      }
    }
    return;
  }
  for (const auto& link : h5::link_names(object)) {
    names.insert(link);
    h5::Handle child(H5Oopen(object, link.c_str(), H5P_DEFAULT), H5Oclose);
    ASSERT_TRUE(child.valid()) << link;
    collect_names(child, names);
  }
}

/// The names the schema document gives in the first column of its tables of
/// attributes, columns, datasets, fields and events.
std::vector<std::string> documented_names(const std::string& doc) {
  static const std::regex header(R"(^\| (Attribute|Column|Dataset|Field|Event)\b.*\|)");
  static const std::regex name("`([^`]+)`");
  std::vector<std::string> names;
  bool in_table = false;
  std::istringstream in(doc);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, header)) {
      in_table = true;
      continue;
    }
    if (!line.starts_with("|")) {
      in_table = false;
      continue;
    }
    if (!in_table || line.starts_with("|---")) continue;
    const std::string first = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator m(first.begin(), first.end(), name), end; m != end; ++m)
      names.push_back((*m)[1]);
  }
  return names;
}

// The other direction of the two tests above: every attribute, column,
// dataset and named event the schema document lists, and every results
// field another page names by a link into it ([`x`](results.md...)), is
// in a written file (here one with every kind of record: experiments, one
// appended, strategies with a kernel's provenance and with events, a VMC
// run and an orbital record).
TEST_F(Hdf5StoreTest, EveryFieldTheDocumentsNameIsWritten) {
  write_committed({"e1"});
  {
    auto writer = ResultWriter::create(final_, sample_metadata("more"), /*append=*/true);
    write_experiments(writer, {"e2"});
    add_vmc_and_orbitals(writer);
    writer.commit();
  }
  h5::library_init();
  h5::Handle file(H5Fopen(final_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  ASSERT_TRUE(file.valid());
  std::set<std::string> written;
  collect_names(file, written);
  const auto is_written = [&](const std::string& name) {
    if (written.count(name)) return true;
    const auto placeholder = name.find('<');  // param.<key>: any param.
    for (const std::string& w : written) {
      if (placeholder != std::string::npos && w.starts_with(name.substr(0, placeholder))) return true;
      if (w.ends_with("." + name)) return true;  // certified_final.<field>, appended.<field>
    }
    return false;
  };

  const std::vector<std::string> listed = documented_names(schema_doc());
  ASSERT_GT(listed.size(), 100u) << "the document's tables were not found";
  for (const std::string& name : listed) {
    if (name == "<event>") continue;  // its table lists the events one by one
    EXPECT_TRUE(is_written(name)) << "docs/results.md lists `" << name << "`, no file has it";
  }

  static const std::regex link(R"(\[`([A-Za-z0-9_.]+)`\]\(results\.md[^)]*\))");
  int linked = 0;
  for (const auto& page : fs::directory_iterator(fs::path(SLATERLAB_SOURCE_DIR) / "docs")) {
    if (page.path().extension() != ".md") continue;
    const std::string text = file_bytes(page.path());
    for (std::sregex_iterator m(text.begin(), text.end(), link), end; m != end; ++m, ++linked) {
      EXPECT_TRUE(is_written((*m)[1])) << page.path().filename().string() << " names `"
                                       << (*m)[1] << "` as a results field, no file has it";
    }
  }
  EXPECT_GT(linked, 0) << "no page names a results field by a link: the check would be vacuous";
}

/// A python3 that has h5py, or empty.
std::string python_with_h5py() {
  for (std::string python : {"python3", "/usr/bin/python3"})
    if (std::system((python + " -c 'import h5py' > /dev/null 2>&1").c_str()) == 0) return python;
  return "";
}

// The h5py example of the schema document (docs/results.md) runs on the .partial of an
// interrupted run and shows both the finished and the incomplete strategy.
TEST_F(Hdf5StoreTest, DocumentedH5pyExampleReadsAPartialFile) {
  const auto python = python_with_h5py();
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py";
  const auto doc = schema_doc();
  const auto section = doc.find("## Reading with h5py");
  ASSERT_NE(section, std::string::npos);
  const auto begin = doc.find("```python\n", section);
  ASSERT_NE(begin, std::string::npos);
  const auto end = doc.find("```", begin + 10);
  ASSERT_NE(end, std::string::npos);
  const auto script = dir_ / "read_results.py";
  std::ofstream(script) << doc.substr(begin + 10, end - begin - 10);
  {
    auto writer = ResultWriter::create(final_, sample_metadata("py"));
    const auto e = writer.begin_experiment(sample_experiment("py_exp", 0));
    const auto done = writer.begin_strategy(e, sample_strategy("finished_one", 0));
    const auto running = writer.begin_strategy(e, sample_strategy("running_one", 1));
    writer.append(done, sample_strategy_row(0, 0));
    writer.append(running, sample_strategy_row(0, 1));
    writer.finish_strategy(done, sample_summary(0));
    writer.keep_partial();
  }
  const auto out = dir_ / "out.txt";
  const std::string command = python + " '" + script.string() + "' '" +
                              partial_path(final_).string() + "' > '" + out.string() + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << file_bytes(out);
  const auto output = file_bytes(out);
  EXPECT_NE(output.find("py_exp"), std::string::npos) << output;
  EXPECT_NE(output.find("finished_one: worst_log_det_error"), std::string::npos) << output;
  EXPECT_NE(output.find("running_one: (incomplete)"), std::string::npos) << output;
}

}  // namespace
}  // namespace slaterlab
