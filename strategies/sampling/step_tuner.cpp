#include "slaterlab/strategies/sampling/step_tuner.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace slaterlab {

void StepTunerOptions::validate() const {
  if (!(target > 0.0 && target < 1.0))
    throw std::invalid_argument("tuner target acceptance must lie in (0, 1), got " + std::to_string(target));
  if (block < 1) throw std::invalid_argument("tuner block must be >= 1 sweep, got " + std::to_string(block));
  if (!(max_factor > 1.0 && std::isfinite(max_factor)))
    throw std::invalid_argument("tuner max_factor must be finite and > 1, got " + std::to_string(max_factor));
  if (!(min_step > 0.0 && min_step <= max_step && std::isfinite(max_step)))
    throw std::invalid_argument("tuner step bounds must satisfy 0 < min_step <= max_step < inf");
}

StepTuner::StepTuner(double initial_step, StepTunerOptions options)
    : options_(options), step_(initial_step) {
  options_.validate();
  if (!(initial_step >= options_.min_step && initial_step <= options_.max_step))
    throw std::invalid_argument("initial step " + std::to_string(initial_step) +
                                " outside the tuner's [min_step, max_step]");
}

double StepTuner::update(std::int64_t accepted, std::int64_t proposed) {
  if (frozen_) throw std::logic_error("StepTuner::update after freeze(): the step is fixed for measuring");
  if (accepted < 0 || accepted > proposed)
    throw std::invalid_argument("StepTuner::update: need 0 <= accepted <= proposed");
  if (proposed > 0) {
    const double acc = static_cast<double>(accepted) / static_cast<double>(proposed);
    const double factor =
        std::clamp(acc / options_.target, 1.0 / options_.max_factor, options_.max_factor);
    step_ = std::clamp(step_ * factor, options_.min_step, options_.max_step);
  }
  history_.push_back(step_);
  return step_;
}

}  // namespace slaterlab
