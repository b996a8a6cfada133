// The parse stage: text in, ast::Module or located diagnostics out.
#include "parse/parse.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

using namespace bw;

namespace {

// One parse of one file, with everything a test looks at.
class Parsed {
public:
    explicit Parsed(std::string text, std::string name = "test.bwp")
        : file_(sources_.add(std::move(name), std::move(text))),
          module_(run_parse(sources_.file(file_), diags_))
    {
    }

    const std::optional<ast::Module>& module() const { return module_; }
    const ast::Policy& policy(std::size_t i = 0) const { return module_.value().policies.at(i); }
    const std::vector<Diagnostic>& diags() const { return diags_.all(); }
    const Diagnostic& only_diag() const
    {
        REQUIRE(diags_.all().size() == 1);
        return diags_.all().front();
    }
    std::string render(const Diagnostic& d) const { return diags_.render(d, false); }
    std::string_view slice(const SourceLocation& loc) const { return sources_.slice(loc); }

private:
    SourceManager sources_;
    Diagnostics diags_{sources_};
    FileId file_;
    std::optional<ast::Module> module_;
};

void check_loc(const SourceLocation& loc, std::uint32_t line, std::uint32_t column, std::uint32_t length)
{
    INFO("location " << loc.line << ":" << loc.column << " length " << loc.length);
    CHECK(loc.line == line);
    CHECK(loc.column == column);
    CHECK(loc.length == length);
}

} // namespace

TEST_CASE("the example policy parses into the AST", "[parse]")
{
    const Parsed p(R"(# comment to end of line
policy "demo" {
    default deny                  # or: default allow
    allow /usr/                   # trailing slash: the directory and everything under it
    allow /etc/ld.so.cache
    deny  "/tmp/with space/"      # quoted form
}
)");
    REQUIRE(p.module());
    CHECK(p.diags().empty());
    REQUIRE(p.module()->policies.size() == 1);
    const auto& policy = p.policy();
    CHECK(policy.name == "demo");
    check_loc(policy.loc, 2, 1, 6);
    check_loc(policy.name_loc, 2, 8, 6);
    CHECK(p.slice(policy.name_loc) == "\"demo\"");

    REQUIRE(policy.defaults.size() == 1);
    CHECK(policy.defaults[0].action == ast::Action::Deny);
    check_loc(policy.defaults[0].loc, 3, 5, 12);
    CHECK(p.slice(policy.defaults[0].loc) == "default deny");

    REQUIRE(policy.rules.size() == 3);
    const auto& usr = policy.rules[0];
    CHECK(usr.action == ast::Action::Allow);
    CHECK(usr.pattern == "/usr/");
    check_loc(usr.loc, 4, 5, 11);
    check_loc(usr.pattern_loc, 4, 11, 5);

    const auto& cache = policy.rules[1];
    CHECK(cache.action == ast::Action::Allow);
    CHECK(cache.pattern == "/etc/ld.so.cache");
    check_loc(cache.loc, 5, 5, 22);
    check_loc(cache.pattern_loc, 5, 11, 16);

    const auto& tmp = policy.rules[2];
    CHECK(tmp.action == ast::Action::Deny);
    CHECK(tmp.pattern == "/tmp/with space/");
    check_loc(tmp.loc, 6, 5, 24);
    check_loc(tmp.pattern_loc, 6, 11, 18);
    CHECK(p.slice(tmp.loc) == "deny  \"/tmp/with space/\"");
    CHECK(p.slice(tmp.pattern_loc) == "\"/tmp/with space/\"");
}

TEST_CASE("actions print as their keywords", "[parse]")
{
    CHECK(ast::to_string(ast::Action::Allow) == "allow");
    CHECK(ast::to_string(ast::Action::Deny) == "deny");
}

TEST_CASE("statements need only whitespace between them", "[parse]")
{
    const Parsed p(R"(policy "x" { default allow deny /a allow "/b" })");
    REQUIRE(p.module());
    CHECK(p.policy().defaults.at(0).action == ast::Action::Allow);
    REQUIRE(p.policy().rules.size() == 2);
    CHECK(p.policy().rules[0].action == ast::Action::Deny);
    CHECK(p.policy().rules[1].pattern == "/b");
    check_loc(p.policy().rules[1].loc, 1, 36, 10);
}

