#include "diagnostics/emit.h"

#include <algorithm>
#include <utility>

namespace bw {

namespace {

constexpr char32_t kReplacement = 0xfffd;

// Decodes the code point at s[i] and moves i past it. An ill-formed sequence yields one U+FFFD
// per maximal subpart (The Unicode Standard, section 3.9): a bad byte costs its neighbours nothing.
char32_t decode_utf8(std::string_view s, std::size_t& i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) {
        ++i;
        return lead;
    }
    std::size_t length = 0;
    unsigned char lo = 0x80, hi = 0xbf; // the range of the second byte
    char32_t cp = 0;
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
        cp = lead & 0x1fu;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        cp = lead & 0x0fu;
        lo = lead == 0xe0 ? 0xa0 : 0x80; // no overlong forms
        hi = lead == 0xed ? 0x9f : 0xbf; // no surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        cp = lead & 0x07u;
        lo = lead == 0xf0 ? 0x90 : 0x80;
        hi = lead == 0xf4 ? 0x8f : 0xbf; // nothing above U+10FFFF
    } else {
        ++i;
        return kReplacement;
    }
    std::size_t k = 1;
    for (; k < length && i + k < s.size(); ++k) {
        const unsigned char b = byte(i + k);
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf))
            break;
        cp = (cp << 6) | (b & 0x3fu);
    }
    i += k;
    return k == length ? cp : kReplacement;
}

void append_utf8(std::string& out, char32_t cp)
{
    const auto put = [&](char32_t v) { out += static_cast<char>(v); };
    if (cp < 0x80) {
        put(cp);
    } else if (cp < 0x800) {
        put(0xc0 | (cp >> 6));
        put(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        put(0xe0 | (cp >> 12));
        put(0x80 | ((cp >> 6) & 0x3f));
        put(0x80 | (cp & 0x3f));
    } else {
        put(0xf0 | (cp >> 18));
        put(0x80 | ((cp >> 12) & 0x3f));
        put(0x80 | ((cp >> 6) & 0x3f));
        put(0x80 | (cp & 0x3f));
    }
}

// A JSON string literal (RFC 8259) holding `s` as valid UTF-8. Control characters (and DEL,
// which terminals act on) are written as \u00XX so that no output line holds raw control bytes.
std::string json_string(std::string_view s)
{
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const char32_t cp = decode_utf8(s, i);
        if (cp == '"' || cp == '\\') {
            out += '\\';
            out += static_cast<char>(cp);
        } else if (cp < 0x20 || cp == 0x7f) {
            out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
        } else {
            append_utf8(out, cp);
        }
    }
    out += '"';
    return out;
}

// A 1-based byte column as a 1-based column in UTF-16 code units: every character that starts
// before the byte counts, U+FFFD for each ill-formed subpart as a viewer would show it.
std::uint32_t utf16_column(std::string_view line, std::uint32_t byte_column)
{
    const std::size_t end = std::min<std::size_t>(byte_column - 1, line.size());
    std::uint32_t units = 0;
    for (std::size_t i = 0; i < end;)
        units += decode_utf8(line, i) >= 0x10000 ? 2 : 1;
    return units + 1;
}

// An artifactLocation.uri for a file as the user named it (RFC 3986): unreserved characters and
// `/` stay, every other byte is percent-encoded (a `:` in the first segment would read as a
// scheme; a `\` is an ordinary file name byte on Linux). Absolute paths become file: URIs.
std::string path_to_uri(std::string_view path)
{
    std::string out = path.starts_with('/') ? "file://" : "";
    for (const char c : path) {
        const auto b = static_cast<unsigned char>(c);
        const bool keep = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
                          c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
        if (keep)
            out += c;
        else
            out += fmt::format("%{:02X}", b);
    }
    return out;
}

