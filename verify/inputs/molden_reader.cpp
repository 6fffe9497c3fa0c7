// The Molden reader (molecule_readers.hpp). Conventions, from the format's
// specification (G. Schaftenaar, www.theochem.ru.nl/molden/molden_format.html)
// and as IOData (theochem/iodata, iodata/formats/molden.py) reads files of
// current writers:
// - [Atoms] Angs|AU: "symbol number Z x y z"; [GTO] refers to atoms by that
//   number. Angstrom to bohr by CODATA 2018 (a0 = 0.529177210903 A).
// - [GTO]: per atom "number [0]", then shells "label nprim [1.00]" and nprim
//   lines "exponent coefficient" (two coefficients for sp: s, then p). The
//   coefficients weigh normalised primitives and the contraction is
//   normalised (Molden renormalises it on reading; so do we).
// - Shells are cartesian unless a flag says otherwise: [5D] or [5D7F] (d and
//   f spherical), [5D10F] (d spherical, f cartesian), [7F] (f), [9G] (g);
//   [6D], [10F], [15G] say cartesian explicitly. p is always x, y, z.
// - Within a shell: cartesian d xx, yy, zz, xy, xz, yz; f xxx, yyy, zzz, xyy,
//   xxy, xxz, xzz, yzz, yyz, xyz; g xxxx, yyyy, zzzz, xxxy, xxxz, xyyy, yyyz,
//   xzzz, yzzz, xxyy, xxzz, yyzz, xxyz, xyyz, xyzz; spherical m = 0, +1, -1,
//   ... (slaterlab's own order and phases). Every AO, each cartesian
//   component included, is normalised to 1, so the MO coefficients only
//   change rows, never scale.
// - [MO]: per orbital "Sym=", "Ene=", "Spin= Alpha|Beta", "Occup=" lines and
//   "index coefficient" lines, at most one per AO (an AO not listed has
//   coefficient 0).
// Precision: every number keeps half a unit in its last printed digit; the
// orthonormality check (molecule_file.cpp) turns them into its tolerance.

#include "verify/inputs/config_error.hpp"
#include "verify/inputs/molecule_readers.hpp"

#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

namespace slaterlab {
namespace {

constexpr double kBohrPerAngstrom = 1.0 / 0.529177210903;  // CODATA 2018

// A number as printed: its value and half a unit in its last digit.
struct Printed {
  double value = 0.0;
  double half_unit = 0.0;
};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\f\v");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\f\v");
  return text.substr(first, last - first + 1);
}

std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < line.size()) {
    const auto start = line.find_first_not_of(" \t\r\f\v", at);
    if (start == std::string_view::npos) break;
    auto end = line.find_first_of(" \t\r\f\v", start);
    if (end == std::string_view::npos) end = line.size();
    out.push_back(line.substr(start, end - start));
    at = end;
  }
  return out;
}

class Parser {
 public:
  Parser(const std::string& text, std::string name) : name_(std::move(name)) {
    std::size_t at = 0;
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) at = 3;  // a UTF-8 byte-order mark
    while (at <= text.size()) {
      auto end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      lines_.push_back(std::string_view(text).substr(at, end - at));
      at = end + 1;
    }
  }

  ReadMolecule read(MoldenDialect dialect);

 private:
  struct Atom {
    int number;
    std::string symbol;
    double charge;
    std::array<double, 3> position;
    double half_unit;  // of the printed coordinates, in bohr
    int line;
  };
  struct Shell {
    int atom_number;
    int l;
    std::vector<Printed> exponents;
    std::vector<Printed> coefficients;
    int line;
  };
  struct Orbital {
    bool beta = false;
    std::optional<double> occupation;
    std::vector<std::pair<int, Printed>> coefficients;  // (1-based index, value)
    int line;
  };

  [[noreturn]] void fail(std::size_t line, const std::string& problem) const {
    throw ConfigError(name_ + ": line " + std::to_string(line + 1) + ": " + problem);
  }
  [[noreturn]] void fail(const std::string& problem) const { throw ConfigError(name_ + ": " + problem); }

  bool at_section(std::size_t i) const {
    const auto t = trim(lines_[i]);
    return !t.empty() && t.front() == '[';
  }
  Printed number(std::size_t line, std::string_view token, const char* what) const;
  int integer(std::size_t line, std::string_view token, const char* what) const;

  std::size_t read_atoms(std::size_t i, std::string_view arguments);
  std::size_t read_basis(std::size_t i);
  std::size_t read_orbitals(std::size_t i);
  void set_flag(std::string_view flag, std::size_t line);
  ReadMolecule build(MoldenDialect dialect) const;

  std::string name_;
  std::vector<std::string_view> lines_;
  std::vector<Atom> atoms_;
  std::vector<Shell> shells_;
  std::vector<Orbital> orbitals_;
  std::string title_;
  // Per l (2..4): 1 spherical, 0 cartesian, absent: the default (cartesian).
  std::map<int, std::pair<bool, std::size_t>> spherical_;
};

