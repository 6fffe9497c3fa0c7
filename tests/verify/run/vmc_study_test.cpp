// Tests of the VMC study layer: [[vmc]] configuration, the choice of
// reference runs, what lands in the results file, the checks and the table.
#include "verify/run/vmc_study.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <hdf5.h>

#include "tests/verify/molecule_fixtures.hpp"
#include "verify/run/runner.hpp"
#include "verify/stats/statistics.hpp"
#include "verify/report/table.hpp"

namespace slaterlab {
namespace {

namespace fs = std::filesystem;

// Small and quick: N = 4, alpha != omega so the local energy fluctuates.
const std::string kStudy = R"(
[[vmc]]
n = 4
alpha = 0.8
scheme = ["pbp", "qs-batched"]
step = 0.8
walkers = 2
sweeps = 600
equilibration = 100
[[vmc]]
n = 4
alpha = 0.8
orbitals = "bspline-float"
step = 0.8
walkers = 2
sweeps = 600
equilibration = 100
)";

class VmcStudyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("slaterlab_vmc_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ResultsFile run(const StudyConfig& study, RunReport* report = nullptr) {
    const fs::path out = dir_ / "r.h5";
    ResultWriter writer = ResultWriter::create(out, RunMetadata{"t", "t", "t", "t", "t", "t"});
    RunReport r = run_study(study, writer, {});
    writer.commit();
    if (report) *report = r;
    return read_results(out);
  }

  fs::path dir_;
};

