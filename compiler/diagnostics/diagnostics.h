// User-facing diagnostics: declared once in kinds.def, collected by stages, rendered
// as `file:line:col: error: message [BW1234]` with the source line and an underline.
#pragma once

#include "source/source.h"

#include <cstdio>
#include <fmt/format.h>
#include <span>
#include <string>
#include <vector>

namespace bw {

enum class Severity { Error, Warning };

enum class DiagKind : std::uint16_t {
#define BW_DIAG(code, name, severity, message) name,
#include "diagnostics/kinds.def"
#undef BW_DIAG
};

struct DiagInfo {
    DiagKind kind;
    std::uint16_t code;
    const char* name;
    Severity severity;
    const char* message;
};

const DiagInfo& diag_info(DiagKind kind);
std::span<const DiagInfo> all_diag_infos();
std::string diag_code(DiagKind kind); // "BW1001"

struct Diagnostic {
    DiagKind kind;
    Severity severity;
    SourceLocation loc;
    std::string message;
    std::vector<std::string> hints;
};

class Diagnostics {
public:
    explicit Diagnostics(const SourceManager& sources) : sources_(sources) {}

    // Formats the kind's message with args; the returned diagnostic takes hints.
    template <typename... Args>
    Diagnostic& report(DiagKind kind, SourceLocation loc, Args&&... args)
    {
        const auto& info = diag_info(kind);
        return add(Diagnostic{kind, info.severity, loc,
                              fmt::format(fmt::runtime(info.message), std::forward<Args>(args)...), {}});
    }

    bool has_errors() const { return errors_ > 0; }
    std::size_t error_count() const { return errors_; }
    std::size_t warning_count() const { return diags_.size() - errors_; }
    const std::vector<Diagnostic>& all() const { return diags_; }

    // One diagnostic as text: header line, source line, underline, hints.
    std::string render(const Diagnostic& d, bool color) const;
    void print(std::FILE* out, bool color) const;

private:
    Diagnostic& add(Diagnostic d);

    const SourceManager& sources_;
    std::vector<Diagnostic> diags_;
    std::size_t errors_ = 0;
};

} // namespace bw
