// Fuzz target: the study-file reader. The bytes are a study file; it is
// parsed (parse_study) and planned (plan_study), as every command does
// before any work; no work is run. Any exception but the documented ones
// (ConfigError, ReplayError, ResourceError: std::invalid_argument; IoError)
// or a sanitizer report is a finding.

#include <cstddef>
#include <cstdint>
#include <string>

#include "verify/inputs/config.hpp"
#include "verify/run/plan.hpp"
#include "verify/store/hdf5_store.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace slaterlab;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const StudyConfig study = parse_study(text, "fuzz.toml");
    (void)plan_study(study);
  } catch (const std::invalid_argument&) {
  } catch (const IoError&) {
  }
  return 0;
}