std::string config_error(const std::string& toml) {
  try {
    parse_study(toml, "t.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(VmcConfig, ListsExpandAndNamesAreDistinct) {
  const StudyConfig s = parse_study(kStudy, "t");
  ASSERT_EQ(s.vmc.size(), 3u);
  EXPECT_EQ(s.vmc[0].name, "pbp-analytic-sm-double-n4-alpha0.8-step0.8");
  EXPECT_EQ(s.vmc[2].orbitals, "bspline-float");
  EXPECT_NE(s.vmc[0].seed, s.vmc[1].seed);  // independent streams per run
  EXPECT_TRUE(s.experiments.empty());       // a VMC-only study is valid
}

TEST(VmcConfig, BadValuesAreNamed) {
  EXPECT_NE(config_error("[[vmc]]\nn = 4\nscheme = \"qss\"\n").find("did you mean 'qs'"),
            std::string::npos);
  EXPECT_NE(config_error("[[vmc]]\nn = 4\norbitals = \"spline\"\n").find("unknown orbitals"),
            std::string::npos);
  EXPECT_NE(config_error("[[vmc]]\nn = 4\nalpha = 0\n").find("'alpha' must be a finite number > 0"),
            std::string::npos);
  EXPECT_NE(config_error("[[vmc]]\nn = 4\nwalker = 2\n").find("did you mean 'walkers'"),
            std::string::npos);
  EXPECT_NE(config_error("[[vmc]]\nn = 4\nstrategy = \"sn\"\n").find("unknown strategy 'sn'"),
            std::string::npos);
}

TEST(VmcConfig, ReferenceIsTheAnalyticPbpDoubleRunOfTheSameModel) {
  const StudyConfig s = parse_study(kStudy + R"(
[[vmc]]
n = 4
alpha = 0.9
step = 0.8
)", "t");
  ASSERT_EQ(s.vmc.size(), 4u);
  EXPECT_EQ(reference_run_index(s.vmc, 0), -1);  // the reference has none
  EXPECT_EQ(reference_run_index(s.vmc, 1), 0);   // qs-batched -> pbp
  EXPECT_EQ(reference_run_index(s.vmc, 2), 0);   // bspline-float -> analytic pbp
  EXPECT_EQ(reference_run_index(s.vmc, 3), -1);  // another alpha: no reference
}

TEST_F(VmcStudyTest, RunsLandInTheFileWithTheirStatistics) {
  const StudyConfig study = parse_study(kStudy, "t");
  const ResultsFile f = run(study);
  ASSERT_EQ(f.vmc.size(), 3u);
  for (const VmcRun& r : f.vmc) {
    SCOPED_TRACE(r.info.name);
    EXPECT_EQ(r.info.n, 4);
    EXPECT_EQ(r.energy.size(), 2u);
    for (const auto& series : r.energy) EXPECT_EQ(series.size(), 600u);
    EXPECT_EQ(r.walkers.size(), 2u);
    const VmcRunSummary& s = r.summary;
    EXPECT_DOUBLE_EQ(s.exact_energy, 9.225);  // (0.4 + 0.625) * (1.5 + 3 * 2.5)
    EXPECT_TRUE(std::isfinite(s.energy) && s.error > 0) << s.energy << " " << s.error;
    EXPECT_EQ(s.samples, 1200);
    EXPECT_NEAR(s.z_exact, std::abs(s.energy - s.exact_energy) / s.error, 1e-12);
    EXPECT_NEAR(s.detectable_bias_exact, 3 * s.error, 1e-15);
    int chosen = 0;
    for (const BlockingRow& b : r.blocking) chosen += b.chosen;
    EXPECT_EQ(chosen, 1);
  }
  // The reference run has no z_reference; the others do, on independent streams.
  EXPECT_TRUE(std::isnan(f.vmc[0].summary.z_reference));
  EXPECT_EQ(f.vmc[1].info.reference_run, f.vmc[0].info.name);
  EXPECT_TRUE(std::isfinite(f.vmc[1].summary.z_reference));
  EXPECT_NE(f.vmc[0].energy[0], f.vmc[1].energy[0]);
  // The spline run was shadowed by its analytic double twin and measured.
  EXPECT_GE(f.vmc[2].walkers[0].divergence_sweep, -1);
  EXPECT_GT(f.vmc[2].walkers[0].expected_flips, 0.0);
  ASSERT_EQ(f.orbitals.size(), 1u);
  EXPECT_EQ(f.orbitals[0].orbitals, "bspline-float");
  EXPECT_GT(f.orbitals[0].value_max_rel, 0.0);
  EXPECT_DOUBLE_EQ(f.orbitals[0].epsilon, std::ldexp(1.0, -23));
}

TEST_F(VmcStudyTest, SameSeedGivesTheSameSeries) {
  const StudyConfig study = parse_study(kStudy, "t");
  const ResultsFile a = run(study), b = run(study);
  EXPECT_EQ(a.vmc[1].energy, b.vmc[1].energy);
}

TEST_F(VmcStudyTest, ZeroVarianceAtTheOptimalExponent) {
  // alpha = omega: E_L is the exact energy at every configuration, so the
  // mean equals it to rounding (N eps |E| per sample) and the variance is ~0.
  const StudyConfig study = parse_study(
      "[[vmc]]\nn = 10\nalpha = 1.0\nwalkers = 1\nsweeps = 100\nequilibration = 10\n", "t");
  const VmcRunSummary& s = run(study).vmc[0].summary;
  EXPECT_DOUBLE_EQ(s.exact_energy, 30.0);  // 1 * (1.5 + 3 * 2.5 + 6 * 3.5)
  EXPECT_NEAR(s.energy, 30.0, 1e3 * std::numeric_limits<double>::epsilon() * 30.0);
  EXPECT_LT(s.variance, 1e-20);
}

TEST_F(VmcStudyTest, MaxZExactCheckNamesTheRun) {
  RunReport report;
  run(parse_study(kStudy, "t", {"checks.max_z_exact=1e-9"}), &report);
  ASSERT_EQ(report.failures.size(), 3u);  // no run is within 1e-9 sigma of exact
  EXPECT_EQ(report.failures[0].experiment, "vmc");
  EXPECT_NE(report.failures[0].what.find("exceeds"), std::string::npos);
}

TEST_F(VmcStudyTest, TableShowsTheEnergyInCompactForm) {
  const ResultsFile f = run(parse_study(kStudy, "t"));
  const std::string table = format_table(f, TableFormat::markdown, TableKind::vmc);
  const VmcRunSummary& s = f.vmc[0].summary;
  EXPECT_NE(table.find(format_mean_error(s.energy, s.error)), std::string::npos) << table;
  EXPECT_NE(table.find(f.vmc[2].info.name), std::string::npos);
  const std::string orbitals = format_table(f, TableFormat::csv, TableKind::orbitals);
  EXPECT_NE(orbitals.find("bspline-float,4,"), std::string::npos) << orbitals;
}

// Molecules: one-electron hydrogen and two-electron helium in one s
// Gaussian each (molecule_fixtures.hpp: closed-form energies), from Molden
// files beside the study, with double and float orbitals and two schemes.
// Each run's mean within 4 of its blocked error bars of the closed form
// (fixed seeds); the float run's reference is the double pbp run of the
// same file, and the float orbitals are measured against the double ones.
TEST_F(VmcStudyTest, MoleculesSampleTheirClosedFormEnergies) {
  const double a_h = 0.28, a_he = 0.77;
  std::ofstream(dir_ / "h.molden") << testing::gaussian_atom_molden(1, a_h, 1);
  std::ofstream(dir_ / "he.molden") << testing::gaussian_atom_molden(2, a_he, 2);
  const auto entry = [](const std::string& file, double exact) {
    return fmt::format(
        "[[vmc]]\nsystem = \"molecule\"\nfile = \"{}\"\nexact_energy = {:.17g}\n"
        "orbitals = [\"double\", \"float\"]\nscheme = [\"pbp\", \"qs-batched\"]\nstep = 1.0\n"
        "walkers = 4\nsweeps = 4000\nequilibration = 200\n",
        file, exact);
  };
  const double exact_h = testing::gaussian_atom_energy(1, a_h, 1);
  const double exact_he = testing::gaussian_atom_energy(2, a_he, 2);
  const fs::path study = dir_ / "study.toml";
  std::ofstream(study) << entry("h.molden", exact_h) + entry("he.molden", exact_he);
  const ResultsFile f = run(load_study(study.string()));
  ASSERT_EQ(f.vmc.size(), 8u);
  for (const VmcRun& r : f.vmc) {
    SCOPED_TRACE(r.info.name);
    const bool helium = r.info.file.ends_with("he.molden");
    EXPECT_EQ(r.info.system, "molecule");
    EXPECT_EQ(r.info.source, "molden");
    EXPECT_EQ(r.info.n, 1);
    EXPECT_EQ(r.info.n_down, helium ? 1 : 0);
    EXPECT_EQ(r.info.spins, helium ? 2 : 1);
    const VmcRunSummary& s = r.summary;
    EXPECT_EQ(s.exact_energy, helium ? exact_he : exact_h);
    EXPECT_LT(s.z_exact, 4.0) << s.energy << " +- " << s.error;
    // K = 3a/2 per electron in the mean; its error bar is the run's own.
    const double kinetic = 1.5 * (helium ? 2 * a_he : a_h);
    EXPECT_LT(std::abs(s.kinetic - kinetic), 4 * s.kinetic_error) << s.kinetic;
    EXPECT_EQ(s.failed_walkers, 0);
  }
  const auto run_of = [&](const std::string& name) {
    return std::find_if(f.vmc.begin(), f.vmc.end(), [&](const VmcRun& r) { return r.info.name == name; });
  };
  const auto float_run = run_of("pbp-float-sm-double-he-step1");
  ASSERT_NE(float_run, f.vmc.end());
  EXPECT_EQ(float_run->info.reference_run, "pbp-double-sm-double-he-step1");
  ASSERT_EQ(f.orbitals.size(), 2u);  // each file's float orbitals against its double ones
  EXPECT_DOUBLE_EQ(f.orbitals[0].epsilon, std::ldexp(1.0, -23));
  EXPECT_GT(f.orbitals[0].value_max_rel, 0.0);
  EXPECT_LT(f.orbitals[0].value_max_eps, 16.0);  // float rounding, nothing else
}

/// A float64 scalar dataset of an HDF5 file (a shipped molecule's .ref.h5).
double read_scalar(const fs::path& file, const char* name) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  double value = std::nan("");
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value);
  H5Dclose(d);
  H5Fclose(f);
  return value;
}

