#pragma once
// How the command line ends: its exit codes (README "Exit codes") and the
// one line on stderr that every failure prints, whatever threw.

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

namespace slaterlab {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;        // also I/O, resources, sizes
inline constexpr int kExitInternal = 70;       // a bug: sysexits.h's EX_SOFTWARE
inline constexpr int kExitInterrupted = 130;   // 128 + SIGINT, as shells report it

/// `text` on one line: line breaks become spaces, trailing ones are dropped.
std::string one_line(std::string text);

/// Prints "slaterlab: KIND: WHAT\n" to `out`, WHAT on one line.
void print_error(std::FILE* out, std::string_view kind, std::string_view what);

/// Prints the one line for `error` to `out` and returns its exit code:
/// kExitInternal ("internal error: ...") for a std::logic_error other than
/// std::invalid_argument (bad input) and std::length_error (a size from the
/// input too large), and for an exception not derived from std::exception;
/// kExitBadInput for everything else (std::bad_alloc and
/// std::bad_array_new_length as "out of memory"). Never throws.
int report_exception(std::exception_ptr error, std::FILE* out) noexcept;

}  // namespace slaterlab
