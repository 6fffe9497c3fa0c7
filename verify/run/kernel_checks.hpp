#pragma once
// The checks every external kernel is held to in `run` and `regress`, on
// by default (docs/kernels.md, "What each failure produces"): each metric
// of the table within a first-order error model of a correct update in the
// kernel's storage precision, and no metric the kernel was asked for NaN
// or infinite. They catch wrong answers (a dropped update, a wrong
// inverse, a log-determinant that does not follow the ratios), not a
// kernel that is merely less accurate than sm: a backward-stable update of
// any form stays inside them.
//
// Input: the strategy's summary over the experiment and what the
// experiment measured of the exact matrices (KernelModelInputs). Output:
// one line per metric beyond its model, naming the value and the limit;
// empty when all hold. Pure: no state, no I/O.

#include <cstdint>
#include <string>
#include <vector>

#include "verify/store/results.hpp"

namespace slaterlab {

struct KernelModelInputs {
  double n = 0;          // matrix size N
  double epsilon = 0;    // unit roundoff of the kernel's storage precision
  double kappa = 0;      // largest 1-norm condition number of the exact matrix at a checkpoint
                         // where it is regular (0: none measured)
  std::int64_t carried = 0;   // updates a kernel carries between refactorisations, at most
  std::int64_t accepted = 0;  // accepted column replacements of the experiment
  std::int64_t longest_cycle = 0;  // updates of the experiment's longest cycle (0: no cycles)
  std::int64_t nonfinite_log_det = 0;  // checkpoints where log|det| came back NaN or infinite
  std::int64_t nonfinite_inverse = 0;  // ... the inverse's residual or divergence
};

std::vector<std::string> kernel_model_failures(const StrategySummary& s,
                                               const KernelModelInputs& in);

}  // namespace slaterlab
