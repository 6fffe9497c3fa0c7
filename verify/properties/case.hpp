#pragma once
// The property case: the data every strategy is checked on, and what makes
// one valid.
//
// - A Case is data only: an initial matrix and proposals with predetermined
//   decisions (or update cycles), so every strategy sees the same numbers.
// - validate_case() throws std::invalid_argument naming what is wrong: a
//   matrix that is not N x N with N >= 1, a move whose electron or column
//   does not fit, cycles of no move or that do not hold every move.
// - validate_probe() throws std::invalid_argument unless the breakdown probe
//   names two distinct columns (one when N = 1).

#include <Eigen/Core>

#include <cstddef>
#include <vector>

namespace slaterlab {

/// One proposal: replace column `electron` by `column`; `accept` is the
/// predetermined decision.
struct CaseMove {
  Eigen::Index electron = 0;
  Eigen::VectorXd column;
  bool accept = false;
};

/// A property case: the initial matrix A (A(i, j) = phi_i(r_j)) and the move
/// sequence. probe_column / probe_source are used only by
/// NearSingularIsBreakdown: after the sequence it proposes, for column
/// probe_column, a copy (and a near-copy) of column probe_source
/// (probe_source == probe_column when N = 1).
///
/// A case with `cycles` is a sequence of update cycles instead: cycles[i]
/// consecutive moves form cycle i (together all the moves), applied as one
/// unit with apply_cycle() (every move's accept is true). Intermediate
/// matrices of a cycle may be exactly singular.
struct Case {
  Eigen::MatrixXd initial;
  std::vector<CaseMove> moves;
  Eigen::Index probe_column = 0;
  Eigen::Index probe_source = 0;
  std::vector<int> cycles;  // lengths of the update cycles; empty: single proposals

  Eigen::Index n() const { return initial.rows(); }
  std::size_t accepted() const;
  bool has_cycles() const { return !cycles.empty(); }
};

void validate_case(const Case& c);
/// The probe NearSingularIsBreakdown uses must name two distinct columns (one
/// when N = 1): a "copy" of the column itself has rho = 1.
void validate_probe(const Case& c);

}  // namespace slaterlab