Printed Parser::number(std::size_t line, std::string_view token, const char* what) const {
  std::string text(token);
  for (char& c : text)
    if (c == 'D' || c == 'd') c = 'E';  // Fortran's double-precision exponent
  std::string_view view = text;
  if (!view.empty() && view.front() == '+') view.remove_prefix(1);
  Printed out;
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), out.value);
  if (error != std::errc() || end != view.data() + view.size() || !std::isfinite(out.value))
    fail(line, std::string("expected a finite number for the ") + what + ", found '" + std::string(token) + "'");
  // The last printed digit: the digits after the point, shifted by the exponent.
  const auto exponent_at = view.find('E');
  const std::string_view mantissa = view.substr(0, exponent_at);
  const auto point = mantissa.find('.');
  const int decimals = point == std::string_view::npos ? 0 : static_cast<int>(mantissa.size() - point - 1);
  int exponent = 0;
  if (exponent_at != std::string_view::npos) {
    std::string_view digits = view.substr(exponent_at + 1);
    if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
    std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
  }
  out.half_unit = 0.5 * std::pow(10.0, exponent - decimals);
  return out;
}

int Parser::integer(std::size_t line, std::string_view token, const char* what) const {
  int value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error != std::errc() || end != token.data() + token.size())
    fail(line, std::string("expected an integer for the ") + what + ", found '" + std::string(token) + "'");
  return value;
}

std::size_t Parser::read_atoms(std::size_t i, std::string_view arguments) {
  const std::string unit = lower(arguments);
  double scale;
  if (unit.find("au") != std::string::npos)
    scale = 1.0;
  else if (unit.find("angs") != std::string::npos)
    scale = kBohrPerAngstrom;
  else
    fail(i - 1, "[Atoms] names no unit (Angs or AU)");
  for (; i < lines_.size() && !at_section(i); ++i) {
    const auto words = tokens(lines_[i]);
    if (words.empty()) continue;
    if (words.size() != 6) fail(i, "expected 'symbol number Z x y z' in [Atoms]");
    Atom atom{integer(i, words[1], "atom number"), std::string(words[0]),
              number(i, words[2], "atomic number").value, {}, 0.0, static_cast<int>(i)};
    for (int d = 0; d < 3; ++d) {
      const Printed coordinate = number(i, words[static_cast<std::size_t>(3 + d)], "coordinate");
      atom.position[static_cast<std::size_t>(d)] = coordinate.value * scale;
      atom.half_unit = std::max(atom.half_unit, coordinate.half_unit * scale);
    }
    if (atom.charge <= 0.0) fail(i, "atomic number " + std::string(words[2]) + " is not positive");
    for (const auto& other : atoms_)
      if (other.number == atom.number) fail(i, "atom number " + std::to_string(atom.number) + " appears twice");
    atoms_.push_back(std::move(atom));
  }
  if (atoms_.empty()) fail("[Atoms] lists no atom");
  return i;
}