TEST_CASE("quoted strings resolve their escapes", "[parse]")
{
    const Parsed p(R"(policy "a \"b\" \\ c" {
    default deny
    allow "/q\"uote/back\\slash/tab\there/nl\n"
    deny "relative/is/kept/as/is"
    allow "/has # and } inside"
})");
    REQUIRE(p.module());
    CHECK(p.policy().name == "a \"b\" \\ c");
    check_loc(p.policy().name_loc, 1, 8, 14);
    const auto& rules = p.policy().rules;
    REQUIRE(rules.size() == 3);
    CHECK(rules[0].pattern == "/q\"uote/back\\slash/tab\there/nl\n");
    check_loc(rules[0].pattern_loc, 3, 11, 37);
    CHECK(rules[1].pattern == "relative/is/kept/as/is");
    CHECK(rules[2].pattern == "/has # and } inside");
}

TEST_CASE("globs need no quoting, and a `}` glued to a path belongs to it", "[parse]")
{
    const Parsed ok("policy \"x\" { default deny allow /x/{a,b}/[a-z]*?.so }");
    REQUIRE(ok.module());
    CHECK(ok.policy().rules.at(0).pattern == "/x/{a,b}/[a-z]*?.so");

    const Parsed glued("policy \"x\" {\n  default deny\n  allow /usr/}\n");
    CHECK_FALSE(glued.module());
    const auto& d = glued.only_diag();
    CHECK(d.kind == DiagKind::SyntaxError);
    CHECK(d.message == "expected `}` to close the policy opened on line 1, found end of file");
    check_loc(d.loc, 3, 15, 1); // just past the last token
    REQUIRE(d.hints.size() == 1);
    CHECK(d.hints[0].find("put a space before the `}`") != std::string::npos);
}

TEST_CASE("comments run to the end of the line", "[parse]")
{
    const Parsed p("#!/usr/bin/env bwc\n"
                   "policy \"x\" { # opening\n"
                   "  # default allow\n"
                   "  default deny#glued\n"
                   "  allow /a#b\n"
                   "  allow \"/c#d\"\n"
                   "} # end");
    REQUIRE(p.module());
    CHECK(p.policy().defaults.size() == 1);
    REQUIRE(p.policy().rules.size() == 2);
    CHECK(p.policy().rules[0].pattern == "/a");
    CHECK(p.policy().rules[1].pattern == "/c#d");
}

TEST_CASE("CRLF line endings give the same AST and locations as LF", "[parse]")
{
    const Parsed p("policy \"x\" {\r\n  default allow\r\n  deny /tmp/\r\n}\r\n");
    REQUIRE(p.module());
    check_loc(p.policy().defaults.at(0).loc, 2, 3, 13);
    const auto& rule = p.policy().rules.at(0);
    CHECK(rule.pattern == "/tmp/");
    check_loc(rule.loc, 3, 3, 10);
    check_loc(rule.pattern_loc, 3, 8, 5);

    const Parsed bad("policy \"x\" {\r\n  default deny\r\n  allow tmp\r\n}\r\n");
    check_loc(bad.only_diag().loc, 3, 9, 3);
    CHECK(bad.render(bad.only_diag()).find("\r") == std::string::npos);
}

TEST_CASE("columns and lengths count bytes", "[parse]")
{
    const Parsed p("policy \"été\" { default deny allow /é/日本 }");
    REQUIRE(p.module());
    CHECK(p.policy().name == "été");
    check_loc(p.policy().name_loc, 1, 8, 7);
    check_loc(p.policy().defaults.at(0).loc, 1, 18, 12);
    const auto& rule = p.policy().rules.at(0);
    CHECK(rule.pattern == "/é/日本");
    check_loc(rule.pattern_loc, 1, 37, 10);
    CHECK(p.slice(rule.pattern_loc) == "/é/日本");
}

TEST_CASE("a UTF-8 byte order mark is skipped but still counted", "[parse]")
{
    const Parsed p("\xef\xbb\xbfpolicy \"x\" { default deny }");
    REQUIRE(p.module());
    check_loc(p.policy().loc, 1, 4, 6);
    check_loc(p.policy().defaults.at(0).loc, 1, 17, 12);

    // Only the first one is a byte order mark; a second is text.
    const Parsed twice("\xef\xbb\xbf\xef\xbb\xbfpolicy \"x\" { default deny }");
    check_loc(twice.only_diag().loc, 1, 4, 9);
}

