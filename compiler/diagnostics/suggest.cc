#include "diagnostics/suggest.h"

#include <algorithm>
#include <fmt/format.h>

namespace bw {

std::size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

std::vector<std::string> closest(std::string_view word, const std::vector<std::string>& candidates, std::size_t limit)
{
    const std::size_t max_distance = std::max<std::size_t>(1, word.size() / 3);
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (const auto& c : candidates) {
        const auto d = edit_distance(word, c);
        if (d <= max_distance && c != word)
            scored.emplace_back(d, c);
    }
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && i < limit; ++i)
        out.push_back(scored[i].second);
    return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates, std::string_view prefix)
{
    const auto best = closest(word, candidates);
    if (best.empty())
        return {};
    std::string out = "did you mean ";
    for (std::size_t i = 0; i < best.size(); ++i)
        out += fmt::format("{}`{}{}`", i == 0 ? "" : i + 1 == best.size() ? " or " : ", ", prefix, best[i]);
    return out + "?";
}

} // namespace bw
