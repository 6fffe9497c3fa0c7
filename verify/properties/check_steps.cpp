// The steps every property check shares (contract in check_steps.hpp).

#include "verify/properties/check_steps.hpp"

#include <cmath>
#include <utility>

#include "verify/properties/error_model.hpp"

namespace slaterlab::properties {

void accept_move(DeterminantUpdater& up, const MatrixInfo& after, Precision p, Eigen::Index n) {
  try {
    up.accept();
  } catch (const SingularMatrixError&) {
    if (kC * double(n) * storage_epsilon(p) * after.norm_f * after.inv_norm_f >= 0.5) {
      throw SingularOutsideErrorModel{};
    }
    throw;
  }
}

double rel_error(double value, LongDouble reference) {
  return double(std::abs(LongDouble(value) - reference) / std::abs(reference));
}

std::unique_ptr<DeterminantUpdater> make_strategy(const std::string& name, UpdaterOptions o,
                                                  int recompute_every, double breakdown) {
  o.recompute_every = recompute_every;
  if (breakdown >= 0) o.breakdown = breakdown;
  return make_updater(name, o);
}

std::optional<PropertyFailure> failure(Property p, std::string message) {
  return PropertyFailure{std::string(to_string(p)), std::move(message)};
}

}  // namespace slaterlab::properties