std::size_t Parser::read_basis(std::size_t i) {
  static const std::map<std::string, int> kLabels{{"s", 0}, {"p", 1}, {"d", 2}, {"f", 3}, {"g", 4}, {"sp", -1}};
  static const std::set<std::string> kBeyond{"h", "i", "j", "k"};
  int atom = 0;
  bool in_atom = false;
  while (i < lines_.size() && !at_section(i)) {
    const auto words = tokens(lines_[i]);
    if (words.empty()) {  // a blank line ends an atom's shells
      in_atom = false;
      ++i;
      continue;
    }
    const bool is_atom = std::isdigit(static_cast<unsigned char>(words[0].front())) != 0;
    if (is_atom) {
      if (words.size() > 2) fail(i, "expected 'atom_number [0]' in [GTO]");
      atom = integer(i, words[0], "atom number");
      in_atom = true;
      ++i;
      continue;
    }
    if (!in_atom) fail(i, "a shell before its atom's number in [GTO]");
    const std::string label = lower(words[0]);
    if (kBeyond.count(label) != 0)
      fail(i, "shell '" + std::string(words[0]) + "' has l > " + std::to_string(kMaxAngularMomentum) +
                  ", which slaterlab does not support");
    const auto found = kLabels.find(label);
    if (found == kLabels.end() || words.size() < 2 || words.size() > 3)
      fail(i, "expected 'label primitives [1.00]' with label s, p, d, f, g or sp, found '" +
                  std::string(trim(lines_[i])) + "'");
    const int primitives = integer(i, words[1], "number of primitives");
    if (primitives < 1 || primitives > kMaxPrimitivesPerShell)
      fail(i, "the number of primitives must be 1 to " + std::to_string(kMaxPrimitivesPerShell));
    const bool sp = found->second < 0;
    Shell shell{atom, sp ? 0 : found->second, {}, {}, static_cast<int>(i)};
    Shell p_shell{atom, 1, {}, {}, static_cast<int>(i)};
    const std::size_t header = i++;
    for (int k = 0; k < primitives; ++k, ++i) {
      if (i >= lines_.size() || at_section(i))
        fail(header, "the shell lists fewer than its " + std::to_string(primitives) + " primitives");
      const auto values = tokens(lines_[i]);
      if (values.size() != (sp ? 3u : 2u))
        fail(i, sp ? "expected 'exponent s_coefficient p_coefficient'" : "expected 'exponent coefficient'");
      const Printed exponent = number(i, values[0], "exponent");
      if (exponent.value <= 0.0) fail(i, "exponent " + std::string(values[0]) + " is not positive");
      shell.exponents.push_back(exponent);
      shell.coefficients.push_back(number(i, values[1], "contraction coefficient"));
      if (sp) {
        p_shell.exponents.push_back(exponent);
        p_shell.coefficients.push_back(number(i, values[2], "contraction coefficient"));
      }
    }
    shells_.push_back(std::move(shell));
    if (sp) shells_.push_back(std::move(p_shell));
  }
  if (shells_.empty()) fail("[GTO] lists no shell");
  return i;
}

std::size_t Parser::read_orbitals(std::size_t i) {
  bool in_coefficients = false;
  for (; i < lines_.size() && !at_section(i); ++i) {
    const std::string_view line = trim(lines_[i]);
    if (line.empty()) continue;
    const auto equals = line.find('=');
    if (equals != std::string_view::npos) {
      if (orbitals_.empty() || in_coefficients) {
        orbitals_.push_back(Orbital{});
        orbitals_.back().line = static_cast<int>(i);
        in_coefficients = false;
      }
      const std::string key = lower(trim(line.substr(0, equals)));
      const std::string_view value = trim(line.substr(equals + 1));
      if (key == "spin") {
        const std::string spin = lower(value);
        if (spin != "alpha" && spin != "beta") fail(i, "Spin= must be Alpha or Beta");
        orbitals_.back().beta = spin == "beta";
      } else if (key == "occup") {
        orbitals_.back().occupation = number(i, value, "occupation").value;
      }
      continue;
    }
    const auto words = tokens(line);
    if (orbitals_.empty()) fail(i, "MO coefficients before the orbital's Occup= line");
    if (words.size() != 2) fail(i, "expected 'index coefficient' in [MO]");
    const int index = integer(i, words[0], "AO index");
    orbitals_.back().coefficients.emplace_back(index, number(i, words[1], "MO coefficient"));
    in_coefficients = true;
  }
  if (orbitals_.empty()) fail("[MO] lists no orbital");
  return i;
}

