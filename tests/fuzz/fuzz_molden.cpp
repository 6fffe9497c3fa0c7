// Fuzz target: the Molden reader (read_molden_text, with read_molecule's
// checks) on the bytes as a file's text. Any exception but ConfigError, or a
// sanitizer report, is a bug of ours. Seeded from the hand-made files of
// tests/verify/inputs/molden/, so that mutations start from files that read.

#include <cstddef>
#include <cstdint>
#include <string>

#include "verify/inputs/config_error.hpp"
#include "verify/inputs/molecule_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)slaterlab::read_molden_text(text, "fuzz.molden");
  } catch (const slaterlab::ConfigError&) {
  }
  return 0;
}
