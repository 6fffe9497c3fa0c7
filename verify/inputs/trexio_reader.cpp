// The TREXIO reader (molecule_readers.hpp), through libtrexio (HDF5 or text
// back end). Conventions, from the TREXIO specification (trex.org, "Data
// stored in TREXIO": the basis, ao and determinant groups):
// - coordinates in bohr; electrons from electron up_num and dn_num;
// - an AO is chi_i = N'_i P_i(r - A) N_s sum_k a_k f_k exp(-gamma_k |r - A|^2)
//   with N'_i = ao.normalization, N_s = basis.shell_factor, a_k =
//   basis.coefficient, f_k = basis.prim_factor (each 1 when the file leaves
//   it out, the specification's value for "not normalised at this level");
// - P_i: cartesian monomials x^a y^b z^c in alphabetical order (xx, xy, xz,
//   yy, yz, zz; ao.cartesian = 1), or real solid harmonics in the order m =
//   0, +1, -1, ... (p: z, x, y). The specification names the real spherical
//   harmonics; their scale is the one of TREX's own tools, Racah's
//   normalisation (S_l0 = z^l + ...): trexio_tools' cartesian-to-spherical
//   matrices and its TREXIO-to-Molden writer (which copies spherical MO
//   coefficients unchanged into Molden's normalised functions) and its
//   PySCF converter (prim_factor = PySCF's radial norm * sqrt((2l+1)/4pi))
//   all take it, and the stored overlap, when present, confirms it per file;
// - mo.coefficient is [mo.num][ao.num] (row-major: MO i's coefficients are
//   contiguous); mo.spin (0 alpha, 1 beta) splits an unrestricted set;
// - a determinant is 2 N_int 64-bit words, up then down, bit j of word w set
//   when MO 64 w + j is occupied (0-based).
// slaterlab's AO i is chi_i / n_i with n_i = sign(N'_i N_s) ||chi_i|| (exact,
// gaussian_function_norm), so the MO coefficients of row i are multiplied by
// n_i; the components are already in slaterlab's order.

#include "verify/inputs/config_error.hpp"
#include "verify/inputs/molecule_readers.hpp"

#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"

extern "C" {  // trexio.h declares C functions without extern "C" of its own
#include <trexio.h>
}

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

namespace slaterlab {
namespace {

struct Closer {
  void operator()(trexio_t* file) const { trexio_close(file); }
};

class TrexioFile {
 public:
  explicit TrexioFile(const std::string& path) : path_(path) {
    trexio_exit_code rc = TREXIO_SUCCESS;
    file_.reset(trexio_open(path.c_str(), 'r', TREXIO_AUTO, &rc));
    if (!file_ || rc != TREXIO_SUCCESS)
      throw ConfigError(path + ": not a readable TREXIO file (" + trexio_string_of_error(rc) + ")");
  }
  trexio_t* get() const { return file_.get(); }

  [[noreturn]] void fail(const std::string& problem) const { throw ConfigError(path_ + ": " + problem); }

  // Calls a trexio function and names the datum when it fails.
  void check(trexio_exit_code rc, const char* what) const {
    if (rc != TREXIO_SUCCESS) fail(std::string("cannot read ") + what + " (" + trexio_string_of_error(rc) + ")");
  }
  bool has(trexio_exit_code rc) const { return rc == TREXIO_SUCCESS; }

  int count(trexio_exit_code (*read)(trexio_t*, int32_t*), trexio_exit_code has_rc, const char* what,
            int limit) const {
    if (!has(has_rc)) fail(std::string("the file has no ") + what);
    int32_t value = 0;
    check(read(file_.get(), &value), what);
    if (value < 0 || value > limit)
      fail(std::string(what) + " = " + std::to_string(value) + " is outside 0.." + std::to_string(limit));
    return value;
  }

