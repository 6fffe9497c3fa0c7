#pragma once
// Tuning of the Gaussian trial-move step during equilibration.
//
// After every block of sweeps the step is multiplied by acc / target, where
// acc is the acceptance ratio of that block; the factor is clamped to
// [1/max_factor, max_factor] (so a block with no acceptance halves the step
// instead of zeroing it) and the step to [min_step, max_step]. The
// acceptance falls monotonically with the step, so this drives acc towards
// the target; its fixed point is acc = target.
//
// The tuner must be frozen before measuring: a step that depends on the
// walker's recent history makes the transition kernel history dependent, and
// detailed balance (hence the |Psi|^2 stationary law) holds only for a fixed
// kernel. update() on a frozen tuner is a std::logic_error.

#include <cstdint>
#include <vector>

namespace slaterlab {

struct StepTunerOptions {
  double target = 0.5;      ///< target acceptance ratio, in (0, 1)
  int block = 20;           ///< sweeps per tuning block
  double max_factor = 2.0;  ///< bound on the per-block factor, > 1
  double min_step = 1e-4;
  double max_step = 1e4;
  /// Throws std::invalid_argument naming the bad field.
  void validate() const;
};

class StepTuner {
 public:
  /// Throws std::invalid_argument for a bad option or a step outside
  /// [min_step, max_step].
  StepTuner(double initial_step, StepTunerOptions options);

  double step() const { return step_; }
  bool frozen() const { return frozen_; }
  const StepTunerOptions& options() const { return options_; }
  /// The step after each update, in order.
  const std::vector<double>& history() const { return history_; }

  /// Folds in one block (accepted of proposed moves) and returns the new
  /// step. A block with nothing proposed leaves the step alone. Throws
  /// std::logic_error once frozen.
  double update(std::int64_t accepted, std::int64_t proposed);
  /// Fixes the step for good.
  void freeze() { frozen_ = true; }

 private:
  StepTunerOptions options_;
  double step_;
  bool frozen_ = false;
  std::vector<double> history_;
};

}  // namespace slaterlab
