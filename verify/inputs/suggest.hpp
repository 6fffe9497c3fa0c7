#pragma once
// "Did you mean ...?" for user-facing names (TOML keys, strategies, formats).

#include <string>
#include <string_view>
#include <vector>

namespace slaterlab {

/// Edit (Levenshtein) distance between two strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, or "" when none is plausibly meant
/// (distance above max(2, |word| / 2)).
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" or " (valid: a, b, c)" when nothing is close.
std::string suggestion_suffix(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace slaterlab