TEST_CASE("a statement split over lines is located on its first line", "[parse]")
{
    const Parsed p("policy\n\"x\"\n{\ndefault\ndeny\nallow\n  /x\n}\n");
    REQUIRE(p.module());
    check_loc(p.policy().name_loc, 2, 1, 3);
    check_loc(p.policy().defaults.at(0).loc, 4, 1, 7);
    check_loc(p.policy().rules.at(0).loc, 6, 1, 5);
    check_loc(p.policy().rules.at(0).pattern_loc, 7, 3, 2);
}

TEST_CASE("every policy block of a file is returned, in order", "[parse]")
{
    const Parsed p("policy \"one\" { default deny }\n"
                   "policy \"two\" { default allow deny /x }\n"
                   "policy \"three\" { }\n");
    REQUIRE(p.module());
    REQUIRE(p.module()->policies.size() == 3);
    CHECK(p.policy(0).name == "one");
    CHECK(p.policy(1).name == "two");
    CHECK(p.policy(1).rules.size() == 1);
    CHECK(p.policy(2).name == "three");
    CHECK(p.policy(2).defaults.empty());
    check_loc(p.policy(2).loc, 3, 1, 6);
}

TEST_CASE("an empty file is a module without policies", "[parse]")
{
    for (const auto* text : {"", "\n\n", "   # only a comment\n", "\r\n"}) {
        const Parsed p(text);
        REQUIRE(p.module());
        CHECK(p.module()->policies.empty());
        CHECK(p.diags().empty());
    }
}

TEST_CASE("locations name the file they come from", "[parse]")
{
    SourceManager sources;
    sources.add("first.bwp", "");
    const auto second = sources.add("second.bwp", "policy \"x\" { default deny allow x }");
    Diagnostics diags(sources);
    CHECK_FALSE(run_parse(sources.file(second), diags));
    REQUIRE(diags.all().size() == 1);
    CHECK(diags.all()[0].loc.file == second);
    CHECK(diags.render(diags.all()[0], false).starts_with("second.bwp:1:33: error:"));

    const auto third = sources.add("third.bwp", "policy \"x\" { default deny }");
    const auto module = run_parse(sources.file(third), diags);
    REQUIRE(module);
    CHECK(module->file == third);
    CHECK(module->policies.at(0).loc.file == third);
}