 private:
  std::string path_;
  std::unique_ptr<trexio_t, Closer> file_;
};

// Sizes beyond these are refused before any allocation: far beyond a
// molecule slaterlab can evaluate, and they keep every product below 2^31.
constexpr int kMaxNuclei = 10000;
constexpr int kMaxShells = 100000;
constexpr int kMaxPrimitives = 1000000;
constexpr int kMaxAos = 20000;
constexpr int kMaxDeterminants = 10000000;

void refuse_unsupported(const TrexioFile& f) {
  if (f.has(trexio_has_pbc_periodic(f.get()))) {
    int32_t periodic = 0;
    f.check(trexio_read_pbc_periodic(f.get(), &periodic), "pbc periodic");
    if (periodic != 0) f.fail("periodic systems (pbc.periodic = 1) are not supported");
  }
  if (f.has(trexio_has_ecp_num(f.get()))) {
    int32_t ecp = 0;
    f.check(trexio_read_ecp_num(f.get(), &ecp), "ecp num");
    if (ecp > 0) f.fail("effective core potentials (ecp group) are not supported (all-electron files only)");
  }
  if (f.has(trexio_has_mo_coefficient_im(f.get())))
    f.fail("complex MO coefficients (mo.coefficient_im) are not supported");
  if (!f.has(trexio_has_basis_type(f.get()))) f.fail("the file has no basis type");
  char type[64] = {};
  f.check(trexio_read_basis_type(f.get(), type, sizeof type - 1), "basis type");
  std::string basis(type);
  for (char& c : basis) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (basis != "gaussian") f.fail("basis type '" + std::string(type) + "' is not supported (Gaussian only)");
}

template <class T>
std::vector<T> read_array(const TrexioFile& f, trexio_exit_code has_rc,
                          trexio_exit_code (*read)(trexio_t*, T*, int64_t), std::size_t size,
                          const char* what) {
  if (!f.has(has_rc)) f.fail(std::string("the file has no ") + what);
  std::vector<T> out(size);
  f.check(read(f.get(), out.data(), static_cast<int64_t>(size)), what);
  return out;
}

// The wavefunction's determinants (bit strings), checked against the counts.
void read_determinants(const TrexioFile& f, MolecularWavefunction& wf, Eigen::Index mo_count) {
  if (!f.has(trexio_has_determinant_list(f.get()))) return;
  int32_t words = 0, num = 0;
  f.check(trexio_get_int64_num(f.get(), &words), "determinant int64 num");
  f.check(trexio_read_determinant_num(f.get(), &num), "determinant num");
  if (num < 1 || num > kMaxDeterminants) f.fail("determinant.num = " + std::to_string(num) + " is out of range");
  if (words < 1 || static_cast<Eigen::Index>(words) * 64 < mo_count)
    f.fail("the determinants' bit strings do not cover the " + std::to_string(mo_count) + " MOs");
  std::vector<int64_t> bits(static_cast<std::size_t>(num) * 2 * static_cast<std::size_t>(words));
  int64_t read = num;
  f.check(trexio_read_safe_determinant_list(f.get(), 0, &read, bits.data(), static_cast<int64_t>(bits.size())),
          "determinant list");
  if (read != num) f.fail("the determinant list is shorter than determinant.num");
  std::vector<double> coefficients(static_cast<std::size_t>(num), 1.0);
  if (f.has(trexio_has_determinant_coefficient(f.get()))) {
    read = num;
    f.check(trexio_read_safe_determinant_coefficient(f.get(), 0, &read, coefficients.data(), num),
            "determinant coefficient");
    if (read != num) f.fail("the determinant coefficients are fewer than determinant.num");
  }
  for (int32_t d = 0; d < num; ++d) {
    DeterminantOccupation det;
    det.coefficient = coefficients[static_cast<std::size_t>(d)];
    if (!std::isfinite(det.coefficient)) f.fail("determinant " + std::to_string(d) + " has a coefficient not finite");
    for (int spin = 0; spin < 2; ++spin) {
      auto& list = spin == 0 ? det.up : det.down;
      for (int32_t w = 0; w < words; ++w) {
        const auto word = static_cast<uint64_t>(bits[(static_cast<std::size_t>(d) * 2 + spin) * words + w]);
        for (int j = 0; j < 64; ++j)
          if ((word >> j) & 1u) list.push_back(64 * w + j);
      }
      const int expected = spin == 0 ? wf.electrons_up : wf.electrons_down;
      if (static_cast<int>(list.size()) != expected || (!list.empty() && list.back() >= mo_count))
        f.fail("determinant " + std::to_string(d) + " occupies " + std::to_string(list.size()) + " " +
               (spin == 0 ? "up" : "down") + " MOs (of " + std::to_string(mo_count) + "); the file has " +
               std::to_string(expected) + " such electrons");
    }
    wf.determinants.push_back(std::move(det));
  }
}

}  // namespace

ReadMolecule read_trexio(const std::string& path) {
  const TrexioFile f(path);
  refuse_unsupported(f);
  ReadMolecule out;
  MolecularWavefunction& wf = out.wavefunction;
  wf.source = "trexio";

  const int nuclei = f.count(trexio_read_nucleus_num, trexio_has_nucleus_num(f.get()), "nucleus num", kMaxNuclei);
  if (nuclei < 1) f.fail("the file has no nucleus");
  const auto charge = read_array<double>(f, trexio_has_nucleus_charge(f.get()), trexio_read_safe_nucleus_charge,
                                         static_cast<std::size_t>(nuclei), "nucleus charge");
  const auto coord = read_array<double>(f, trexio_has_nucleus_coord(f.get()), trexio_read_safe_nucleus_coord,
                                        3 * static_cast<std::size_t>(nuclei), "nucleus coord");
  std::vector<std::string> labels(static_cast<std::size_t>(nuclei));
  if (f.has(trexio_has_nucleus_label(f.get()))) {
    constexpr int kLength = 32;
    std::vector<char> buffer(static_cast<std::size_t>(nuclei) * (kLength + 1));
    std::vector<char*> pointers;
    for (int a = 0; a < nuclei; ++a) pointers.push_back(buffer.data() + a * (kLength + 1));
    if (trexio_read_nucleus_label(f.get(), pointers.data(), kLength) == TREXIO_SUCCESS)
      for (int a = 0; a < nuclei; ++a) labels[static_cast<std::size_t>(a)] = pointers[static_cast<std::size_t>(a)];
  }
  for (int a = 0; a < nuclei; ++a) {
    const auto i = static_cast<std::size_t>(a);
    const Eigen::Vector3d position(coord[3 * i], coord[3 * i + 1], coord[3 * i + 2]);
    if (!(charge[i] > 0.0) || !std::isfinite(charge[i]) || !position.allFinite())
      f.fail("nucleus " + std::to_string(a) + " has a charge not positive or a position not finite");
    wf.nuclei.push_back({charge[i], position, labels[i]});
  }

  wf.electrons_up = f.count(trexio_read_electron_up_num, trexio_has_electron_up_num(f.get()), "electron up_num",
                            kMaxAos);
  wf.electrons_down = f.count(trexio_read_electron_dn_num, trexio_has_electron_dn_num(f.get()),
                              "electron dn_num", kMaxAos);
  if (wf.electrons_up + wf.electrons_down == 0) f.fail("the file has no electron");

  // The basis.
  const int shells = f.count(trexio_read_basis_shell_num, trexio_has_basis_shell_num(f.get()), "basis shell_num",
                             kMaxShells);
  const int primitives = f.count(trexio_read_basis_prim_num, trexio_has_basis_prim_num(f.get()),
                                 "basis prim_num", kMaxPrimitives);
  const auto ns = static_cast<std::size_t>(shells), np = static_cast<std::size_t>(primitives);
  const auto nucleus_index = read_array<int32_t>(f, trexio_has_basis_nucleus_index(f.get()),
                                                 trexio_read_safe_basis_nucleus_index, ns, "basis nucleus_index");
  const auto ang_mom = read_array<int32_t>(f, trexio_has_basis_shell_ang_mom(f.get()),
                                           trexio_read_safe_basis_shell_ang_mom, ns, "basis shell_ang_mom");
  const auto shell_index = read_array<int32_t>(f, trexio_has_basis_shell_index(f.get()),
                                               trexio_read_safe_basis_shell_index, np, "basis shell_index");
  const auto exponent = read_array<double>(f, trexio_has_basis_exponent(f.get()), trexio_read_safe_basis_exponent,
                                           np, "basis exponent");
  const auto coefficient = read_array<double>(f, trexio_has_basis_coefficient(f.get()),
                                              trexio_read_safe_basis_coefficient, np, "basis coefficient");
  std::vector<double> shell_factor(ns, 1.0), prim_factor(np, 1.0);
  if (f.has(trexio_has_basis_shell_factor(f.get())))
    shell_factor = read_array<double>(f, TREXIO_SUCCESS, trexio_read_safe_basis_shell_factor, ns, "shell_factor");
  if (f.has(trexio_has_basis_prim_factor(f.get())))
    prim_factor = read_array<double>(f, TREXIO_SUCCESS, trexio_read_safe_basis_prim_factor, np, "prim_factor");

  std::vector<GaussianShell> by_file(ns);
  std::vector<std::vector<double>> weights(ns);  // a_k f_k: weights of unnormalised primitives
  for (std::size_t s = 0; s < ns; ++s) {
    if (nucleus_index[s] < 0 || nucleus_index[s] >= nuclei)
      f.fail("shell " + std::to_string(s) + " names nucleus " + std::to_string(nucleus_index[s]) + " of " +
             std::to_string(nuclei));
    if (ang_mom[s] < 0) f.fail("shell " + std::to_string(s) + " has a negative angular momentum");
    if (ang_mom[s] > kMaxAngularMomentum)
      f.fail("shell " + std::to_string(s) + " has l = " + std::to_string(ang_mom[s]) +
             ", which slaterlab does not support (l <= " + std::to_string(kMaxAngularMomentum) + ")");
    by_file[s].nucleus = nucleus_index[s];
    by_file[s].l = ang_mom[s];
  }
  for (std::size_t k = 0; k < np; ++k) {
    const int32_t s = shell_index[k];
    if (s < 0 || s >= shells) f.fail("primitive " + std::to_string(k) + " names shell " + std::to_string(s));
    if (!(std::isfinite(exponent[k]) && exponent[k] > 0.0) || !std::isfinite(coefficient[k] * prim_factor[k]))
      f.fail("primitive " + std::to_string(k) + " has an exponent not positive or a coefficient not finite");
    auto& shell = by_file[static_cast<std::size_t>(s)];
    if (shell.exponents.size() == static_cast<std::size_t>(kMaxPrimitivesPerShell))
      f.fail("shell " + std::to_string(s) + " has more than " + std::to_string(kMaxPrimitivesPerShell) +
             " primitives");
    shell.exponents.push_back(exponent[k]);
    weights[static_cast<std::size_t>(s)].push_back(coefficient[k] * prim_factor[k]);
    shell.coefficients.push_back(coefficient[k] * prim_factor[k] / primitive_norm(shell.l, exponent[k]));
  }

  // The AOs: each shell's components contiguous, in the order of ao.shell.
  int32_t cartesian = 1;
  f.check(trexio_has_ao_cartesian(f.get()) == TREXIO_SUCCESS ? trexio_read_ao_cartesian(f.get(), &cartesian)
                                                             : TREXIO_HAS_NOT,
          "ao cartesian");
  const int aos = f.count(trexio_read_ao_num, trexio_has_ao_num(f.get()), "ao num", kMaxAos);
  const auto na = static_cast<std::size_t>(aos);
  const auto ao_shell = read_array<int32_t>(f, trexio_has_ao_shell(f.get()), trexio_read_safe_ao_shell, na, "ao shell");
  std::vector<double> ao_normalization(na, 1.0);
  if (f.has(trexio_has_ao_normalization(f.get())))
    ao_normalization = read_array<double>(f, TREXIO_SUCCESS, trexio_read_safe_ao_normalization, na,
                                          "ao normalization");
  out.ao_scale.resize(aos);
  out.ao_scale_rounding.resize(aos);
  std::vector<bool> used(ns, false);
  for (std::size_t i = 0; i < na;) {
    const int32_t s = ao_shell[i];
    if (s < 0 || s >= shells || used[static_cast<std::size_t>(s)])
      f.fail("AO " + std::to_string(i) + " names shell " + std::to_string(s) +
             ", missing or not contiguous with its other AOs");
    const auto su = static_cast<std::size_t>(s);
    used[su] = true;
    GaussianShell shell = by_file[su];
    shell.spherical = cartesian == 0;
    if (shell.exponents.empty()) f.fail("shell " + std::to_string(s) + " has no primitive");
    const int size = shell_size(shell.l, shell.spherical);
    for (int c = 0; c < size; ++c, ++i) {
      if (i >= na || ao_shell[i] != s)
        f.fail("shell " + std::to_string(s) + " has fewer than its " + std::to_string(size) + " AOs in ao.shell");
      double magnitude = 0.0;
      const double norm = gaussian_function_norm(shell.l, angular_polynomial(shell.l, shell.spherical, c),
                                                 shell.exponents, weights[su], &magnitude);
      const double scale = ao_normalization[i] * shell_factor[su] * norm;
      if (!std::isfinite(scale) || scale == 0.0)
        f.fail("AO " + std::to_string(i) + " is zero or not finite (normalization, shell_factor, coefficients)");
      out.ao_scale(static_cast<Eigen::Index>(i)) = scale;
      const double terms = static_cast<double>(shell.exponents.size() * shell.exponents.size()) *
                           cartesian_count(shell.l) * cartesian_count(shell.l);
      out.ao_scale_rounding(static_cast<Eigen::Index>(i)) = (terms + 6.0) * magnitude / (norm * norm) / 2.0 + 4.0;
    }
    wf.shells.push_back(std::move(shell));
  }
  for (std::size_t s = 0; s < ns; ++s)
    if (!used[s]) f.fail("shell " + std::to_string(s) + " has no AO in ao.shell");

  // The MOs.
  const int mos = f.count(trexio_read_mo_num, trexio_has_mo_num(f.get()), "mo num", 2 * kMaxAos);
  const auto coefficients = read_array<double>(f, trexio_has_mo_coefficient(f.get()),
                                               trexio_read_safe_mo_coefficient,
                                               static_cast<std::size_t>(mos) * na, "mo coefficient");
  std::vector<int32_t> spin(static_cast<std::size_t>(mos), 0);
  if (f.has(trexio_has_mo_spin(f.get())))
    spin = read_array<int32_t>(f, TREXIO_SUCCESS, trexio_read_safe_mo_spin, static_cast<std::size_t>(mos), "mo spin");
  std::vector<Eigen::Index> columns[2];
  for (int j = 0; j < mos; ++j) {
    const int32_t sj = spin[static_cast<std::size_t>(j)];
    if (sj != 0 && sj != 1) f.fail("MO " + std::to_string(j) + " has spin " + std::to_string(sj) + " (0 or 1)");
    columns[sj].push_back(j);
  }
  const bool unrestricted = !columns[1].empty();
  if (unrestricted && columns[0].size() != columns[1].size())
    f.fail("the file has " + std::to_string(columns[0].size()) + " alpha and " + std::to_string(columns[1].size()) +
           " beta MOs");
  const auto matrix = [&](const std::vector<Eigen::Index>& which) {
    Eigen::MatrixXd m(aos, static_cast<Eigen::Index>(which.size()));
    for (std::size_t j = 0; j < which.size(); ++j)
      for (Eigen::Index a = 0; a < aos; ++a)
        m(a, static_cast<Eigen::Index>(j)) =
            out.ao_scale(a) * coefficients[static_cast<std::size_t>(which[j]) * na + static_cast<std::size_t>(a)];
    return m;
  };
  wf.mo_up = matrix(columns[0]);
  wf.mo_down = unrestricted ? matrix(columns[1]) : wf.mo_up;
  if (!wf.mo_up.allFinite() || !wf.mo_down.allFinite()) f.fail("an MO coefficient is not finite");
  if (wf.electrons_up > wf.mo_up.cols() || wf.electrons_down > wf.mo_down.cols())
    f.fail("more electrons than MOs per spin");
  out.up_coefficient_error = Eigen::MatrixXd::Zero(aos, wf.mo_up.cols());
  out.down_coefficient_error = Eigen::MatrixXd::Zero(aos, wf.mo_down.cols());
  out.ao_deviation = Eigen::VectorXd::Zero(aos);

  if (f.has(trexio_has_determinant_list(f.get()))) {
    if (unrestricted) f.fail("a determinant list over unrestricted MOs is not supported");
    read_determinants(f, wf, wf.mo_up.cols());
  }
  if (f.has(trexio_has_ao_1e_int_overlap(f.get()))) {
    const auto overlap = read_array<double>(f, TREXIO_SUCCESS, trexio_read_safe_ao_1e_int_overlap, na * na,
                                            "ao_1e_int overlap");
    out.stored_overlap = Eigen::Map<const Eigen::MatrixXd>(overlap.data(), aos, aos).transpose();
  }
  if (f.has(trexio_has_metadata_code_num(f.get()))) {
    int32_t codes = 0;
    if (trexio_read_metadata_code_num(f.get(), &codes) == TREXIO_SUCCESS && codes > 0 && codes < 100) {
      constexpr int kLength = 64;
      std::vector<char> buffer(static_cast<std::size_t>(codes) * (kLength + 1));
      std::vector<char*> pointers;
      for (int c = 0; c < codes; ++c) pointers.push_back(buffer.data() + c * (kLength + 1));
      if (trexio_read_metadata_code(f.get(), pointers.data(), kLength) == TREXIO_SUCCESS && pointers[0][0] != '\0')
        wf.source = std::string("trexio (") + pointers[0] + ")";
    }
  }
  return out;
}

}  // namespace slaterlab
