// Did-you-mean: the known names closest to a misspelt one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bw {

// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
std::size_t edit_distance(std::string_view a, std::string_view b);

// Up to `limit` candidates within max(1, size/3) edits of `word`, closest first.
std::vector<std::string> closest(std::string_view word, const std::vector<std::string>& candidates,
                                 std::size_t limit = 3);

// "did you mean `a` or `b`?", or empty when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates,
                         std::string_view prefix = "");

} // namespace bw
