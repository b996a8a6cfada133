// Source files and locations. Every diagnostic and every compiled rule points back here.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace bw {

using FileId = std::uint32_t;

// 1-based line and column (columns count bytes); line 0 means "no location".
struct SourceLocation {
    FileId file = 0;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    std::uint32_t length = 0;

    bool known() const { return line != 0; }
    auto operator<=>(const SourceLocation&) const = default;
};

struct SourceFile {
    FileId id = 0;
    std::string name; // as the user named it, used in diagnostics
    std::string text;
};

// Owns the text of every file a compilation reads; references stay valid for its lifetime.
class SourceManager {
public:
    FileId add(std::string name, std::string text);
    const SourceFile& file(FileId id) const { return files_.at(id); }
    // The text of a 1-based line, without its newline; empty when out of range.
    std::string_view line_text(FileId id, std::uint32_t line) const;
    // The bytes a location covers (clamped to its line).
    std::string_view slice(const SourceLocation& loc) const;
    std::size_t size() const { return files_.size(); }

private:
    std::deque<SourceFile> files_;
};

} // namespace bw
