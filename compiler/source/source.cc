#include "source/source.h"

#include <algorithm>

namespace bw {

FileId SourceManager::add(std::string name, std::string text)
{
    const auto id = static_cast<FileId>(files_.size());
    files_.push_back(SourceFile{id, std::move(name), std::move(text)});
    return id;
}

std::string_view SourceManager::line_text(FileId id, std::uint32_t line) const
{
    if (id >= files_.size() || line == 0)
        return {};
    std::string_view text = files_[id].text;
    for (std::uint32_t n = 1; n < line; ++n) {
        const auto nl = text.find('\n');
        if (nl == std::string_view::npos)
            return {};
        text.remove_prefix(nl + 1);
    }
    const auto end = text.find('\n');
    auto result = text.substr(0, end);
    if (!result.empty() && result.back() == '\r')
        result.remove_suffix(1);
    return result;
}

std::string_view SourceManager::slice(const SourceLocation& loc) const
{
    const auto line = line_text(loc.file, loc.line);
    if (loc.column == 0 || loc.column > line.size() + 1)
        return {};
    const std::size_t start = loc.column - 1;
    return line.substr(start, std::min<std::size_t>(loc.length, line.size() - start));
}

} // namespace bw
