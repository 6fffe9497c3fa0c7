#pragma once
// Typed, bounded access to a study's TOML tables, shared by the parsers of
// its sections (config.cpp, vmc_config.cpp): every key is read by one of
// these, which refuses a wrong type or a value out of range with a
// ConfigError naming the entry and the key. Internal to verify/inputs.

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "verify/inputs/config_error.hpp"
#include "verify/inputs/suggest.hpp"
#include "verify/store/names.hpp"

namespace slaterlab::toml_access {

[[noreturn]] inline void fail(const std::string& where, const std::string& what) {
  throw ConfigError(where + ": " + what);
}

inline void check_keys(const toml::table& t, const std::vector<std::string>& allowed,
                const std::string& where) {
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      fail(where, "unknown key '" + k + "'" + suggestion_suffix(k, allowed));
    }
  }
}

// ---- typed access ----------------------------------------------------------

inline std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "a list";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

/// Counts of moves and sweeps are at most 2^53, the largest integer a double
/// holds exactly: the plan, the rates and the statistics count in doubles, and
/// no run could do that many moves anyway.
constexpr std::int64_t kMaxCount = std::int64_t(1) << 53;
/// An N x N matrix of doubles must be addressable: 8 N^2 < 2^63.
constexpr std::int64_t kMaxN = (std::int64_t(1) << 30) - 1;
/// A B-spline grid's point count grid^3 must be a 64-bit index: grid < 2^21.
constexpr std::int64_t kMaxGrid = (std::int64_t(1) << 21) - 1;

/// The closed range an integer key may take; by default all of the type it
/// is stored in, so that no value is cut.
struct IntRange {
  std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  std::int64_t hi = std::numeric_limits<std::int64_t>::max();
};

/// Reads an integer key (the one reader of every integer key): a value
/// outside `range` or outside what T holds is refused, naming the key.
template <class T>
T get_int(const toml::table& t, const std::string& key, T fallback, const std::string& where,
          IntRange range = {}) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(std::int64_t));
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  const auto v = n->value_exact<std::int64_t>();
  if (!v) fail(where, "'" + key + "' must be an integer, got " + type_name(*n));
  if constexpr (std::is_signed_v<T>) {
    range.lo = std::max<std::int64_t>(range.lo, std::numeric_limits<T>::min());
    range.hi = std::min<std::int64_t>(range.hi, std::numeric_limits<T>::max());
  } else {
    range.lo = std::max<std::int64_t>(range.lo, 0);
    if constexpr (sizeof(T) < sizeof(std::int64_t)) {
      range.hi = std::min<std::int64_t>(range.hi, std::int64_t(std::numeric_limits<T>::max()));
    }
  }
  if (*v < range.lo || *v > range.hi) {
    fail(where, fmt::format("'{}' must be an integer in [{}, {}], got {}", key, range.lo, range.hi,
                            *v));
  }
  return T(*v);
}

/// A seed is any 64-bit pattern: TOML's signed integers stand for the
/// unsigned seeds bit for bit (the resolved form writes them that way).
inline std::uint64_t get_seed(const toml::table& t, const std::string& key, std::uint64_t fallback,
                       const std::string& where) {
  return std::uint64_t(get_int<std::int64_t>(t, key, std::int64_t(fallback), where));
}

/// The product of `factors` as a count of moves, refused (naming `what`)
/// above kMaxCount.
inline std::int64_t checked_count(std::initializer_list<std::int64_t> factors, const std::string& where,
                           const std::string& what) {
  std::int64_t product = 1;
  for (const std::int64_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product) || product > kMaxCount) {
      fail(where, fmt::format("{} is more than 2^53 = {} moves", what, kMaxCount));
    }
  }
  return product;
}

/// The range a floating-point key may take. Every number must be finite:
/// no key means anything at infinity or NaN.
struct NumberRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;

  bool contains(double x) const {
    return std::isfinite(x) && (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi);
  }
  std::string text() const {
    if (std::isfinite(lo) && std::isfinite(hi)) {
      return fmt::format("a number in {}{}, {}{}", lo_open ? "(" : "[", number(lo), number(hi),
                         hi_open ? ")" : "]");
    }
    if (std::isfinite(lo)) {
      return fmt::format("a finite number {} {}", lo_open ? ">" : ">=", number(lo));
    }
    if (std::isfinite(hi)) {
      return fmt::format("a finite number {} {}", hi_open ? "<" : "<=", number(hi));
    }
    return "a finite number";
  }
  static std::string number(double x) { return fmt::format("{:g}", x); }
};
constexpr NumberRange kAnyNumber{};
constexpr NumberRange kPositive{0.0, std::numeric_limits<double>::infinity(), true, false};
constexpr NumberRange kNonNegative{0.0, std::numeric_limits<double>::infinity(), false, false};
constexpr NumberRange kUnitInterval{0.0, 1.0, false, false};

