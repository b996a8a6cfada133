// tests/policies: each file states its expected diagnostics in its header, as
//   # expect: error BW3001 4:11
// Files in valid/, invalid/ and syntax/ are checked as `bwc check` does (the front end and
// its lints); files in compile/ go through the whole compiler. A file without expectations
// must be clean. Files in equal/ named NAME.a.bwp and NAME.b.bwp must compile to identical
// tables. Finally, every declared diagnostic must have been produced by some test here.
#include "backend_c/backend_c.h"
#include "helpers.h"
#include "seccomp/seccomp.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>

using namespace bw;
namespace fs = std::filesystem;

namespace {

const fs::path kPolicies = BW_TEST_POLICIES_DIR;

// Codes produced anywhere in this file's tests, for the coverage check.
std::set<std::uint16_t>& produced()
{
    static std::set<std::uint16_t> codes;
    return codes;
}

std::multiset<std::string> expectations(const fs::path& file)
{
    std::multiset<std::string> out;
    std::ifstream in(file, std::ios::binary);
    std::string line;
    const std::regex expect(R"(^#\s*expect:\s*(error|warning) (BW\d{4}) (\d+):(\d+)\s*$)");
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        std::smatch m;
        if (std::regex_match(line, m, expect))
            out.insert(fmt::format("{} {} {}:{}", m[1].str(), m[2].str(), m[3].str(), m[4].str()));
    }
    return out;
}

std::multiset<std::string> actual(const Diagnostics& diags)
{
    std::multiset<std::string> out;
    for (const auto& d : diags.all()) {
        produced().insert(diag_info(d.kind).code);
        out.insert(fmt::format("{} {} {}:{}", d.severity == Severity::Error ? "error" : "warning",
                               diag_code(d.kind), d.loc.line, d.loc.column));
    }
    return out;
}

std::vector<fs::path> policy_files(const fs::path& dir)
{
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.is_regular_file() && e.path().extension() == ".bwp")
            out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

TEST_CASE("policy files produce exactly the diagnostics they expect")
{
    int files = 0;
    for (const auto* sub : {"valid", "invalid", "syntax", "compile"}) {
        for (const auto& file : policy_files(kPolicies / sub)) {
            const auto r = std::string_view(sub) == "compile" ? test::compile_file(file.string())
                                                              : test::check_file(file.string());
            std::string rendered;
            for (const auto& d : r.diags().all())
                rendered += r.diags().render(d, false);
            INFO(file.string() << "\n" << rendered);
            CHECK(actual(r.diags()) == expectations(file));
            ++files;
        }
    }
    CHECK(files >= 40);
}

TEST_CASE("equivalent policies compile to identical tables")
{
    int pairs = 0;
    for (const auto& a : policy_files(kPolicies / "equal")) {
        const std::string name = a.filename().string();
        if (!name.ends_with(".a.bwp"))
            continue;
        const auto b = a.parent_path() / (name.substr(0, name.size() - 6) + ".b.bwp");
        INFO(a.string());
        REQUIRE(fs::exists(b));
        const auto ra = test::compile_file(a.string());
        const auto rb = test::compile_file(b.string());
        REQUIRE(ra.compiled);
        REQUIRE(rb.compiled);
        const auto& ta = ra.compiled->tables;
        const auto& tb = rb.compiled->tables;
        CHECK(std::memcmp(&ta.sandbox, &tb.sandbox, sizeof ta.sandbox) == 0);
        CHECK(ta.trans == tb.trans);
        REQUIRE(ta.accepts.size() == tb.accepts.size());
        CHECK(std::memcmp(ta.accepts.data(), tb.accepts.data(), ta.accepts.size() * sizeof(bw_accept)) == 0);
        // The specialised backend too: same tables, same code once the comments naming
        // each rule's file and line are gone.
        const auto ca = run_backend_c(ra.compiled->policy, ra.compiled->automaton);
        const auto cb = run_backend_c(rb.compiled->policy, rb.compiled->automaton);
        CHECK(ca.tables.trans == cb.tables.trans);
        const std::regex comment(R"(/\*[\s\S]*?\*/)");
        CHECK(std::regex_replace(ca.header, comment, "") == std::regex_replace(cb.header, comment, ""));
        ++pairs;
    }
    CHECK(pairs >= 3);
}

