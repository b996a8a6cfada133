#include "diagnostics/diagnostics.h"

#include <array>

namespace bw {

namespace {

constexpr std::array kInfos = {
#define BW_DIAG(code, name, severity, message) \
    DiagInfo{DiagKind::name, code, #name, Severity::severity, message},
#include "diagnostics/kinds.def"
#undef BW_DIAG
};

bool is_continuation(char c)
{
    return (static_cast<unsigned char>(c) & 0xc0) == 0x80;
}

// A source line as shown to a terminal: control bytes (a NUL, say) become `?`.
std::string printable(std::string_view line)
{
    std::string out(line);
    for (auto& c : out) {
        const auto b = static_cast<unsigned char>(c);
        if ((b < 0x20 && c != '\t') || b == 0x7f)
            c = '?';
    }
    return out;
}

const char* severity_word(Severity s)
{
    return s == Severity::Error ? "error" : "warning";
}

} // namespace

const DiagInfo& diag_info(DiagKind kind)
{
    return kInfos.at(static_cast<std::size_t>(kind));
}

std::span<const DiagInfo> all_diag_infos()
{
    return kInfos;
}

std::string diag_code(DiagKind kind)
{
    return fmt::format("BW{:04}", diag_info(kind).code);
}

Diagnostic& Diagnostics::add(Diagnostic d)
{
    if (d.severity == Severity::Error)
        ++errors_;
    diags_.push_back(std::move(d));
    return diags_.back();
}

std::string Diagnostics::render(const Diagnostic& d, bool color) const
{
    const char* bold = color ? "\033[1m" : "";
    const char* reset = color ? "\033[0m" : "";
    const char* sev_color = !color ? "" : d.severity == Severity::Error ? "\033[1;31m" : "\033[1;35m";
    const char* mark_color = color ? "\033[1;32m" : "";

    std::string out;
    if (d.loc.known()) {
        out += fmt::format("{}{}:{}:{}: {}", bold, sources_.file(d.loc.file).name, d.loc.line,
                           d.loc.column, reset);
    }
    out += fmt::format("{}{}:{} {}{}{} [{}]\n", sev_color, severity_word(d.severity), reset, bold,
                       d.message, reset, diag_code(d.kind));
    if (d.loc.known()) {
        const auto line = sources_.line_text(d.loc.file, d.loc.line);
        out += fmt::format("{:5} | {}\n", d.loc.line, printable(line));
        // The underline counts characters, not bytes, and keeps tabs, so that it lines up.
        std::string pad;
        const std::size_t start = std::min<std::size_t>(d.loc.column - 1, line.size());
        for (std::size_t i = 0; i < start; ++i) {
            if (!is_continuation(line[i]))
                pad += line[i] == '\t' ? '\t' : ' ';
        }
        std::size_t width = 0;
        for (std::size_t i = start; i < std::min<std::size_t>(start + d.loc.length, line.size()); ++i)
            width += is_continuation(line[i]) ? 0 : 1;
        out += fmt::format("      | {}{}{}{}\n", pad, mark_color, std::string(std::max<std::size_t>(width, 1), '^'),
                           reset);
    }
    for (const auto& hint : d.hints)
        out += fmt::format("      = {}hint:{} {}\n", bold, reset, hint);
    return out;
}

void Diagnostics::print(std::FILE* out, bool color) const
{
    for (const auto& d : diags_) {
        const auto text = render(d, color);
        std::fwrite(text.data(), 1, text.size(), out);
    }
}

} // namespace bw