/// Reads a floating-point key (an integer is taken as its value), refusing a
/// value outside `range`, infinities and NaN, naming the key.
inline double get_double(const toml::table& t, const std::string& key, double fallback,
                  const std::string& where, const NumberRange& range = kAnyNumber) {
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  if (!n->is_integer() && !n->is_floating_point()) {
    fail(where, "'" + key + "' must be a number, got " + type_name(*n));
  }
  const double x = *n->value<double>();
  if (!range.contains(x)) {
    fail(where, fmt::format("'{}' must be {}, got {}", key, range.text(), NumberRange::number(x)));
  }
  return x;
}

inline bool get_bool(const toml::table& t, const std::string& key, bool fallback,
              const std::string& where) {
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  if (auto v = n->value_exact<bool>()) return *v;
  fail(where, "'" + key + "' must be true or false, got " + type_name(*n));
}

inline std::string get_string(const toml::table& t, const std::string& key, const std::string& fallback,
                       const std::string& where) {
  const toml::node* n = t.get(key);
  if (!n) return fallback;
  if (auto v = n->value_exact<std::string>()) return *v;
  fail(where, "'" + key + "' must be a string, got " + type_name(*n));
}

/// The file a study names under `key` (a string): a relative path is taken
/// from the directory of the study file `source`; returned absolute and
/// normalised, so that a run reads the same file from any directory.
inline std::string get_study_path(const toml::table& t, const std::string& key,
                                  const std::string& source, const std::string& where) {
  std::filesystem::path file = get_string(t, key, "", where);
  if (file.is_relative()) file = std::filesystem::path(source).parent_path() / file;
  return std::filesystem::absolute(file).lexically_normal().string();
}

/// `text` with control characters written as \xNN, for a one-line message.
inline std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  return out;
}

/// Reads the name of an experiment, a VMC run or a strategy: it names an
/// HDF5 group in the results file, so it must be a name the store can
/// create, and it is printed in one-line messages and tables.
inline std::string get_name(const toml::table& t, const std::string& key, const std::string& fallback,
                     const std::string& where) {
  const std::string name = get_string(t, key, fallback, where);
  if (const auto why = group_name_problem(name)) {
    fail(where, fmt::format("'{}' = \"{}\" {}", key, printable(name), *why));
  }
  return name;
}

inline const toml::table* get_table(const toml::table& root, const std::string& key,
                             const std::string& source) {
  const toml::node* n = root.get(key);
  if (!n) return nullptr;
  if (!n->is_table()) fail(source, "'" + key + "' must be a table ([" + key + "])");
  return n->as_table();
}

/// An entry's lists expand to at most this many experiments, VMC runs or
/// strategies: far beyond any study (each is a group of the results file),
/// and a bound on the memory the expansion itself takes.
constexpr std::size_t kMaxExpansion = 100000;
/// Repeats of one experiment entry (each a group of the results file).
constexpr std::int64_t kMaxRepeats = 1000;

/// Expands every list-valued key in `keys` into one table per combination.
inline std::vector<toml::table> expand(const toml::table& entry, const std::set<std::string>& keys,
                                const std::string& where) {
  std::size_t combinations = 1;
  for (const auto& key : keys) {
    const toml::node* n = entry.get(key);
    if (!n || !n->is_array()) continue;
    if (n->as_array()->empty()) fail(where, "'" + key + "' is an empty list");
    if (__builtin_mul_overflow(combinations, n->as_array()->size(), &combinations) ||
        combinations > kMaxExpansion) {
      fail(where, fmt::format("the lists expand to more than {} entries", kMaxExpansion));
    }
  }
  std::vector<toml::table> out{entry};
  for (const auto& key : keys) {
    const toml::node* n = entry.get(key);
    if (!n || !n->is_array()) continue;
    std::vector<toml::table> next;
    for (const auto& partial : out) {
      for (const auto& element : *n->as_array()) {
        toml::table t = partial;
        t.insert_or_assign(key, element);
        next.push_back(std::move(t));
      }
    }
    out = std::move(next);
  }
  return out;
}

inline std::vector<toml::table> entries(const toml::table& root, const std::string& key,
                                 const std::string& source) {
  std::vector<toml::table> out;
  const toml::node* n = root.get(key);
  if (!n) return out;
  const toml::array* array = n->as_array();
  if (array && array->empty()) return out;  // e.g. the resolved form of a study without them
  if (!array || !array->is_array_of_tables()) {
    fail(source, "'" + key + "' must be an array of tables ([[" + key + "]])");
  }
  for (const auto& element : *array) out.push_back(*element.as_table());
  return out;
}

// ---- seeds and names ------------------------------------------------------

inline std::uint64_t mix_seed(std::uint64_t seed, const std::string& name) {
  // FNV-1a of the name, folded into the study seed: an experiment keeps its
  // stream when others are added or reordered.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

inline std::string number_text(double x) { return fmt::format("{:g}", x); }

}  // namespace slaterlab::toml_access