// A rule's description: the kind's message with `...` for each value. A message that is
// nothing but a value ("{}") says nothing, so the kind's name in words stands in for it.
std::string describe_kind(const DiagInfo& info)
{
    const std::string_view message = info.message;
    std::string out;
    bool has_words = false;
    for (std::size_t i = 0; i < message.size(); ++i) {
        const char c = message[i];
        if ((c == '{' || c == '}') && i + 1 < message.size() && message[i + 1] == c) {
            out += c; // fmt's escaped brace
            ++i;
        } else if (c == '{') {
            i = std::min(message.find('}', i), message.size());
            out += "...";
        } else {
            out += c;
            has_words |= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        }
    }
    if (has_words)
        return out;
    out.clear();
    for (const char c : std::string_view(info.name)) {
        if (c >= 'A' && c <= 'Z') {
            if (!out.empty())
                out += ' ';
            out += static_cast<char>(c - 'A' + 'a');
        } else {
            out += c;
        }
    }
    return out;
}

const char* severity_word(Severity s)
{
    return s == Severity::Error ? "error" : "warning";
}

// Writes JSON in order, adding the commas; pretty output indents by two spaces a level.
class JsonWriter {
public:
    explicit JsonWriter(bool pretty) : pretty_(pretty) {}

    JsonWriter& open_object() { return open('{', '}'); }
    JsonWriter& open_array() { return open('[', ']'); }

    JsonWriter& close()
    {
        const auto [bracket, has_items] = open_.back();
        open_.pop_back();
        if (has_items)
            newline();
        out_ += bracket;
        return *this;
    }

    JsonWriter& key(std::string_view name)
    {
        begin_value();
        out_ += json_string(name);
        out_ += pretty_ ? ": " : ":";
        after_key_ = true;
        return *this;
    }

    JsonWriter& string(std::string_view v)
    {
        begin_value();
        out_ += json_string(v);
        return *this;
    }

    JsonWriter& number(std::uint64_t v)
    {
        begin_value();
        out_ += fmt::format("{}", v);
        return *this;
    }

    JsonWriter& null()
    {
        begin_value();
        out_ += "null";
        return *this;
    }

    std::string take() { return std::move(out_); }

private:
    JsonWriter& open(char bracket, char closing)
    {
        begin_value();
        out_ += bracket;
        open_.emplace_back(closing, false);
        return *this;
    }

    void begin_value()
    {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (open_.empty())
            return;
        if (open_.back().second)
            out_ += ',';
        open_.back().second = true;
        newline();
    }

    void newline()
    {
        if (pretty_) {
            out_ += '\n';
            out_.append(2 * open_.size(), ' ');
        }
    }

    std::string out_;
    std::vector<std::pair<char, bool>> open_; // closing bracket, whether it has items yet
    bool after_key_ = false;
    bool pretty_;
};

} // namespace

std::optional<DiagFormat> parse_diag_format(std::string_view name)
{
    if (name == "text")
        return DiagFormat::Text;
    if (name == "json")
        return DiagFormat::Json;
    if (name == "sarif")
        return DiagFormat::Sarif;
    return std::nullopt;
}

DiagnosticSink::DiagnosticSink(DiagFormat format, bool color, std::string tool_version)
    : format_(format), color_(color), tool_version_(std::move(tool_version))
{
}

std::optional<DiagnosticSink::Location> DiagnosticSink::locate(const SourceManager& sources,
                                                               const SourceLocation& loc)
{
    if (!loc.known())
        return std::nullopt;
    Location where{sources.file(loc.file).name, std::string(sources.line_text(loc.file, loc.line)), loc.line, 0, 0};
    // A location may point just past the line's end (a missing `}`), never further.
    const auto line_end = static_cast<std::uint32_t>(where.source_line.size() + 1);
    where.column = std::clamp<std::uint32_t>(loc.column, 1, line_end);
    where.end_column = std::clamp<std::uint32_t>(loc.column + loc.length, where.column, line_end);
    return where;
}

void DiagnosticSink::add(const SourceManager& sources, const Diagnostics& diags)
{
    for (const auto& d : diags.all()) {
        entries_.push_back(Entry{d.kind, d.severity, d.message, d.hints, locate(sources, d.loc),
                                 format_ == DiagFormat::Text ? diags.render(d, color_) : std::string()});
    }
}

std::string DiagnosticSink::document() const
{
    switch (format_) {
    case DiagFormat::Text: {
        std::string out;
        for (const auto& e : entries_)
            out += e.text;
        return out;
    }
    case DiagFormat::Json:
        return render_json_lines();
    case DiagFormat::Sarif:
        return render_sarif();
    }
    return {};
}

