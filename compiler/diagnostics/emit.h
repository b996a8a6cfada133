// Diagnostics as one document for people (text) or for tools (JSON Lines, SARIF 2.1.0),
// covering every file of a run: CI uploads one SARIF log per `bwc check`.
#pragma once

#include "diagnostics/diagnostics.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bw {

enum class DiagFormat { Text, Json, Sarif };

// "text", "json" or "sarif".
std::optional<DiagFormat> parse_diag_format(std::string_view name);

// Collects the diagnostics of several compilations, then renders them as one document:
//   text   what Diagnostics::print writes (escape codes only when `color`);
//   json   one object per diagnostic per line: file, line, column, end_column (1-based byte
//          columns as in the text output, end exclusive; null without a location), severity,
//          code, name, message, hints, source_line;
//   sarif  one log with one run: a rule per declared kind, a result per diagnostic; columns
//          count UTF-16 code units, as run.columnKind states.
// Strings are valid UTF-8 JSON whatever the input bytes: invalid sequences become U+FFFD.
class DiagnosticSink {
public:
    DiagnosticSink(DiagFormat format, bool color, std::string tool_version);

    // Copies what it needs, so the compilation may go away. `sources` must be the manager
    // that `diags` reports against.
    void add(const SourceManager& sources, const Diagnostics& diags);

    // The whole document; for sarif a complete log even when nothing was reported.
    std::string document() const;

private:
    // Where a diagnostic points, resolved against its file.
    struct Location {
        std::string file;
        std::string source_line;
        std::uint32_t line;
        std::uint32_t column;     // 1-based byte column
        std::uint32_t end_column; // exclusive, clamped to the line's end
    };

    struct Entry {
        DiagKind kind;
        Severity severity;
        std::string message;
        std::vector<std::string> hints;
        std::optional<Location> where;
        std::string text; // for DiagFormat::Text: rendered while the sources exist
    };

    static std::optional<Location> locate(const SourceManager& sources, const SourceLocation& loc);
    std::string render_json_lines() const;
    std::string render_sarif() const;

    DiagFormat format_;
    bool color_;
    std::string tool_version_;
    std::vector<Entry> entries_;
};

} // namespace bw