TEST_CASE("input that is not a policy file is reported, not crashed on")
{
    test::TempDir dir;
    SECTION("a missing file")
    {
        actual(test::compile_file((dir.path() / "missing.bwp").string()).diags());
    }
    SECTION("a directory")
    {
        actual(test::compile_file(dir.path().string()).diags());
    }
    SECTION("an unwritable output")
    {
        auto r = test::compile_text("policy \"p\" {\n default deny\n}\n");
        REQUIRE(r.compiled);
        CHECK_FALSE(run_write_artifact(*r.compiled, "/nonexistent-dir/p.o", *r.compilation));
        actual(r.diags());
    }
    SECTION("a file over the size limit")
    {
        auto r = test::compile_text(std::string(kMaxSourceBytes + 1, '#'));
        CHECK(r.diags().has_errors());
        actual(r.diags());
    }
    CHECK_FALSE(produced().empty());
}

TEST_CASE("a rule through a symlink on this machine is reported with the resolved path")
{
    test::TempDir dir;
    std::filesystem::create_directory(dir.path() / "real");
    std::filesystem::create_directory_symlink(dir.path() / "real", dir.path() / "link");
    auto options = test::test_options();
    options.check.check_symlinks = true;
    const auto link = (dir.path() / "link").string();
    const auto policy = dir.write("p.bwp", "policy \"p\" {\n default deny\n allow read " + link + "/data/**\n}\n");
    const auto r = test::compile_file(policy, options);
    actual(r.diags());
    REQUIRE(r.diags().all().size() == 1);
    const auto& d = r.diags().all().front();
    CHECK(d.kind == DiagKind::PathThroughSymlink);
    REQUIRE(d.hints.size() == 1);
    CHECK(d.hints.front() == fmt::format("write `{}/real/data/**`", std::filesystem::canonical(dir.path()).string()));
}

TEST_CASE("an automaton over the size limit is refused with a hint")
{
    // 6,000 unshared names of 60 letters and digits: ~360,000 states over 63 classes.
    const std::string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::string text = "policy \"big\" {\n default deny\n";
    std::mt19937 rng(7);
    for (int i = 0; i < 6000; ++i) {
        text += " allow read /";
        for (int j = 0; j < 60; ++j)
            text += alphabet[rng() % alphabet.size()];
        text += "\n";
    }
    text += "}\n";
    const auto r = test::compile_text(text);
    actual(r.diags());
    CHECK_FALSE(r.compiled);
    REQUIRE(r.diags().has_errors());
    const auto& d = r.diags().all().back();
    CHECK(d.kind == DiagKind::AutomatonTooLarge);
    // It points at a rule and names the ones that multiply the states, with their lines.
    CHECK(d.loc.line >= 3);
    REQUIRE(d.hints.size() >= 3);
    CHECK(std::regex_search(d.hints.front(), std::regex(R"(^`allow read /[A-Za-z0-9]{60}` \(.*test\.bwp:[0-9]+\) is in [0-9]+ of the [0-9]+ states$)")));
}

TEST_CASE("a seccomp filter over its size limit is refused")
{
    // ~360 syscalls cannot reach the kernel's 4096 instructions, so the limit is lowered.
    const auto r = test::check_text("policy \"p\" {\n    default allow\n    syscalls default deny\n    syscalls allow @obsolete\n}\n");
    REQUIRE(r.policy);
    CHECK_FALSE(run_compile_seccomp(*r.policy, SeccompArch::X86_64, r.compilation->diags, 8));
    actual(r.diags());
    REQUIRE(r.diags().has_errors());
    CHECK(r.diags().all().back().kind == DiagKind::SeccompTooLarge);
}

TEST_CASE("a specialised program that clang refuses is reported with clang's message")
{
    // No policy produces this (clang compiles every generated program); a broken header
    // stands in for a generator bug.
    CProgram program;
    program.header = "#error the generator broke\n";
    Compilation c;
    CHECK_FALSE(run_compile_c(program, c.diags));
    actual(c.diags);
    REQUIRE(c.diags.all().size() == 1);
    const auto& d = c.diags.all().front();
    CHECK(d.kind == DiagKind::SpecialisedCompileFailed);
    CHECK(d.message.find("the generator broke") != std::string::npos);
    CHECK_FALSE(d.hints.empty());
}

// Declared last in this file so that Catch2 (which runs a file's cases in order) runs it
// after the cases above have recorded what they produced.
TEST_CASE("every declared diagnostic is produced by some test")
{
    std::vector<std::string> missing;
    for (const auto& info : all_diag_infos()) {
        if (!produced().contains(info.code))
            missing.push_back(fmt::format("BW{:04} {}", info.code, info.name));
    }
    INFO("never produced: " << fmt::format("{}", fmt::join(missing, ", ")));
    CHECK(missing.empty());
}
