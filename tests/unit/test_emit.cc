// Diagnostics for tools: `--format=json` (JSON Lines) and `--format=sarif` (SARIF 2.1.0).
// Every document is read back with a strict JSON parser, so each test also proves it valid.
#include "diagnostics/emit.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <stdexcept>

using namespace bw;
using namespace std::string_literals;

namespace {

// A parsed JSON value; an object keeps its keys in order.
struct Json {
    enum class Type { Null, Bool, Number, String, Array, Object };
    Type type = Type::Null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<std::string> keys; // an object's keys, parallel to items
    std::vector<Json> items;       // an array's elements or an object's values

    bool is_null() const { return type == Type::Null; }
    bool has(std::string_view key) const { return std::find(keys.begin(), keys.end(), key) != keys.end(); }
    const Json& get(std::string_view key) const
    {
        const auto it = std::find(keys.begin(), keys.end(), key);
        if (type != Type::Object || it == keys.end())
            throw std::runtime_error(fmt::format("no key `{}`", key));
        return items[static_cast<std::size_t>(it - keys.begin())];
    }
    const Json& at(std::size_t i) const { return items.at(i); }
    std::size_t size() const { return items.size(); }
    std::uint64_t integer() const
    {
        if (type != Type::Number)
            throw std::runtime_error("not a number");
        return static_cast<std::uint64_t>(number);
    }
    const std::string& str() const
    {
        if (type != Type::String)
            throw std::runtime_error("not a string");
        return string;
    }
};

// RFC 8259, strictly: no trailing commas, no raw control characters or invalid UTF-8 in
// strings, no lone surrogates, no duplicate keys, nothing after the value. Throws on error.
class JsonParser {
public:
    static Json parse(std::string_view text)
    {
        JsonParser p(text);
        Json v = p.value();
        p.skip_space();
        if (p.pos_ != text.size())
            p.fail("text after the value");
        return v;
    }

private:
    explicit JsonParser(std::string_view text) : text_(text) {}

    [[noreturn]] void fail(const std::string& what) const
    {
        throw std::runtime_error(fmt::format("invalid JSON: {} at byte {}", what, pos_));
    }

    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

    void skip_space()
    {
        while (pos_ < text_.size() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
            ++pos_;
    }

    void literal(std::string_view word)
    {
        if (text_.substr(pos_, word.size()) != word)
            fail("unknown literal");
        pos_ += word.size();
    }

    Json value()
    {
        skip_space();
        Json v;
        switch (peek()) {
        case '{':
            v.type = Json::Type::Object;
            ++pos_;
            skip_space();
            if (peek() == '}') {
                ++pos_;
                return v;
            }
            for (;;) {
                skip_space();
                if (peek() != '"')
                    fail("expected a key");
                auto key = string();
                if (v.has(key))
                    fail("duplicate key " + key);
                skip_space();
                if (peek() != ':')
                    fail("expected `:`");
                ++pos_;
                v.keys.push_back(std::move(key));
                v.items.push_back(value());
                skip_space();
                if (peek() == '}') {
                    ++pos_;
                    return v;
                }
                if (peek() != ',')
                    fail("expected `,` or `}`");
                ++pos_;
            }
        case '[':
            v.type = Json::Type::Array;
            ++pos_;
            skip_space();
            if (peek() == ']') {
                ++pos_;
                return v;
            }
            for (;;) {
                v.items.push_back(value());
                skip_space();
                if (peek() == ']') {
                    ++pos_;
                    return v;
                }
                if (peek() != ',')
                    fail("expected `,` or `]`");
                ++pos_;
            }
        case '"':
            v.type = Json::Type::String;
            v.string = string();
            return v;
        case 't':
            literal("true");
            v.type = Json::Type::Bool;
            v.boolean = true;
            return v;
        case 'f':
            literal("false");
            v.type = Json::Type::Bool;
            return v;
        case 'n':
            literal("null");
            return v;
        default:
            v.type = Json::Type::Number;
            v.number = number();
            return v;
        }
    }

    double number()
    {
        const auto start = pos_;
        const auto digits = [&] {
            const auto from = pos_;
            while (peek() >= '0' && peek() <= '9')
                ++pos_;
            if (pos_ == from)
                fail("expected a digit");
        };
        if (peek() == '-')
            ++pos_;
        if (peek() == '0')
            ++pos_;
        else
            digits();
        if (peek() == '.') {
            ++pos_;
            digits();
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-')
                ++pos_;
            digits();
        }
        return std::stod(std::string(text_.substr(start, pos_ - start)));
    }

    unsigned hex4()
    {
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = peek();
            ++pos_;
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= static_cast<unsigned>(c - 'A' + 10);
            else
                fail("bad \\u escape");
        }
        return v;
    }