namespace {

struct SyntaxCase {
    const char* what;
    const char* text;
    std::uint32_t line;
    std::uint32_t column;
    std::uint32_t length;
    const char* message;
    const char* hint; // nullptr: no hint
};

// One clear error each, never a cascade.
const SyntaxCase kSyntaxCases[] = {
    {"`default` without an action", "policy \"x\" {\n  default\n}\n", 3, 1, 1,
     "expected `allow` or `deny` after `default`, found `}`", "write `default allow` or `default deny`"},
    {"`default` with a wrong action", "policy \"x\" {\n  default block\n}\n", 2, 11, 5,
     "expected `allow` or `deny` after `default`, found `block`", "write `default allow` or `default deny`"},
    {"`default` takes the action of the next line",
     "policy \"x\" {\n  default\n  allow /usr/\n}\n", 3, 9, 5,
     "expected `default`, `allow`, `deny` or `}`, found `/usr/`",
     "`default` on line 2 took `allow` as its action: write `default allow` or `default deny`"},
    {"missing `{`", "policy \"demo\"\n  allow /usr/\n}\n", 2, 3, 5,
     "expected `{` after the policy name, found `allow`", nullptr},
    {"unquoted policy name", "policy demo {\n  default deny\n}\n", 1, 8, 4,
     "expected a quoted policy name after `policy`, found `demo`", "quote the name: `policy \"demo\"`"},
    {"missing policy name", "policy {\n  default deny\n}\n", 1, 8, 1,
     "expected a quoted policy name after `policy`, found `{`", nullptr},
    {"relative path", "policy \"x\" {\n  default deny\n  allow usr/lib\n}\n", 3, 9, 7,
     "expected a path after `allow`, found `usr/lib`",
     "an unquoted path starts with `/`: did you mean `/usr/lib`?"},
    {"home-relative path", "policy \"x\" {\n  deny ~/.ssh/\n}\n", 2, 8, 7,
     "expected a path after `deny`, found `~/.ssh/`", "`~` is not expanded; write the absolute path"},
    {"action without a path", "policy \"x\" {\n  allow\n  deny /x\n}\n", 3, 3, 4,
     "expected a path after `allow`, found `deny`", nullptr},
    {"action and path glued", "policy \"x\" {\n  allow/usr\n}\n", 2, 3, 9,
     "expected `default`, `allow`, `deny` or `}`, found `allow/usr`",
     "put a space between the action and the path"},
    {"two paths in one rule", "policy \"x\" {\n  allow /a /b\n}\n", 2, 12, 2,
     "expected `default`, `allow`, `deny` or `}`, found `/b`",
     "a rule is `allow PATH` or `deny PATH`, with one path per rule"},
    {"semicolon", "policy \"x\" {\n  default deny;\n  allow /a\n}\n", 2, 11, 5,
     "expected `allow` or `deny` after `default`, found `deny;`", "statements need no `;`: remove it"},
    {"path without an action", "policy \"x\" {\n  default deny\n  /usr/bin/\n}\n", 3, 3, 9,
     "expected `default`, `allow`, `deny` or `}`, found `/usr/bin/`", "start the rule with `allow` or `deny`"},
    {"misspelt keyword", "policy \"x\" {\n  alow /a\n}\n", 2, 3, 4,
     "expected `default`, `allow`, `deny` or `}`, found `alow`", nullptr},
    {"rule outside a policy", "allow /usr/\n", 1, 1, 5, "expected `policy` or end of file, found `allow`",
     "a file holds `policy \"name\" { ... }` blocks"},
    {"stray `}`", "policy \"x\" {\n  default deny\n}\n}\n", 4, 1, 1,
     "expected `policy` or end of file, found `}`", "this `}` has no matching `{`"},
    {"unclosed policy at end of file", "policy \"x\" {\n  default deny\n  allow /usr/\n\n# end\n", 3, 14, 1,
     "expected `}` to close the policy opened on line 1, found end of file", nullptr},
    {"unclosed policy before the next one", "policy \"a\" {\n  default deny\npolicy \"b\" {\n}\n", 3, 1, 6,
     "expected `}` to close the policy opened on line 1, found `policy`", nullptr},
    {"unterminated path", "policy \"x\" {\n  allow \"/tmp/x\n  deny /y\n}\n", 2, 9, 7, "unterminated string",
     "close it with `\"` on the same line; strings cannot span lines"},
    {"unterminated name", "policy \"x {\n  default deny\n}\n", 1, 8, 4, "unterminated string",
     "close it with `\"` on the same line; strings cannot span lines"},
    {"string ending in a backslash", "policy \"x\" {\n  allow \"/a\\\n}\n", 2, 9, 4, "unterminated string",
     "close it with `\"` on the same line; strings cannot span lines"},
    {"unterminated string at end of file", "policy \"x\" { allow \"/a", 1, 20, 3, "unterminated string",
     "close it with `\"` on the same line; strings cannot span lines"},
};

} // namespace

TEST_CASE("each syntax error is one located SyntaxError", "[parse][errors]")
{
    for (const auto& c : kSyntaxCases) {
        DYNAMIC_SECTION(c.what)
        {
            const Parsed p(c.text);
            CHECK_FALSE(p.module());
            const auto& d = p.only_diag();
            CHECK(d.kind == DiagKind::SyntaxError);
            CHECK(d.severity == Severity::Error);
            CHECK(d.message == c.message);
            check_loc(d.loc, c.line, c.column, c.length);
            if (c.hint) {
                REQUIRE(d.hints.size() == 1);
                CHECK(d.hints[0] == c.hint);
            } else {
                CHECK(d.hints.empty());
            }
        }
    }
}

