// `bwc fmt`: the canonical layout of .bwp files. Every formatted text is also checked for
// what must hold of any output: it formats to itself, keeps the code tokens and the comments.
#include "format/format.h"
#include "parse/parse.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

using namespace bw;
namespace fs = std::filesystem;

namespace {

// One run_format of one text, with its diagnostics.
class Formatted {
public:
    explicit Formatted(std::string text, std::string name = "test.bwp")
        : file_(sources_.add(std::move(name), std::move(text))), result_(run_format(sources_.file(file_), diags_))
    {
    }

    const std::optional<std::string>& result() const { return result_; }
    const std::vector<Diagnostic>& diags() const { return diags_.all(); }

private:
    SourceManager sources_;
    Diagnostics diags_{sources_};
    FileId file_;
    std::optional<std::string> result_;
};

std::string format(const std::string& text)
{
    const Formatted f(text);
    INFO(text);
    REQUIRE(f.result());
    return *f.result();
}

struct Lexed {
    std::vector<std::string> code;          // without the optional comma that ends a set
    std::multiset<std::string> comments;    // without trailing whitespace
};

Lexed lex(const std::string& text)
{
    SourceManager sources;
    Diagnostics diags(sources);
    const auto tokens = run_lex(sources.file(sources.add("test.bwp", text)), diags);
    REQUIRE(tokens);
    Lexed out;
    for (const auto& t : *tokens) {
        if (t.kind == LexToken::Kind::Comment)
            out.comments.emplace(t.text.substr(0, t.text.find_last_not_of(" \t\f\v") + 1));
        else
            out.code.emplace_back(t.text);
    }
    for (std::size_t i = 0; i + 1 < out.code.size(); ++i) {
        if (out.code[i] == "," && out.code[i + 1] == "}")
            out.code.erase(out.code.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return out;
}

// What holds for every output: canonical layout, no meaning changed, a fixed point.
void check_canonical(const std::string& before, const std::string& after)
{
    INFO("before:\n" << before << "\nafter:\n" << after);
    CHECK(format(after) == after);
    const auto lexed_before = lex(before);
    const auto lexed_after = lex(after);
    CHECK(lexed_after.code == lexed_before.code);
    CHECK(lexed_after.comments == lexed_before.comments);

    CHECK(after.find('\r') == std::string::npos);
    CHECK(after.find("\n\n\n") == std::string::npos);
    CHECK(after.find(" \n") == std::string::npos);
    CHECK(after.find("\t\n") == std::string::npos);
    if (!after.empty()) {
        CHECK(after.front() != '\n');
        CHECK(after.ends_with('\n'));
        CHECK(!after.ends_with("\n\n"));
    }
}

void expect_format(const std::string& before, const std::string& after)
{
    INFO("input:\n" << before);
    CHECK(format(before) == after);
    check_canonical(before, after);
}

// The statements of every kind, laid out canonically.
const std::string kCanonical = R"(# A policy that uses every statement.
policy "everything" {
    description "all statements"  # metadata
    version "1.2"
    requires kernel 6.1
    requires feature lsm
    include "base.bwp"
    let home = "/home/user"
    let data = ${HOME}/data

    # sets
    set libs = paths { /usr/lib , /lib64 , "/opt/with space", @system, $more }
    set calls = syscalls { read, write, openat }
    set none = paths {}
    set long = paths {
        /usr/share/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ,
        /usr/share/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb ,

        # the last one
        "/usr/share/cccccccccccccccccccccccccccccccc",  # quoted
    }

    default deny
    net default deny
    syscalls default allow action errno(EPERM)
    allow read, exec /usr/
    deny write owner ${HOME}/.ssh/** flags nofollow, noatime
    audit all $libs
    syscalls deny ptrace, bpf, @mount action kill
    net allow tcp connect 443, 80
    net allow family inet, inet6
    net deny all
    device allow read, write char 1:3 ioctl any
    device deny ioctl "/dev/kvm" ioctl KVM_RUN, 0x1234

    when exe /usr/bin/git and uid 1000 {
        allow read, write "/home/user/src/{a,b}"
        when gid 100 {
            # nested
            deny delete /home/user/src/.git/**
        }
    }
    allow read  # a comment inside a statement
        /etc/hosts
}

policy "second" {
    default allow
}
)";

std::vector<std::string> repository_policies()
{
    std::vector<std::string> out;
    const auto options = fs::directory_options::skip_permission_denied;
    for (auto it = fs::recursive_directory_iterator(BW_SOURCE_DIR, options); it != fs::recursive_directory_iterator();
         ++it) {
        const auto name = it->path().filename().string();
        // Build trees and .git hold copies or nothing of interest.
        if (it->is_directory() && (name.starts_with('.') || name.starts_with("build")))
            it.disable_recursion_pending();
        else if (it->is_regular_file() && it->path().extension() == ".bwp")
            out.push_back(it->path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

TEST_CASE("run_lex returns every token with its kind, position and statement starts", "[format][lex]")
{
    SourceManager sources;
    Diagnostics diags(sources);
    const auto tokens = run_lex(sources.file(sources.add("t.bwp", "# c\npolicy \"p\" {\n  syscalls allow read, "
                                                                   "$s\n}\n")),
                                diags);
    REQUIRE(tokens);
    using K = LexToken::Kind;
    const std::vector<std::tuple<K, std::string_view, std::uint32_t, std::uint32_t, bool>> expected{
        {K::Comment, "# c", 1, 1, false},     {K::Keyword, "policy", 2, 1, true},
        {K::String, "\"p\"", 2, 8, false},    {K::Punct, "{", 2, 12, false},
        {K::Keyword, "syscalls", 3, 3, true}, {K::Keyword, "allow", 3, 12, false},
        {K::Keyword, "read", 3, 18, false},   {K::Punct, ",", 3, 22, false},
        {K::SetRef, "$s", 3, 24, false},      {K::Punct, "}", 4, 1, false},
    };
    REQUIRE(tokens->size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto& t = (*tokens)[i];
        INFO("token " << i << ": " << t.text);
        CHECK(std::tuple(t.kind, t.text, t.line, t.column, t.starts_statement) == expected[i]);
    }
}

TEST_CASE("blocks are indented 4 spaces a level and close on their own line", "[format]")
{
    expect_format("policy \"p\" { default deny\nwhen uid 0 { allow all /root/ } }",
                  "policy \"p\" {\n"
                  "    default deny\n"
                  "    when uid 0 {\n"
                  "        allow all /root/\n"
                  "    }\n"
                  "}\n");
    expect_format("policy \"p\"\n{\n\t\tdefault deny\n}", "policy \"p\" {\n    default deny\n}\n");
}

TEST_CASE("tokens are separated by one space, commas by none before and one after", "[format]")
{
    expect_format("policy \"p\" {\n  default   deny\n  allow read ,write,exec\t/a\n"
                  "  net allow tcp connect 443 ,80\n}\n",
                  "policy \"p\" {\n    default deny\n    allow read, write, exec /a\n"
                  "    net allow tcp connect 443, 80\n}\n");
}

TEST_CASE("a path keeps the space before a comma, which would otherwise be part of it", "[format]")
{
    expect_format("policy \"p\" {\n  set s = paths {/a ,\"/b\" , /c }\n}\n",
                  "policy \"p\" {\n    set s = paths { /a , \"/b\", /c }\n}\n");
}

TEST_CASE("`unsafe` keeps its names, one space after each comma", "[format]")
{
    expect_format("policy \"p\" {\n  unsafe   ptrace ,signal\n    ,mount\n  default deny\n}\n",
                  "policy \"p\" {\n    unsafe ptrace, signal, mount\n    default deny\n}\n");
}

TEST_CASE("errno takes its argument with no spaces", "[format]")
{
    expect_format("policy \"p\" {\n  syscalls deny ptrace action errno ( EPERM )\n}\n",
                  "policy \"p\" {\n    syscalls deny ptrace action errno(EPERM)\n}\n");
}

TEST_CASE("a statement over several lines is joined onto one", "[format]")
{
    expect_format("policy \"p\" {\n  allow\n    read,\n    write\n\n    /a\n  default\n deny\n}\n",
                  "policy \"p\" {\n    allow read, write /a\n    default deny\n}\n");
    expect_format("policy \"p\" {\n  when exe /usr/bin/git\n    and uid 1000\n  {\n  allow read /a\n  }\n}\n",
                  "policy \"p\" {\n    when exe /usr/bin/git and uid 1000 {\n        allow read /a\n    }\n}\n");
}

TEST_CASE("a set that fits stays on one line, without its trailing comma", "[format]")
{
    expect_format("policy \"p\" {\n  set s = syscalls {\n    read,\n    write,\n  }\n  set e = paths {  }\n}\n",
                  "policy \"p\" {\n    set s = syscalls { read, write }\n    set e = paths {}\n}\n");
}

TEST_CASE("a set longer than 100 columns gets one item a line, each with a comma", "[format]")
{
    // 18 items `aa`..`rr`, then `last`.
    const auto set_line = [](std::string_view last) {
        std::string line = "    set s = syscalls {";
        for (char c = 'a'; c < 'a' + 18; ++c)
            line += fmt::format(" {}{},", c, c);
        return fmt::format("{} {} }}", line, last);
    };
    const auto policy = [](const std::string& body) { return fmt::format("policy \"p\" {{\n{}\n}}\n", body); };
    REQUIRE(set_line("zzz").size() == 100);
    expect_format(policy(set_line("zzz")), policy(set_line("zzz")));

    REQUIRE(set_line("zzzz").size() == 101);
    std::string split = "    set s = syscalls {\n";
    for (char c = 'a'; c < 'a' + 18; ++c)
        split += fmt::format("        {}{},\n", c, c);
    split += "        zzzz,\n    }";
    expect_format(policy(set_line("zzzz")), policy(split));
}

TEST_CASE("a comment inside a set's braces splits it", "[format]")
{
    expect_format("policy \"p\" {\n  set s = paths { # why\n /a , # first\n\n\n # own line\n \"/b\" }  # after\n}\n",
                  "policy \"p\" {\n"
                  "    set s = paths {  # why\n"
                  "        /a ,  # first\n"
                  "\n"
                  "        # own line\n"
                  "        \"/b\",\n"
                  "    }  # after\n"
                  "}\n");
}

TEST_CASE("a comment on its own line is re-indented to the depth of its place", "[format]")
{
    expect_format("# top\n  policy \"p\" {\n# one\n  default deny\n        # two\n  when uid 0 {\n"
                  "# three\n  allow read /a\n  # four\n  }\n}\n       # five\n",
                  "# top\n"
                  "policy \"p\" {\n"
                  "    # one\n"
                  "    default deny\n"
                  "    # two\n"
                  "    when uid 0 {\n"
                  "        # three\n"
                  "        allow read /a\n"
                  "        # four\n"
                  "    }\n"
                  "}\n"
                  "\n"
                  "# five\n");
}

TEST_CASE("a comment after code stays on its line, two spaces after it", "[format]")
{
    expect_format("policy \"p\" {# open\n  default deny# tight   \n  allow read /a        #\tfar\t \n}#close\n",
                  "policy \"p\" {  # open\n"
                  "    default deny  # tight\n"
                  "    allow read /a  #\tfar\n"
                  "}  #close\n");
}

TEST_CASE("a comment inside a statement ends its line; the statement goes on one level deeper", "[format]")
{
    expect_format("policy \"p\" {\n  allow read, # why read\n  write\n  # why this path\n  /a\n  default deny\n}\n",
                  "policy \"p\" {\n"
                  "    allow read,  # why read\n"
                  "        write\n"
                  "        # why this path\n"
                  "        /a\n"
                  "    default deny\n"
                  "}\n");
}

TEST_CASE("runs of blank lines become one, and none at the start or next to braces", "[format]")
{
    expect_format("\n\n\npolicy \"p\" {\n\n\n  default deny\n\n\n\n  allow read /a\n  when uid 0 {\n\n"
                  "    allow read /b\n\n  }\n\n}\n\n\n",
                  "policy \"p\" {\n"
                  "    default deny\n"
                  "\n"
                  "    allow read /a\n"
                  "    when uid 0 {\n"
                  "        allow read /b\n"
                  "    }\n"
                  "}\n");
}

TEST_CASE("CRLF becomes LF, and the file ends with exactly one newline", "[format]")
{
    expect_format("policy \"p\" {\r\n  default deny  # c  \r\n\r\n\r\n  allow read /a\r\n}", 
                  "policy \"p\" {\n    default deny  # c\n\n    allow read /a\n}\n");
    expect_format("", "");
    expect_format("  # only a comment  \n\n\n", "# only a comment\n");
}

TEST_CASE("top-level policies are separated by one blank line", "[format]")
{
    expect_format("policy \"a\" { default deny }\npolicy \"b\" { default allow }\n\n\n\npolicy \"c\" { default deny }",
                  "policy \"a\" {\n    default deny\n}\n\n"
                  "policy \"b\" {\n    default allow\n}\n\n"
                  "policy \"c\" {\n    default deny\n}\n");
}

TEST_CASE("strings and paths are kept byte for byte", "[format]")
{
    expect_format("policy \"n\\\"\\\\\" {\n allow read \"/caf\xc3\xa9 \\t\\n\"\n allow read /a/{b,c}/**/[a-z]?\n"
                  " let x = ${HOME}/\xe2\x9c\x93\n}\n",
                  "policy \"n\\\"\\\\\" {\n    allow read \"/caf\xc3\xa9 \\t\\n\"\n    allow read /a/{b,c}/**/[a-z]?\n"
                  "    let x = ${HOME}/\xe2\x9c\x93\n}\n");
}

TEST_CASE("a byte order mark is dropped", "[format]")
{
    expect_format("\xef\xbb\xbfpolicy \"p\" { default deny }", "policy \"p\" {\n    default deny\n}\n");
}

TEST_CASE("the canonical sample is a fixed point, and any re-spacing of it formats back to it", "[format]")
{
    check_canonical(kCanonical, kCanonical);

    // Replace the whitespace between tokens at random, except where it carries meaning: around
    // comments (own line or trailing) and blank lines.
    SourceManager sources;
    Diagnostics diags(sources);
    const auto& file = sources.file(sources.add("sample.bwp", kCanonical));
    const auto tokens = run_lex(file, diags);
    REQUIRE(tokens);
    std::vector<std::size_t> line_starts{0};
    for (std::size_t i = 0; i < kCanonical.size(); ++i) {
        if (kCanonical[i] == '\n')
            line_starts.push_back(i + 1);
    }
    const auto offset = [&](const LexToken& t) { return line_starts[t.line - 1] + t.column - 1; };
    const std::vector<std::string> gaps{" ", "  ", "\t", "\n", "\r\n", " \n        ", "\n\t"};
    std::mt19937 random(12345);
    for (int round = 0; round < 50; ++round) {
        std::string respaced;
        std::size_t end = 0;
        const LexToken* before = nullptr;
        for (const auto& t : *tokens) {
            const auto gap = kCanonical.substr(end, offset(t) - end);
            const bool keep = before == nullptr || before->kind == LexToken::Kind::Comment ||
                              t.kind == LexToken::Kind::Comment || std::count(gap.begin(), gap.end(), '\n') > 1;
            respaced += keep ? gap : gaps[random() % gaps.size()];
            respaced += t.text;
            end = offset(t) + t.text.size();
            before = &t;
        }
        INFO("respaced:\n" << respaced);
        CHECK(format(respaced) == kCanonical);
    }
}

TEST_CASE("comments and blank lines put anywhere give a fixed point that keeps them all", "[format]")
{
    SourceManager sources;
    Diagnostics diags(sources);
    const auto tokens = run_lex(sources.file(sources.add("sample.bwp", kCanonical)), diags);
    REQUIRE(tokens);
    // After a comment, only gaps that end its line.
    const std::vector<std::string> gaps{"\n", "\n\n\n", "\n# own {}\n", "  # trailing {}   \n\n",
                                        "\n\n  # own {}\n\n", " ", "\t", "\r\n", "# tight {}\n"};
    std::mt19937 random(54321);
    for (int round = 0; round < 200; ++round) {
        std::string text;
        const LexToken* before = nullptr;
        int n = 0;
        for (const auto& t : *tokens) {
            if (before != nullptr) {
                const bool after_comment = before->kind == LexToken::Kind::Comment;
                const auto& gap = gaps[random() % (after_comment ? 5 : gaps.size())];
                // A gap glued to a path would become part of it.
                text += (gap.front() == '#' ? " " : "") + fmt::format(fmt::runtime(gap), ++n);
            }
            text += t.text;
            before = &t;
        }
        check_canonical(text, format(text));
    }
}

TEST_CASE("every policy file in the repository that parses formats canonically", "[format][files]")
{
    const auto files = repository_policies();
    REQUIRE(!files.empty());
    std::size_t formatted = 0;
    for (const auto& path : files) {
        const auto text = read_file(path);
        const Formatted f(text, path);
        if (!f.result())
            continue; // does not parse: other tests cover its diagnostics
        INFO(path);
        check_canonical(text, *f.result());
        ++formatted;
    }
    WARN(formatted << " of " << files.size() << " policy files parse and were formatted");
}

TEST_CASE("a file with a syntax error is not formatted, and reports what run_parse does", "[format][errors]")
{
    for (const std::string text : {"policy \"x\" {\n    default deny;\n}\n", "policy \"x\" {\n  allow read \"/a\n}\n",
                                   "policy \"x\" {\n  default deny\n", "policy \"x\" { default deny }\n\xff\n"}) {
        INFO(text);
        const Formatted f(text);
        CHECK(!f.result());
        SourceManager sources;
        Diagnostics diags(sources);
        CHECK(!run_parse(sources.file(sources.add("test.bwp", text)), diags));
        REQUIRE(f.diags().size() == diags.all().size());
        for (std::size_t i = 0; i < diags.all().size(); ++i) {
            CHECK(f.diags()[i].kind == diags.all()[i].kind);
            CHECK(f.diags()[i].message == diags.all()[i].message);
            CHECK(f.diags()[i].loc.line == diags.all()[i].loc.line);
            CHECK(f.diags()[i].loc.column == diags.all()[i].loc.column);
        }
    }

    const Formatted f("policy \"x\" {\n    default deny;\n}\n");
    REQUIRE(f.diags().size() == 1);
    const auto& d = f.diags().front();
    CHECK(d.kind == DiagKind::SyntaxError);
    CHECK(d.loc.line == 2);
    CHECK(d.loc.column == 13);
    CHECK(d.loc.length == 5);
}