    static void put_utf8(std::string& out, unsigned cp)
    {
        const auto put = [&](unsigned b) { out += static_cast<char>(b); };
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

    // Consumes one well-formed UTF-8 character of a string's raw text.
    void raw_utf8(std::string& out)
    {
        const auto lead = static_cast<unsigned char>(peek());
        const std::size_t length = lead < 0x80          ? 1
                                   : lead >> 5 == 0x06  ? 2
                                   : lead >> 4 == 0x0e  ? 3
                                   : lead >> 3 == 0x1e  ? 4
                                                        : 0;
        if (length == 0 || pos_ + length > text_.size())
            fail("invalid UTF-8");
        unsigned cp = length == 1 ? lead : lead & (0x7fu >> length);
        for (std::size_t k = 1; k < length; ++k) {
            const auto b = static_cast<unsigned char>(text_[pos_ + k]);
            if ((b & 0xc0) != 0x80)
                fail("invalid UTF-8");
            cp = (cp << 6) | (b & 0x3fu);
        }
        constexpr unsigned kMin[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < kMin[length] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            fail("invalid UTF-8");
        out.append(text_.substr(pos_, length));
        pos_ += length;
    }

    std::string string()
    {
        ++pos_; // the opening quote
        std::string out;
        for (;;) {
            if (pos_ >= text_.size())
                fail("unterminated string");
            const char c = peek();
            if (c == '"') {
                ++pos_;
                return out;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                fail("raw control character in a string");
            if (c != '\\') {
                raw_utf8(out);
                continue;
            }
            ++pos_;
            const char e = peek();
            ++pos_;
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xdc00 && cp <= 0xdfff)
                    fail("lone low surrogate");
                if (cp >= 0xd800 && cp <= 0xdbff) {
                    if (text_.substr(pos_, 2) != "\\u")
                        fail("lone high surrogate");
                    pos_ += 2;
                    const unsigned low = hex4();
                    if (low < 0xdc00 || low > 0xdfff)
                        fail("bad low surrogate");
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                }
                put_utf8(out, cp);
                break;
            }
            default:
                fail("unknown escape");
            }
        }
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

std::vector<Json> json_lines(const std::string& doc)
{
    std::vector<Json> out;
    REQUIRE((doc.empty() || doc.back() == '\n'));
    std::size_t start = 0;
    while (start < doc.size()) {
        const auto nl = doc.find('\n', start);
        out.push_back(JsonParser::parse(std::string_view(doc).substr(start, nl - start)));
        start = nl + 1;
    }
    return out;
}

std::string render(DiagFormat format, const std::vector<const Compilation*>& compilations, bool color = false)
{
    DiagnosticSink sink(format, color, "9.9.9 (test)");
    for (const auto* c : compilations)
        sink.add(c->sources, c->diags);
    return sink.document();
}

std::string render(DiagFormat format, const test::CompileResult& r)
{
    return render(format, {r.compilation.get()});
}

const std::string kReplacementChar = "\xef\xbf\xbd"; // U+FFFD

// A located diagnostic in a file of our choosing; SyntaxError's message is the argument itself.
Diagnostic& report_at(Compilation& c, FileId file, std::uint32_t line, std::uint32_t column, std::uint32_t length,
                      const std::string& message)
{
    return c.diags.report(DiagKind::SyntaxError, SourceLocation{file, line, column, length}, message);
}

// Broken on line 3, which starts with a tab and holds quotes and a backslash.
const char* kEscapePolicy = "policy \"p\" {\n\tdefault deny\n\tallow \"/tmp/a\\qb\"\n}\n";

// A warning, made by hand: which policies warn changes with the language, a kind's severity does not.
void report_warning(Compilation& c)
{
    const auto f = c.sources.add("w.bwp", "policy \"p\" {\n    allow /usr/\n    allow /usr/\n}\n");
    c.diags.report(DiagKind::DuplicateRule, SourceLocation{f, 3, 5, 11}, "/usr/", 2).hints.push_back("remove one");
}

} // namespace

TEST_CASE("--format names the three formats", "[emit]")
{
    CHECK(parse_diag_format("text") == DiagFormat::Text);
    CHECK(parse_diag_format("json") == DiagFormat::Json);
    CHECK(parse_diag_format("sarif") == DiagFormat::Sarif);
    CHECK_FALSE(parse_diag_format("JSON"));
    CHECK_FALSE(parse_diag_format("xml"));
    CHECK_FALSE(parse_diag_format(""));
}

TEST_CASE("json: one object per line, fields in a fixed order", "[emit]")
{
    Compilation c;
    const auto f = c.sources.add("dir/a.bwp", "policy p {\n}\n");
    report_at(c, f, 1, 8, 1, "expected `\"`").hints.push_back("quote the name");
    CHECK(render(DiagFormat::Json, {&c}) ==
          R"({"file":"dir/a.bwp","line":1,"column":8,"end_column":9,"severity":"error","code":"BW1002",)"
          R"("name":"SyntaxError","message":"expected `\"`","hints":["quote the name"],"source_line":"policy p {"})"
          "\n");
}

TEST_CASE("json: fields match the diagnostics of real compilations", "[emit]")
{
    const auto escape = test::compile_text(kEscapePolicy);
    Compilation warning;
    report_warning(warning);
    const auto missing = test::compile_file("/nonexistent-dir/missing.bwp");
    const std::vector<const Compilation*> all = {escape.compilation.get(), &warning, missing.compilation.get()};
    const auto doc = render(DiagFormat::Json, all);
    const auto lines = json_lines(doc);

    std::size_t n = 0;
    for (const auto* c : all) {
        REQUIRE_FALSE(c->diags.all().empty());
        for (const auto& d : c->diags.all()) {
            REQUIRE(n < lines.size());
            const auto& j = lines[n++];
            INFO(doc);
            CHECK(j.keys == std::vector<std::string>{"file", "line", "column", "end_column", "severity", "code",
                                                     "name", "message", "hints", "source_line"});
            CHECK(j.get("severity").str() == (d.severity == Severity::Error ? "error" : "warning"));
            CHECK(j.get("code").str() == diag_code(d.kind));
            CHECK(j.get("name").str() == diag_info(d.kind).name);
            CHECK(j.get("message").str() == d.message);
            REQUIRE(j.get("hints").size() == d.hints.size());
            for (std::size_t i = 0; i < d.hints.size(); ++i)
                CHECK(j.get("hints").at(i).str() == d.hints[i]);
            if (d.loc.known()) {
                CHECK(j.get("file").str() == c->sources.file(d.loc.file).name);
                CHECK(j.get("line").integer() == d.loc.line);
                CHECK(j.get("column").integer() == d.loc.column);
                CHECK(j.get("end_column").integer() == d.loc.column + d.loc.length);
                CHECK(j.get("source_line").str() == c->sources.line_text(d.loc.file, d.loc.line));
            } else {
                for (const auto* key : {"file", "line", "column", "end_column", "source_line"})
                    CHECK(j.get(key).is_null());
            }
        }
    }
    CHECK(n == lines.size());
    CHECK(escape.diags().has_errors());
    CHECK_FALSE(missing.diags().all().front().loc.known());
}

TEST_CASE("json: quotes, backslashes, control characters and bad UTF-8 are escaped", "[emit]")
{
    SECTION("through the pipeline")
    {
        const auto r = test::compile_text(kEscapePolicy);
        const auto doc = render(DiagFormat::Json, r);
        // The line starts with a tab and holds quotes and a backslash.
        CHECK(doc.find(R"("source_line":"\u0009allow \"/tmp/a\\qb\"")") != std::string::npos);
    }
    SECTION("a NUL byte and invalid UTF-8 in the source line")
    {
        const auto nul = test::compile_text("policy \"p\" {\n    default deny\n    allow /tmp\0/x\n}\n"s);
        const auto bad = test::compile_text("policy \"p\" {\n    default deny\n    allow /tmp/ab\xff\xfe\n}\n");
        const auto lines = json_lines(render(DiagFormat::Json, {nul.compilation.get(), bad.compilation.get()}));
        std::set<std::string> source_lines;
        for (const auto& j : lines) {
            if (!j.get("source_line").is_null())
                source_lines.insert(j.get("source_line").str());
        }
        CHECK(source_lines.contains("    allow /tmp\0/x"s));
        CHECK(source_lines.contains("    allow /tmp/ab" + kReplacementChar + kReplacementChar));
    }
    SECTION("every kind of byte in a message")
    {
        Compilation c;
        const auto f = c.sources.add("a.bwp", "x\n");
        // Ill-formed sequences become one U+FFFD per maximal subpart (Unicode section 3.9).
        const std::string message = "q\" b\\ nl\n tab\t bel\x01 del\x7f e\xc3\xa9 clef\xf0\x9d\x84\x9e"
                                    " lone\xff cut\xe2\x82x overlong\xc0\xaf overlong3\xe0\x80\xaf"
                                    " surrogate\xed\xa0\x80 big\xf4\x90\x80\x80 end\xf0\x9f\x98";
        report_at(c, f, 1, 1, 1, message);
        const auto doc = render(DiagFormat::Json, {&c});
        INFO(doc);
        CHECK(doc.find(R"(q\" b\\ nl\u000a tab\u0009 bel\u0001 del\u007f)") != std::string::npos);
        const auto r = kReplacementChar;
        CHECK(json_lines(doc).at(0).get("message").str() ==
              "q\" b\\ nl\n tab\t bel\x01 del\x7f e\xc3\xa9 clef\xf0\x9d\x84\x9e lone" + r + " cut" + r + "x overlong" +
                  r + r + " overlong3" + r + r + r + " surrogate" + r + r + r + " big" + r + r + r + r + " end" + r);
    }
}

TEST_CASE("text: what Diagnostics::print writes", "[emit]")
{
    const auto escape = test::compile_text(kEscapePolicy);
    Compilation warning;
    report_warning(warning);
    for (const bool color : {false, true}) {
        std::string expected;
        for (const auto* c : {escape.compilation.get(), &warning}) {
            for (const auto& d : c->diags.all())
                expected += c->diags.render(d, color);
        }
        CHECK(render(DiagFormat::Text, {escape.compilation.get(), &warning}, color) == expected);
    }
}

TEST_CASE("nothing reported: empty text and json, a complete SARIF log", "[emit]")
{
    Compilation clean;
    clean.sources.add("clean.bwp", "policy \"p\" {\n}\n");
    CHECK(render(DiagFormat::Text, {&clean}).empty());
    CHECK(render(DiagFormat::Json, {&clean}).empty());
    const auto log = JsonParser::parse(render(DiagFormat::Sarif, {&clean}));
    CHECK(log.get("runs").size() == 1);
    CHECK(log.get("runs").at(0).get("results").size() == 0);
    CHECK(log.get("runs").at(0).get("tool").get("driver").get("rules").size() == all_diag_infos().size());
}

TEST_CASE("sarif: one log, a rule per declared kind, results pointing at their rules", "[emit]")
{
    const auto escape = test::compile_text(kEscapePolicy, "my policy.bwp");
    Compilation warning;
    report_warning(warning);
    const auto missing = test::compile_file("/nonexistent-dir/missing.bwp");
    const std::vector<const Compilation*> all = {escape.compilation.get(), &warning, missing.compilation.get()};
    const auto doc = render(DiagFormat::Sarif, all);
    CHECK(doc == render(DiagFormat::Sarif, all)); // deterministic
    INFO(doc);
    const auto log = JsonParser::parse(doc);

    CHECK(log.get("$schema").str() == "https://json.schemastore.org/sarif-2.1.0.json");
    CHECK(log.get("version").str() == "2.1.0");
    REQUIRE(log.get("runs").size() == 1);
    const auto& run = log.get("runs").at(0);
    const auto& driver = run.get("tool").get("driver");
    CHECK(driver.get("name").str() == "bwc");
    CHECK(driver.get("version").str() == "9.9.9 (test)");
    CHECK(run.get("columnKind").str() == "utf16CodeUnits");

    const auto& rules = driver.get("rules");
    const auto infos = all_diag_infos();
    REQUIRE(rules.size() == infos.size());
    std::set<std::string> ids;
    for (std::size_t i = 0; i < infos.size(); ++i) {
        const auto& rule = rules.at(i);
        CHECK(rule.get("id").str() == diag_code(infos[i].kind));
        CHECK(rule.get("name").str() == infos[i].name);
        CHECK(rule.get("defaultConfiguration").get("level").str() ==
              (infos[i].severity == Severity::Error ? "error" : "warning"));
        // No fmt placeholder left (an escaped `{{` is a literal brace, and stays).
        const auto& description = rule.get("shortDescription").get("text").str();
        CHECK(std::any_of(description.begin(), description.end(), [](char ch) { return std::isalpha(ch) != 0; }));
        CHECK(description.find("{}") == std::string::npos);
        CHECK(description.find("{:") == std::string::npos);
        ids.insert(rule.get("id").str());
    }
    CHECK(ids.size() == infos.size());

    const auto& results = run.get("results");
    std::size_t n = 0;
    for (const auto* c : all) {
        for (const auto& d : c->diags.all()) {
            REQUIRE(n < results.size());
            const auto& result = results.at(n++);
            const auto index = result.get("ruleIndex").integer();
            REQUIRE(index < rules.size());
            CHECK(result.get("ruleId").str() == diag_code(d.kind));
            CHECK(rules.at(index).get("id").str() == result.get("ruleId").str());
            CHECK(result.get("level").str() == (d.severity == Severity::Error ? "error" : "warning"));
            std::string text = d.message;
            for (const auto& h : d.hints)
                text += "\nhint: " + h;
            CHECK(result.get("message").get("text").str() == text);
            if (!d.loc.known()) {
                CHECK_FALSE(result.has("locations"));
                continue;
            }
            const auto& physical = result.get("locations").at(0).get("physicalLocation");
            const auto& name = c->sources.file(d.loc.file).name;
            const auto uri = physical.get("artifactLocation").get("uri").str();
            if (name.ends_with("/my policy.bwp")) // in a temporary folder: absolute, a file: URI
                CHECK(uri == "file://" + name.substr(0, name.size() - 13) + "my%20policy.bwp");
            else
                CHECK(uri == name);
            // ASCII lines: UTF-16 columns are byte columns.
            const auto& region = physical.get("region");
            const auto line = c->sources.line_text(d.loc.file, d.loc.line);
            CHECK(region.get("startLine").integer() == d.loc.line);
            CHECK(region.get("startColumn").integer() == d.loc.column);
            CHECK(region.get("endColumn").integer() == d.loc.column + d.loc.length);
            if (d.loc.length > 0)
                CHECK(region.get("snippet").get("text").str() == c->sources.slice(d.loc));
            if (d.loc.column > 1 || d.loc.length < line.size())
                CHECK(physical.get("contextRegion").get("snippet").get("text").str() == line);
        }
    }
    CHECK(n == results.size());
}

TEST_CASE("sarif: columns count UTF-16 code units", "[emit]")
{
    Compilation c;
    // a, b: one unit each; é: 2 bytes, 1 unit; 𝄞 (U+1D11E): 4 bytes, 2 units; \xff: 1 byte, shown as U+FFFD.
    const auto f = c.sources.add("u.bwp", "ab\xc3\xa9\xf0\x9d\x84\x9e\xffx\nwhole\n");
    report_at(c, f, 1, 5, 4, "the clef");
    report_at(c, f, 1, 10, 1, "the x");
    report_at(c, f, 1, 11, 0, "the end");
    report_at(c, f, 2, 1, 5, "the whole line");
    const auto log = JsonParser::parse(render(DiagFormat::Sarif, {&c}));
    const auto& results = log.get("runs").at(0).get("results");
    REQUIRE(results.size() == 4);
    const auto region = [&](std::size_t i) -> const Json& {
        return results.at(i).get("locations").at(0).get("physicalLocation").get("region");
    };
    const auto physical = [&](std::size_t i) -> const Json& {
        return results.at(i).get("locations").at(0).get("physicalLocation");
    };
    CHECK(region(0).get("startColumn").integer() == 4);
    CHECK(region(0).get("endColumn").integer() == 6);
    CHECK(region(0).get("snippet").get("text").str() == "\xf0\x9d\x84\x9e");
    CHECK(region(1).get("startColumn").integer() == 7);
    CHECK(region(1).get("endColumn").integer() == 8);
    // Just past the end of the line: an empty region, which has no snippet.
    CHECK(region(2).get("startColumn").integer() == 8);
    CHECK(region(2).get("endColumn").integer() == 8);
    CHECK_FALSE(region(2).has("snippet"));
    CHECK(physical(2).get("contextRegion").get("endColumn").integer() == 8);
    CHECK(physical(2).get("contextRegion").get("snippet").get("text").str() ==
          "ab\xc3\xa9\xf0\x9d\x84\x9e" + kReplacementChar + "x");
    // A region that is the whole line needs no context: a context must be larger.
    CHECK(region(3).get("snippet").get("text").str() == "whole");
    CHECK_FALSE(physical(3).has("contextRegion"));
}

TEST_CASE("sarif: file names become RFC 3986 URI references", "[emit]")
{
    Compilation c;
    for (const auto* name : {"dir/my policy#1.bwp", "a:b.bwp", "caf\xc3\xa9.bwp", "/abs/x y.bwp", "x\\y.bwp"}) {
        const auto f = c.sources.add(name, "x\n");
        report_at(c, f, 1, 1, 1, "here");
    }
    const auto log = JsonParser::parse(render(DiagFormat::Sarif, {&c}));
    std::vector<std::string> uris;
    for (const auto& result : log.get("runs").at(0).get("results").items) {
        const auto& physical = result.get("locations").at(0).get("physicalLocation");
        uris.push_back(physical.get("artifactLocation").get("uri").str());
    }
    CHECK(uris == std::vector<std::string>{"dir/my%20policy%231.bwp", "a%3Ab.bwp", "caf%C3%A9.bwp",
                                           "file:///abs/x%20y.bwp", "x%5Cy.bwp"});
}

TEST_CASE("sarif: a rule's description is its message template made readable", "[emit]")
{
    const auto log = JsonParser::parse(render(DiagFormat::Sarif, std::vector<const Compilation*>{}));
    const auto& rules = log.get("runs").at(0).get("tool").get("driver").get("rules");
    std::map<std::string, std::string> described;
    for (const auto& rule : rules.items)
        described[rule.get("name").str()] = rule.get("shortDescription").get("text").str();
    CHECK(described.at("FileUnreadable") == "cannot read `...`: ...");
    // A message that is only a value is described by the kind's name.
    CHECK(described.at("SyntaxError") == "syntax error");
}