std::string DiagnosticSink::render_json_lines() const
{
    std::string out;
    for (const auto& e : entries_) {
        JsonWriter w(false);
        w.open_object();
        // The same fields for every diagnostic: null where there is no location.
        const auto& where = e.where;
        const auto string_or_null = [&](std::string_view name, const std::string Location::*field) {
            w.key(name);
            where ? w.string((*where).*field) : w.null();
        };
        const auto number_or_null = [&](std::string_view name, std::uint32_t Location::*field) {
            w.key(name);
            where ? w.number((*where).*field) : w.null();
        };
        string_or_null("file", &Location::file);
        number_or_null("line", &Location::line);
        number_or_null("column", &Location::column);
        number_or_null("end_column", &Location::end_column);
        w.key("severity").string(severity_word(e.severity));
        w.key("code").string(diag_code(e.kind));
        w.key("name").string(diag_info(e.kind).name);
        w.key("message").string(e.message);
        w.key("hints").open_array();
        for (const auto& h : e.hints)
            w.string(h);
        w.close();
        string_or_null("source_line", &Location::source_line);
        w.close();
        out += w.take();
        out += '\n';
    }
    return out;
}

std::string DiagnosticSink::render_sarif() const
{
    JsonWriter w(true);
    w.open_object();
    w.key("$schema").string("https://json.schemastore.org/sarif-2.1.0.json");
    w.key("version").string("2.1.0");
    w.key("runs").open_array().open_object();

    w.key("tool").open_object().key("driver").open_object();
    w.key("name").string("bwc");
    w.key("version").string(tool_version_);
    w.key("rules").open_array();
    // Every declared kind, in declaration order, so that a rule's index is stable for a
    // given bwc and results can point at their rule by ruleIndex.
    for (const auto& info : all_diag_infos()) {
        w.open_object();
        w.key("id").string(diag_code(info.kind));
        w.key("name").string(info.name);
        w.key("shortDescription").open_object().key("text").string(describe_kind(info)).close();
        w.key("defaultConfiguration").open_object().key("level").string(severity_word(info.severity)).close();
        w.close();
    }
    w.close().close().close(); // rules, driver, tool

    w.key("columnKind").string("utf16CodeUnits");
    w.key("results").open_array();
    for (const auto& e : entries_) {
        std::string text = e.message;
        for (const auto& h : e.hints)
            text += "\nhint: " + h;

        w.open_object();
        w.key("ruleId").string(diag_code(e.kind));
        // all_diag_infos() is indexed by kind, as diag_info() relies on too.
        w.key("ruleIndex").number(static_cast<std::uint64_t>(e.kind));
        w.key("level").string(severity_word(e.severity));
        w.key("message").open_object().key("text").string(text).close();
        if (const auto& where = e.where) {
            const std::string_view line = where->source_line;
            const auto start = utf16_column(line, where->column);
            const auto end = utf16_column(line, where->end_column);
            const auto line_end = utf16_column(line, static_cast<std::uint32_t>(line.size() + 1));
            w.key("locations").open_array().open_object();
            w.key("physicalLocation").open_object();
            w.key("artifactLocation").open_object().key("uri").string(path_to_uri(where->file)).close();
            // A snippet is the region's own text (SARIF 3.30.13); the whole line goes in
            // contextRegion, which must be a proper superset of the region (3.29.5).
            w.key("region").open_object();
            w.key("startLine").number(where->line);
            w.key("startColumn").number(start);
            w.key("endColumn").number(end);
            if (where->end_column > where->column) {
                const auto region_text = line.substr(where->column - 1, where->end_column - where->column);
                w.key("snippet").open_object().key("text").string(region_text).close();
            }
            w.close();
            if (start != 1 || end != line_end) {
                w.key("contextRegion").open_object();
                w.key("startLine").number(where->line);
                w.key("startColumn").number(1);
                w.key("endColumn").number(line_end);
                if (!line.empty())
                    w.key("snippet").open_object().key("text").string(line).close();
                w.close();
            }
            w.close().close().close(); // physicalLocation, location, locations
        }
        w.close();
    }
    w.close(); // results
    w.close().close().close(); // run, runs, log
    auto out = w.take();
    out += '\n';
    return out;
}

} // namespace bw