void Parser::set_flag(std::string_view flag, std::size_t line) {
  // flag -> the l it sets and how; [5D] is 5D and 7F by the specification.
  static const std::map<std::string, std::vector<std::pair<int, bool>>> kFlags{
      {"5d", {{2, true}, {3, true}}}, {"5d7f", {{2, true}, {3, true}}}, {"5d10f", {{2, true}, {3, false}}},
      {"7f", {{3, true}}},           {"9g", {{4, true}}},              {"6d", {{2, false}}},
      {"10f", {{3, false}}},         {"15g", {{4, false}}}};
  for (const auto& [l, spherical] : kFlags.at(std::string(flag))) {
    const auto [it, inserted] = spherical_.emplace(l, std::make_pair(spherical, line));
    if (!inserted && it->second.first != spherical)
      fail(line, "[" + std::string(flag) + "] contradicts the flag on line " +
                     std::to_string(it->second.second + 1) + " for l = " + std::to_string(l));
  }
}

ReadMolecule Parser::read(MoldenDialect dialect) {
  std::size_t i = 0;
  while (i < lines_.size() && trim(lines_[i]).empty()) ++i;
  if (i == lines_.size() || lower(trim(lines_[i])) != "[molden format]")
    fail("not a Molden file: the first line is not [Molden Format]");
  std::set<std::string> seen;
  for (++i; i < lines_.size();) {
    const std::string_view line = trim(lines_[i]);
    if (line.empty() || line.front() != '[') {
      ++i;
      continue;
    }
    const auto close = line.find(']');
    if (close == std::string_view::npos) fail(i, "a section name without ']'");
    const std::string section = lower(line.substr(1, close - 1));
    const std::string_view arguments = line.substr(close + 1);
    const std::size_t header = i++;
    if (section == "atoms" || section == "gto" || section == "mo") {
      if (!seen.insert(section).second) fail(header, "[" + section + "] appears twice");
      if (section == "atoms") i = read_atoms(i, arguments);
      if (section == "gto") i = read_basis(i);
      if (section == "mo") i = read_orbitals(i);
    } else if (section == "5d" || section == "5d7f" || section == "5d10f" || section == "7f" ||
               section == "9g" || section == "6d" || section == "10f" || section == "15g") {
      set_flag(section, header);
    } else if (section == "title") {
      if (i < lines_.size() && !at_section(i)) title_ = lower(lines_[i]);
    } else if (section == "sto") {
      fail(header, "Slater-type orbitals ([STO]) are not supported; slaterlab reads Gaussian bases");
    } else if (section == "pseudo" || section == "core" || section == "nval") {
      fail(header, "[" + std::string(line.substr(1, close - 1)) +
                       "]: effective core potentials are not supported (all-electron files only)");
    } else if (section == "cell") {
      fail(header, "[Cell]: periodic systems are not supported");
    }
  }
  for (const auto& [key, shown] : {std::pair{"atoms", "[Atoms]"}, {"gto", "[GTO]"}, {"mo", "[MO]"}})
    if (seen.count(key) == 0) fail(std::string("no ") + shown + " section");
  return build(dialect);
}

// Molden's cartesian order as powers (a, b, c), per l.
const std::vector<std::array<int, 3>>& molden_cartesians(int l) {
  static const std::vector<std::vector<std::array<int, 3>>> kOrders{
      {{0, 0, 0}},
      {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
      {{2, 0, 0}, {0, 2, 0}, {0, 0, 2}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}},
      {{3, 0, 0}, {0, 3, 0}, {0, 0, 3}, {1, 2, 0}, {2, 1, 0}, {2, 0, 1}, {1, 0, 2}, {0, 1, 2}, {0, 2, 1}, {1, 1, 1}},
      {{4, 0, 0}, {0, 4, 0}, {0, 0, 4}, {3, 1, 0}, {3, 0, 1}, {1, 3, 0}, {0, 3, 1}, {1, 0, 3}, {0, 1, 3},
       {2, 2, 0}, {2, 0, 2}, {0, 2, 2}, {2, 1, 1}, {1, 2, 1}, {1, 1, 2}}};
  return kOrders[static_cast<std::size_t>(l)];
}

// The distance between two normalised primitives of one centre and degree
// l whose exponents differ by the factor (1 + relative).
double primitive_distance(int l, double relative) {
  double worst = 0.0;
  for (const double factor : {1.0 + relative, 1.0 / (1.0 + relative)}) {
    const double overlap = std::pow(2.0 * std::sqrt(factor) / (1.0 + factor), l + 1.5);
    worst = std::max(worst, std::sqrt(std::max(0.0, 2.0 - 2.0 * overlap)));
  }
  return worst;
}

