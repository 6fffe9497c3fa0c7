// The property case: its accepted moves and its validation (contract in
// case.hpp).

#include "verify/properties/case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace slaterlab {

std::size_t Case::accepted() const {
  return std::size_t(
      std::count_if(moves.begin(), moves.end(), [](const CaseMove& m) { return m.accept; }));
}

void validate_case(const Case& c) {
  const Eigen::Index n = c.n();
  if (n < 1 || c.initial.cols() != n) {
    throw std::invalid_argument(
        fmt::format("case: the initial matrix must be N x N with N >= 1, "
                    "got {} x {}",
                    c.initial.rows(), c.initial.cols()));
  }
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    const CaseMove& mv = c.moves[i];
    if (mv.electron < 0 || mv.electron >= n || mv.column.size() != n) {
      throw std::invalid_argument(
          fmt::format("case: move {} has electron {} and a column of {} "
                      "entries (N = {})",
                      i, mv.electron, mv.column.size(), n));
    }
  }
  std::size_t in_cycles = 0;
  for (int length : c.cycles) {
    if (length < 1) throw std::invalid_argument("case: an update cycle of no move");
    in_cycles += std::size_t(length);
  }
  if (c.has_cycles() && in_cycles != c.moves.size()) {
    throw std::invalid_argument(fmt::format("case: its cycles hold {} moves, it has {}", in_cycles,
                                            c.moves.size()));
  }
}

void validate_probe(const Case& c) {
  const Eigen::Index n = c.n();
  if (c.probe_column < 0 || c.probe_column >= n || c.probe_source < 0 || c.probe_source >= n ||
      (n > 1 && c.probe_source == c.probe_column)) {
    throw std::invalid_argument(
        fmt::format("case: probe columns {} / {} are not two distinct "
                    "columns of 0..{}",
                    c.probe_column, c.probe_source, n - 1));
  }
}

}  // namespace slaterlab
