#include "verify/cli/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <stdexcept>

namespace slaterlab {

std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

void print_error(std::FILE* out, std::string_view kind, std::string_view what) {
  fmt::print(out, "slaterlab: {}: {}\n", kind, one_line(std::string(what)));
}

int report_exception(std::exception_ptr error, std::FILE* out) noexcept {
  try {
    try {
      std::rethrow_exception(error);
    } catch (const std::invalid_argument& e) {  // ConfigError, InputError, bad values
      print_error(out, "error", e.what());
    } catch (const std::length_error& e) {
      // A size from the input (a file's declared shape, an option) beyond
      // what a container can hold.
      print_error(out, "error", fmt::format("a size too large for this machine ({})", e.what()));
    } catch (const std::bad_alloc&) {
      // Anywhere the up-front estimate could not see (a replay file larger
      // than its shape suggests, Arb at a high precision, another process
      // taking the memory), std::bad_array_new_length (an impossible size)
      // included. The store's guarantee holds: the output was not replaced,
      // only a killed run leaves its .partial.
      print_error(out, "error", "out of memory (slaterlab run --dry-run shows the estimates)");
    } catch (const std::logic_error& e) {
      print_error(out, "internal error",
                  fmt::format("{} (a bug in slaterlab: please report it)", e.what()));
      return kExitInternal;
    } catch (const std::exception& e) {  // I/O, the environment, a library
      print_error(out, "error", e.what());
    } catch (...) {
      print_error(out, "internal error",
                  "an exception of unknown type (a bug in slaterlab: please report it)");
      return kExitInternal;
    }
  } catch (...) {  // printing failed (out of memory): the code still tells
  }
  return kExitBadInput;
}

}  // namespace slaterlab
