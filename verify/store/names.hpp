#pragma once
// Which names the results file can hold as group names: an experiment, a
// VMC run, a strategy label (docs/results.md). The study reader
// refuses any other before work starts, so that no run ends in a name the
// store cannot create.

#include <optional>
#include <string>
#include <string_view>

namespace slaterlab {

/// Why `name` cannot name a group of the results file, or nullopt. Refused:
/// the empty name and "." (HDF5's name of the group itself), a '/' (HDF5's
/// path separator), and control characters: U+0000 ends the C string HDF5
/// is given (so "a\0b" would be stored as "a"), and the others would break
/// the one-line messages and the tables that print names.
inline std::optional<std::string> group_name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name == ".") return "is '.', HDF5's name of the enclosing group";
  if (name.find('/') != std::string_view::npos) return "contains '/', HDF5's path separator";
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return "contains a control character";
  }
  return std::nullopt;
}

}  // namespace slaterlab
