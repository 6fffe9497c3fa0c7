#pragma once
// `slaterlab fuzz`: the command over the fuzz engine
// (verify/properties/fuzz_engine.hpp), which checks the strategy properties
// on random and adversarial cases, shrinks failures and keeps them in the
// corpus (docs/fuzzing.md). command_line.cpp parses the flags into FuzzArgs.
//
// fuzz_command runs the engine, then prints each failure (message,
// counterexample, reproduction, file) and the summary table (cases and
// comparisons per configuration) on `out`. Returns 0 when nothing failed, 1
// otherwise; bad input throws std::invalid_argument (exit code 2) before any
// work. `progress`, when given, receives the engine's one-line progress
// display (for a terminal; nothing with `quiet`).

#include <iosfwd>

#include "verify/properties/fuzz_engine.hpp"

namespace slaterlab {

int fuzz_command(const FuzzArgs& args, std::ostream& out, std::ostream* progress);

}  // namespace slaterlab
