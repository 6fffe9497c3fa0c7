#pragma once
// The long-double oracle: its view of a property case (exact ratios,
// conditioning and log-determinants along the sequence), computed once per
// case and shared by every strategy checked on it.
//
// Double LU is no reference for double strategies, so the oracle is Eigen's
// PartialPivLU in long double (x87 extended, eps_ld = 2^-63, 2048x below
// double's 2^-52); its own error, c N eps_ld kappa, enters every tolerance
// (docs/properties.md).
// - trace_case(c) validates the case (validate_case, std::invalid_argument)
//   and traces it: per move the proposal's ratio, the vectors the error
//   model propagates rounding with and the matrix after it; per update cycle
//   its block ratio, conditioning along the cycle and the matrix after it.
// - An exactly singular matrix gives infinite condition numbers, never an
//   exception.
// The types below the public trace_case() are the properties library's own
// (namespace slaterlab::properties).

#include <Eigen/Core>

#include <limits>
#include <memory>
#include <vector>

#include "verify/properties/case.hpp"

namespace slaterlab {

namespace properties {

using LongDouble = long double;
using MatrixLongDouble = Eigen::Matrix<LongDouble, Eigen::Dynamic, Eigen::Dynamic>;
using VectorLongDouble = Eigen::Matrix<LongDouble, Eigen::Dynamic, 1>;

inline constexpr double kEpsLongDouble = double(std::numeric_limits<LongDouble>::epsilon());

struct LogDetLongDouble {
  LongDouble log_abs = 0;
  int sign = 1;
};

/// What seeding the propagated rounding at a factorisation needs.
struct InverseState {
  Eigen::MatrixXd inverse;       // A^{-1}
  Eigen::MatrixXd residual_size;  // |A^{-1}| |L| |U|: row-wise size of getri's left residual
};

struct MatrixInfo {
  double norm_f = 0;      // ||A||_F
  double inv_norm_f = 0;  // ||A^{-1}||_F
  double lu_growth = 1;   // || |L| |U| ||_F / ||A||_F of partial-pivoting LU
  LogDetLongDouble log_det;
  std::shared_ptr<const InverseState> state;
};

/// What the propagated-rounding estimate needs of a proposal (ErrorModel).
struct StepVectors {
  Eigen::Index k = 0;
  VectorLongDouble column;     // a'
  VectorLongDouble row;        // r = e_k^T A^{-1}
  VectorLongDouble update;     // y = A^{-1} a' - e_k
  VectorLongDouble row_norms;  // ||e_i^T A^{-1}|| for every row i
};

struct OracleStep {
  LongDouble rho = 0;
  std::shared_ptr<const StepVectors> vectors;
  double row_norm = 0;     // ||e_k^T A^{-1}||_2
  double solve_norm = 0;   // ||A^{-1} a'||_2
  double sensitivity = 0;  // row_norm * solve_norm / |rho|  (kappa_rho / ||A||_F)
  MatrixInfo candidate;    // A with column k replaced (its log-det is not computed)
};

/// The oracle's view of one update cycle.
struct CycleStep {
  LongDouble rho = 0;          // det(A_after) / det(A_before)
  double beta = 0;     // conditioning of det B (Oracle::block_ratio)
  double kappa_before = 0;  // kappa_F = ||A||_F ||A^{-1}||_F of A_before
  double kappa_after = 0;   // ... of A_after (+inf when singular)
  double kappa_path = 0;    // the largest over the intermediate matrices (+inf: one is singular)
  double min_step = 0;      // the smallest |det A_i / det A_{i-1}| over the cycle's updates
  std::vector<Eigen::Index> columns;  // the distinct columns replaced
  MatrixInfo after;    // A_after
};

/// kappa_F = ||A||_F ||A^{-1}||_F (+inf when not finite).
double kappa_f(const MatrixInfo& a);

}  // namespace properties

/// The oracle's trace of a case (contract above).
class CaseTrace {
 public:
  properties::MatrixInfo initial;
  std::vector<properties::OracleStep> steps;
  std::vector<properties::CycleStep> cycles;  // cases with update cycles (steps, after: empty)
  std::vector<properties::MatrixInfo> after;  // the current matrix after each move
  Eigen::MatrixXd final_matrix;

  const properties::MatrixInfo& final_info() const {
    return after.empty() ? initial : after.back();
  }
};

std::shared_ptr<const CaseTrace> trace_case(const Case& c);

}  // namespace slaterlab