// The factor s with slaterlab's coefficient = s * the file's, for file AO
// `component` (Molden's order) of a shell, under a writer's dialect (IOData's
// _fix_mo_coeffs_psi4, _fix_mo_coeffs_cfour and _fix_obasis_orca):
// - Psi4 <= 1.3.2 normalises every cartesian component like x^l, so its xy
//   has norm 1/sqrt(3): s = sqrt(prod (2a_d - 1)!! / (2l - 1)!!);
// - CFOUR 2.1 scales them by sqrt(prod (2a_d - 1)!!): s = that;
// - ORCA flips the signs of the spherical f and g with |m| = 3 and 4.
double dialect_scale(MoldenDialect dialect, int l, bool spherical, int component) {
  if (dialect == MoldenDialect::kOrca)
    return spherical && std::abs(spherical_m(component)) >= 3 ? -1.0 : 1.0;
  if (spherical || l < 2 || dialect == MoldenDialect::kFormat) return 1.0;
  const auto& q = molden_cartesians(l)[static_cast<std::size_t>(component)];
  const auto odd = [](int a) {  // (2a - 1)!!
    double r = 1.0;
    for (int k = 2 * a - 1; k > 1; k -= 2) r *= k;
    return r;
  };
  const double product = odd(q[0]) * odd(q[1]) * odd(q[2]);
  return dialect == MoldenDialect::kCartesianLikeXl ? std::sqrt(product / odd(l)) : std::sqrt(product);
}

