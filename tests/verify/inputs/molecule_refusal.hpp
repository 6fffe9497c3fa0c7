#pragma once
// The one shape every refused molecule file has: read_molecule throws
// ConfigError whose message is one line that starts with the file's path and
// names the problem.

#include <gtest/gtest.h>

#include <string>

#include "verify/inputs/config_error.hpp"
#include "verify/inputs/molecule_file.hpp"

namespace slaterlab::testing {

/// Expects read_molecule(file) to be refused with one line "FILE: ..."
/// containing `words`.
inline void expect_molecule_refused(const std::string& file, const std::string& words) {
  try {
    (void)read_molecule(file);
    ADD_FAILURE() << file << " accepted; expected: " << words;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file + ": ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find(words), std::string::npos) << what;
  }
}

}  // namespace slaterlab::testing
