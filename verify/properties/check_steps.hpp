#pragma once
// The steps every property check shares: the strategy under check, an
// accept under the error model, a relative error against the oracle, a
// failure with its figures.
//
// - make_strategy() builds the strategy with a recompute cadence and, when
//   breakdown >= 0, a breakdown threshold (make_updater's errors pass).
// - accept_move() accepts; a SingularMatrixError where the model itself makes
//   no claim (c N eps kappa_F >= 1/2 for the matrix after the move) becomes
//   SingularOutsideErrorModel, which ends the case with nothing asserted (check_case
//   counts it as vacuous); inside the model it propagates, and fails.

#include <Eigen/Core>

#include <memory>
#include <optional>
#include <string>

#include "slaterlab/strategies/determinant/updater_options.hpp"
#include "verify/properties/oracle.hpp"
#include "verify/properties/property.hpp"

namespace slaterlab::properties {

/// A strategy reported, as documented, a matrix singular to its working
/// precision where the error model itself makes no claim (c N eps
/// kappa_F >= 1/2 for the matrix after the move): the case ends there and
/// nothing more is asserted (check_case counts it as vacuous).
struct SingularOutsideErrorModel {};

/// accept(), with a SingularMatrixError beyond the model turned into
/// SingularOutsideErrorModel; inside the model it stays a failure.
void accept_move(DeterminantUpdater& up, const MatrixInfo& after, Precision p, Eigen::Index n);

/// |value - reference| / |reference|, in long double.
double rel_error(double value, LongDouble reference);

std::unique_ptr<DeterminantUpdater> make_strategy(const std::string& name, UpdaterOptions o,
                                                  int recompute_every, double breakdown = -1.0);

std::optional<PropertyFailure> failure(Property p, std::string message);

}  // namespace slaterlab::properties
