#pragma once
// The workloads' one-line messages and parameter texts (internal to
// verify/inputs): doubles as the shortest text that reads back to the same
// value, name lists, and the std::invalid_argument every workload check throws.

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace slaterlab::workload_detail {

// Shortest text that reads back to the same double.
inline std::string to_text(double x) {
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return std::string(buf.data(), res.ptr);
}

inline std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& s : names) out += (out.empty() ? "" : ", ") + s;
  return out;
}

inline bool contains(const std::vector<std::string>& names, const std::string& s) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

[[noreturn]] inline void bad(const std::string& what) {
  throw std::invalid_argument("workload: " + what);
}

inline void check_positive_finite(const char* name, double x) {
  if (!(std::isfinite(x) && x > 0.0)) {
    bad(std::string(name) + " must be finite and > 0, got " + to_text(x));
  }
}

}  // namespace slaterlab::workload_detail