// Shipped Hartree-Fock determinants (data/molecules, Psi4 1.3.2) sampled
// with the Coulomb Hamiltonian: the mean local energy is Psi4's RHF energy
// (its `hf_energy`), within 4 blocked error bars (fixed seeds; about 2 mHa
// for H2 and 10 mHa for LiH at this length).
TEST_F(VmcStudyTest, ShippedDeterminantsSampleTheirHartreeFockEnergies) {
  const fs::path data = fs::path(SLATERLAB_SOURCE_DIR) / "data" / "molecules";
  for (const std::string molecule : {"h2-cc-pvdz", "lih-cc-pvdz"}) {
    SCOPED_TRACE(molecule);
    const fs::path file = data / (molecule + ".trexio.h5");
    if (!fs::exists(file)) GTEST_SKIP() << file << " is not in this checkout";
    const double hf = read_scalar(data / (molecule + ".ref.h5"), "hf_energy");
    ASSERT_TRUE(std::isfinite(hf));
    const fs::path study = dir_ / "study.toml";
    std::ofstream(study) << fmt::format(
        "[[vmc]]\nsystem = \"molecule\"\nfile = \"{}\"\nexact_energy = {:.17g}\nstep = 0.4\n"
        "walkers = 4\nsweeps = 40000\nequilibration = 500\n",
        file.string(), hf);
    const ResultsFile f = run(load_study(study.string()));
    ASSERT_EQ(f.vmc.size(), 1u);
    const VmcRunSummary& s = f.vmc[0].summary;
    EXPECT_LT(s.z_exact, 4.0) << s.energy << " +- " << s.error << " vs " << hf;
    // Each term of the Hamiltonian is at least 0.7 Ha here (the nuclear
    // repulsion of H2): an error bar below 0.05 Ha would see any one missing.
    EXPECT_LT(s.error, 0.05);
  }
}

}  // namespace
}  // namespace slaterlab