TEST_CASE("10,000 nested braces end in one error", "[parse][errors][robustness]")
{
    const std::string braces(10'000, '{');
    const Parsed top(braces + "\n" + braces);
    CHECK(top.only_diag().message == "expected `policy` or end of file, found `{`");
    check_loc(top.only_diag().loc, 1, 1, 1);

    const Parsed inside("policy \"x\" {" + braces + std::string(10'000, '}'));
    CHECK(inside.only_diag().message == "expected `default`, `allow`, `deny` or `}`, found `{`");
    check_loc(inside.only_diag().loc, 1, 13, 1);

    std::string policies;
    for (int i = 0; i < 10'000; ++i)
        policies += "policy \"x\" {";
    const Parsed nested(policies);
    CHECK_FALSE(nested.module());
    CHECK(nested.diags().size() == 20);
}

TEST_CASE("a syntax error renders with its source line and underline", "[parse][errors]")
{
    const Parsed p("policy \"demo\" {\n    default deny\n    allow usr/lib\n}\n", "demo.bwp");
    CHECK(p.render(p.only_diag()) ==
          "demo.bwp:3:11: error: expected a path after `allow`, found `usr/lib` [BW1002]\n"
          "    3 |     allow usr/lib\n"
          "      |           ^^^^^^^\n"
          "      = hint: an unquoted path starts with `/`: did you mean `/usr/lib`?\n");
}

TEST_CASE("independent syntax errors are all reported, in source order", "[parse][errors]")
{
    const Parsed p("policy \"x\" {\n"
                   "  default deny;\n"
                   "  allow /a /b\n"
                   "  deny \"/tmp\n"
                   "  allow /ok\n"
                   "}\n"
                   "}\n");
    CHECK_FALSE(p.module());
    REQUIRE(p.diags().size() == 4);
    check_loc(p.diags()[0].loc, 2, 11, 5);
    check_loc(p.diags()[1].loc, 3, 12, 2);
    check_loc(p.diags()[2].loc, 4, 8, 5);
    CHECK(p.diags()[2].message == "unterminated string");
    check_loc(p.diags()[3].loc, 7, 1, 1);
}

TEST_CASE("syntax errors stop at 20", "[parse][errors]")
{
    std::string text = "policy \"x\" {\n";
    for (int i = 0; i < 100; ++i)
        text += "  allow relative\n";
    text += "}\n";
    const Parsed p(text);
    CHECK_FALSE(p.module());
    REQUIRE(p.diags().size() == 20);
    check_loc(p.diags().back().loc, 21, 9, 8);
    CHECK(p.diags().back().hints.back() == "stopped after 20 syntax errors");
}

TEST_CASE("unknown escapes are reported at the backslash", "[parse][errors]")
{
    const Parsed p(R"(policy "x\y" { default deny allow "/a\qb\éc" deny "\n" })");
    CHECK_FALSE(p.module());
    REQUIRE(p.diags().size() == 3);
    for (const auto& d : p.diags())
        CHECK(d.kind == DiagKind::BadStringEscape);
    CHECK(p.diags()[0].message == "unknown escape `\\y` in string");
    check_loc(p.diags()[0].loc, 1, 10, 2);
    CHECK(p.diags()[1].message == "unknown escape `\\q` in string");
    check_loc(p.diags()[1].loc, 1, 38, 2);
    CHECK(p.slice(p.diags()[1].loc) == "\\q");
    // A multi-byte character is named and underlined whole.
    CHECK(p.diags()[2].message == "unknown escape `\\é` in string");
    check_loc(p.diags()[2].loc, 1, 41, 3);
}

TEST_CASE("a NUL byte is located and stops parsing", "[parse][encoding]")
{
    using namespace std::string_literals;
    const Parsed p("policy \"x\" {\n  allow /a\0b\n  allow nonsense\n}\n"s);
    CHECK_FALSE(p.module());
    const auto& d = p.only_diag();
    CHECK(d.kind == DiagKind::InvalidEncoding);
    CHECK(d.message == "file contains a NUL byte");
    check_loc(d.loc, 2, 11, 1);

    const Parsed first("\0"s);
    check_loc(first.only_diag().loc, 1, 1, 1);
}

TEST_CASE("invalid UTF-8 is located at its first byte and stops parsing", "[parse][encoding]")
{
    struct Bad {
        std::string text;
        std::uint32_t line;
        std::uint32_t column;
        const char* message;
    };
    const Bad cases[] = {
        {"policy \"x\" {\n  allow /\xff\n}\n", 2, 10, "invalid UTF-8 (byte 0xff)"},
        {"policy \"é\" {\n  allow /日本/\x80\n}\n", 2, 17, "invalid UTF-8 (byte 0x80)"},
        {"# overlong slash \xc0\xaf\n", 1, 18, "invalid UTF-8 (byte 0xc0)"},
        {"# overlong \xe0\x80\xaf\n", 1, 12, "invalid UTF-8 (byte 0xe0)"},
        {"# surrogate \xed\xa0\x80\n", 1, 13, "invalid UTF-8 (byte 0xed)"},
        {"# above U+10FFFF \xf4\x90\x80\x80\n", 1, 18, "invalid UTF-8 (byte 0xf4)"},
        {"# cut short \xe6\x97\n", 1, 13, "invalid UTF-8 (byte 0xe6)"},
        {"# cut short at the end \xf0\x9f\x98", 1, 24, "invalid UTF-8 (byte 0xf0)"},
    };
    for (const auto& c : cases) {
        INFO(c.message << " at " << c.line << ":" << c.column);
        const Parsed p(c.text);
        CHECK_FALSE(p.module());
        const auto& d = p.only_diag();
        CHECK(d.kind == DiagKind::InvalidEncoding);
        CHECK(d.message == c.message);
        check_loc(d.loc, c.line, c.column, 1);
        CHECK(d.hints == std::vector<std::string>{"policy files are UTF-8"});
    }

    const Parsed emoji("policy \"\xf0\x9f\x90\x9d\" { default deny }");
    REQUIRE(emoji.module());
    CHECK(emoji.policy().name == "\xf0\x9f\x90\x9d");
}

TEST_CASE("10 MB of garbage ends in a few errors, not an exception", "[parse][robustness]")
{
    std::mt19937 rng(42);
    const std::string alphabet = "policydefaultallowdeny /{}\"#\\\n\t;*?[],.-_\r";
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::string text(10'000'000, ' ');
    for (auto& c : text)
        c = alphabet[pick(rng)];
    const Parsed p(std::move(text));
    CHECK_FALSE(p.module());
    CHECK_FALSE(p.diags().empty());
    CHECK(p.diags().size() <= 20);
    for (const auto& d : p.diags())
        CHECK(d.kind == DiagKind::SyntaxError);
}

TEST_CASE("one 10 MB token is quoted short", "[parse][robustness]")
{
    const Parsed p(std::string(10'000'000, 'x'));
    const auto& d = p.only_diag();
    CHECK(d.message == "expected `policy` or end of file, found `" + std::string(40, 'x') + "...`");
    check_loc(d.loc, 1, 1, 10'000'000);
}

TEST_CASE("a very long line parses with exact columns", "[parse][robustness]")
{
    std::string text = "policy \"x\" { default deny";
    for (int i = 0; i < 50'000; ++i)
        text += " allow /p" + std::to_string(i) + "/é";
    const auto last_column = static_cast<std::uint32_t>(text.size() - std::string("/p49999/é").size() + 1);
    text += " }";
    const Parsed p(std::move(text));
    REQUIRE(p.module());
    REQUIRE(p.policy().rules.size() == 50'000);
    CHECK(p.policy().rules.back().pattern == "/p49999/é");
    check_loc(p.policy().rules.back().pattern_loc, 1, last_column, 10);
}

namespace {

// The header format of tests/policies (see test_policy_files.cc): `# expect: error BW1002 5:11`.
std::multiset<std::string> expectations(const std::string& text)
{
    std::multiset<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("# expect: "))
            out.insert(line.substr(10));
    }
    return out;
}

} // namespace

// The whole pipeline runs these too; here they check that the parse stage alone finds the errors.
TEST_CASE("the syntax test files fail as their header says", "[parse][files]")
{
    const auto dir = std::filesystem::path(BW_TEST_POLICIES_DIR) / "syntax";
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".bwp")
            continue;
        ++files;
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream buffer;
        buffer << in.rdbuf();
        const auto expected = expectations(buffer.str());
        const Parsed p(buffer.str(), entry.path().filename().string());
        std::multiset<std::string> actual;
        std::string rendered;
        for (const auto& d : p.diags()) {
            actual.insert(fmt::format("error {} {}:{}", diag_code(d.kind), d.loc.line, d.loc.column));
            rendered += p.render(d);
        }
        INFO(entry.path().filename().string() << "\n" << rendered);
        CHECK_FALSE(expected.empty());
        CHECK(actual == expected);
        CHECK_FALSE(p.module());
    }
    CHECK(files >= 5);
}