ReadMolecule Parser::build(MoldenDialect dialect) const {
  ReadMolecule out;
  MolecularWavefunction& wf = out.wavefunction;
  std::map<int, int> nucleus_of;
  std::vector<double> moved;  // per nucleus: how far the printed position may be from the exact one
  for (const auto& atom : atoms_) {
    nucleus_of[atom.number] = static_cast<int>(wf.nuclei.size());
    moved.push_back(std::sqrt(3.0) * atom.half_unit);
    wf.nuclei.push_back({atom.charge, Eigen::Vector3d(atom.position[0], atom.position[1], atom.position[2]),
                         atom.symbol});
  }
  std::vector<int> from_file;  // slaterlab AO row of each file AO
  std::vector<double> deviation;
  std::vector<double> scale;  // per file AO: the dialect's factor on its MO coefficients
  for (const auto& shell : shells_) {
    const auto nucleus = nucleus_of.find(shell.atom_number);
    if (nucleus == nucleus_of.end())
      fail(static_cast<std::size_t>(shell.line), "the shell's atom " + std::to_string(shell.atom_number) +
                                                     " is not in [Atoms]");
    const auto flag = spherical_.find(shell.l);
    const bool spherical = shell.l >= 2 && flag != spherical_.end() && flag->second.first;
    GaussianShell converted{nucleus->second, shell.l, spherical, {}, {}};
    // ORCA's coefficients weigh unnormalised primitives (s, p and spherical
    // shells): d_k = c_k alpha_k^{-(2l+3)/4}, the normalisation's alpha
    // dependence (constants cancel in the contraction's norm).
    const bool reweighted = dialect == MoldenDialect::kOrca && (shell.l <= 1 || spherical);
    std::vector<Printed> coefficients = shell.coefficients;
    for (std::size_t k = 0; k < shell.exponents.size(); ++k) {
      const double power = (2 * shell.l + 3) / 4.0;
      const Printed& e = shell.exponents[k];
      if (reweighted) {
        coefficients[k].value = shell.coefficients[k].value * std::pow(e.value, -power);
        coefficients[k].half_unit = (shell.coefficients[k].half_unit +
                                     std::abs(shell.coefficients[k].value) * power * e.half_unit / e.value) *
                                    std::pow(e.value, -power);
        out.dialect_applies = out.dialect_applies || shell.exponents.size() > 1;
      }
      converted.exponents.push_back(e.value);
      converted.coefficients.push_back(coefficients[k].value);
    }
    // Bound on the distance of this shell's normalised AOs from the exact
    // ones: ||u' - u|| <= sum |delta d_k| + sum |d_k| ||g'_k - g_k|| for
    // u = sum d_k g_k, and normalising at most doubles it. A primitive moved
    // by delta changes by at most |delta| ||grad g_k|| <= |delta|
    // sqrt((2l + 3) alpha_k) (<g|-lap|g> of a normalised primitive, equal
    // for solid harmonics and the largest over cartesian components).
    double unnormalised = 0.0, norm2 = 0.0;
    const std::size_t n = shell.exponents.size();
    const double delta = moved[static_cast<std::size_t>(nucleus->second)];
    for (std::size_t k = 0; k < n; ++k) {
      const double relative = shell.exponents[k].half_unit / shell.exponents[k].value;
      unnormalised += std::abs(coefficients[k].value) *
                      (primitive_distance(shell.l, relative) +
                       delta * std::sqrt((2 * shell.l + 3) * shell.exponents[k].value));
      if (n > 1) unnormalised += coefficients[k].half_unit;  // one primitive: d cancels
      for (std::size_t q = 0; q < n; ++q) {
        const double a = shell.exponents[k].value, b = shell.exponents[q].value;
        norm2 += coefficients[k].value * coefficients[q].value *
                 std::pow(2.0 * std::sqrt(a * b) / (a + b), shell.l + 1.5);
      }
    }
    if (!(norm2 > 0.0)) fail(static_cast<std::size_t>(shell.line), "the contraction has norm 0");
    const int first = static_cast<int>(from_file.size());
    const int size = shell_size(shell.l, spherical);
    for (int c = 0; c < size; ++c) {
      from_file.push_back(first + (spherical ? c : [&] {
        const auto& q = molden_cartesians(shell.l)[static_cast<std::size_t>(c)];
        const auto ours = cartesian_powers(shell.l);
        return static_cast<int>(std::find(ours.begin(), ours.end(), q) - ours.begin());
      }()));
      deviation.push_back(2.0 * unnormalised / std::sqrt(norm2));
      scale.push_back(dialect_scale(dialect, shell.l, spherical, c));
      out.dialect_applies = out.dialect_applies || scale.back() != 1.0;
    }
    wf.shells.push_back(std::move(converted));
  }
  const auto aos = static_cast<Eigen::Index>(from_file.size());
  out.ao_deviation = Eigen::Map<const Eigen::VectorXd>(deviation.data(), aos);
  out.ao_scale = Eigen::VectorXd::Ones(aos);
  out.ao_scale_rounding = Eigen::VectorXd::Zero(aos);

  // The orbitals per spin, rows in slaterlab's AO order.
  std::vector<double> occupation[2];
  std::vector<Eigen::VectorXd> columns[2], errors[2];
  for (const auto& orbital : orbitals_) {
    const auto line = static_cast<std::size_t>(orbital.line);
    if (!orbital.occupation) fail(line, "the orbital has no Occup= line");
    // An AO the orbital does not list has coefficient 0, as Molden itself
    // (and IOData) read it: some writers leave zero coefficients out.
    if (orbital.coefficients.empty()) fail(line, "the orbital lists no coefficients");
    Eigen::VectorXd column = Eigen::VectorXd::Zero(aos), error = Eigen::VectorXd::Zero(aos);
    std::vector<bool> listed(static_cast<std::size_t>(aos), false);
    for (const auto& [index, value] : orbital.coefficients) {
      if (index < 1 || index > aos || listed[static_cast<std::size_t>(index - 1)])
        fail(line, "the orbital's AO index " + std::to_string(index) + " is outside 1.." + std::to_string(aos) +
                       " or repeated");
      listed[static_cast<std::size_t>(index - 1)] = true;
      const int row = from_file[static_cast<std::size_t>(index - 1)];
      const double factor = scale[static_cast<std::size_t>(index - 1)];
      column(row) = value.value * factor;
      error(row) = value.half_unit * std::abs(factor);
    }
    const int spin = orbital.beta ? 1 : 0;
    occupation[spin].push_back(*orbital.occupation);
    columns[spin].push_back(std::move(column));
    errors[spin].push_back(std::move(error));
  }
  const bool unrestricted = !columns[1].empty();
  if (unrestricted && columns[0].empty()) fail("[MO] lists Beta orbitals but no Alpha ones");
  const auto to_matrix = [aos](const std::vector<Eigen::VectorXd>& cols) {
    Eigen::MatrixXd m(aos, static_cast<Eigen::Index>(cols.size()));
    for (std::size_t j = 0; j < cols.size(); ++j) m.col(static_cast<Eigen::Index>(j)) = cols[j];
    return m;
  };
  // Occupations: 0, 1 or 2 in a restricted file (2 fills both spins, 1 the
  // alpha spin), 0 or 1 per spin otherwise; anything else is no single
  // determinant. Printed occupations like 1.999999 are rounding: 1e-4 is far
  // from any fraction a correlated method leaves.
  const double top = unrestricted ? 1.0 : 2.0;
  for (int spin = 0; spin < (unrestricted ? 2 : 1); ++spin)
    for (std::size_t j = 0; j < occupation[spin].size(); ++j) {
      const double value = occupation[spin][j];
      const double nearest = std::round(value);
      if (std::abs(value - nearest) > 1e-4 || nearest < 0.0 || nearest > top)
        fail("orbital " + std::to_string(j + 1) + (spin == 1 ? " (Beta)" : "") + " has occupation " +
             std::to_string(value) + ": not one determinant (occupations must be 0, 1" +
             (unrestricted ? "" : " or 2") + ")");
      occupation[spin][j] = nearest;
    }
  wf.mo_up = to_matrix(columns[0]);
  out.up_coefficient_error = to_matrix(errors[0]);
  if (unrestricted) {
    wf.mo_down = to_matrix(columns[1]);
    out.down_coefficient_error = to_matrix(errors[1]);
    wf.electrons_up = occupied_first(wf.mo_up, &out.up_coefficient_error, occupation[0], 1.0);
    wf.electrons_down = occupied_first(wf.mo_down, &out.down_coefficient_error, occupation[1], 1.0);
  } else {
    wf.mo_down = wf.mo_up;
    out.down_coefficient_error = out.up_coefficient_error;
    wf.electrons_up = occupied_first(wf.mo_up, &out.up_coefficient_error, occupation[0], 1.0);
    wf.electrons_down = occupied_first(wf.mo_down, &out.down_coefficient_error, occupation[0], 2.0);
  }
  if (wf.electrons_up + wf.electrons_down == 0) fail("no orbital is occupied");
  if (wf.mo_up.cols() > aos || wf.mo_down.cols() > aos)
    fail("more orbitals than AOs (" + std::to_string(std::max(wf.mo_up.cols(), wf.mo_down.cols())) + " > " +
         std::to_string(aos) + ")");
  wf.source = "molden";
  for (const char* writer : {"psi4", "orca", "molpro", "turbomole", "cfour", "pyscf", "molcas", "gaussian"})
    if (title_.find(writer) != std::string::npos) wf.source = std::string("molden (") + writer + ")";
  if (dialect != MoldenDialect::kFormat) wf.source = std::string("molden, ") + molden_dialect_name(dialect);
  return out;
}

}  // namespace

int occupied_first(Eigen::MatrixXd& mo, Eigen::MatrixXd* error, const std::vector<double>& occupation,
                   double threshold) {
  std::vector<Eigen::Index> order;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t j = 0; j < occupation.size(); ++j)
      if ((occupation[j] >= threshold) == (pass == 0)) order.push_back(static_cast<Eigen::Index>(j));
  const Eigen::MatrixXd original = mo;
  const Eigen::MatrixXd original_error = error ? *error : Eigen::MatrixXd();
  for (std::size_t j = 0; j < order.size(); ++j) {
    mo.col(static_cast<Eigen::Index>(j)) = original.col(order[j]);
    if (error) error->col(static_cast<Eigen::Index>(j)) = original_error.col(order[j]);
  }
  return static_cast<int>(std::count_if(occupation.begin(), occupation.end(),
                                        [threshold](double o) { return o >= threshold; }));
}

ReadMolecule read_molden(const std::string& text, const std::string& name, MoldenDialect dialect) {
  return Parser(text, name).read(dialect);
}

const char* molden_dialect_name(MoldenDialect dialect) {
  switch (dialect) {
    case MoldenDialect::kFormat:
      return "the format's convention";
    case MoldenDialect::kCartesianLikeXl:
      return "cartesian AOs normalised like x^l (as Psi4 <= 1.3.2 writes them)";
    case MoldenDialect::kCartesianLikeCfour:
      return "cartesian AOs scaled as CFOUR 2.1 writes them";
    case MoldenDialect::kOrca:
      return "ORCA's primitive weights and f, g signs";
  }
  return "";
}

}  // namespace slaterlab
