// policy.o: written atomically, deterministic, readable back, loadable by libbpf, and
// refused with a clear message when corrupt or from another format version.
#include "artifact/artifact.h"
#include "helpers.h"
#include "source/sha256.h"

#include <bpf/libbpf.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <thread>
#include <unistd.h>


using namespace bw;

namespace {

const char* kPolicy = R"(policy "web" {
    default deny
    allow read, exec /usr/
    deny exec /usr/bin/su
})";

std::string slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string build(const test::TempDir& dir, const std::string& text, const std::string& out)
{
    const auto src = dir.write("web.bwp", text);
    Compilation c;
    std::string dump;
    auto compiled = run_pipeline(src, c, test::test_options(), dump);
    REQUIRE(compiled);
    const auto path = (dir.path() / out).string();
    REQUIRE(run_write_artifact(*compiled, path, c));
    return path;
}

} // namespace

TEST_CASE("an artifact reads back with its tables, sources, kernel needs and IR")
{
    test::TempDir dir;
    const auto path = build(dir, kPolicy, "web.o");
    const auto read = artifact::read(path);
    REQUIRE(std::holds_alternative<artifact::Artifact>(read));
    const auto& a = std::get<artifact::Artifact>(read);
    CHECK(a.policy.ir.name == "web");
    CHECK(a.policy.format_version == artifact::kFormatVersion);
    CHECK(a.policy.abi_version == BW_ABI_VERSION);
    CHECK(a.policy.backend == artifact::Backend::Maps);
    CHECK(a.policy.kernel == kernel_requirements());
    REQUIRE(a.policy.sources.size() == 1);
    CHECK(a.policy.sources[0].name == (dir.path() / "web.bwp").string());
    CHECK(a.policy.sources[0].sha256 == sha256_hex(kPolicy));
    CHECK(a.policy.tables.trans.size() ==
          std::size_t{a.policy.tables.sandbox.nstates} * a.policy.tables.sandbox.nclasses);

    // The IR names the rule behind a denial, as the rule table of format 1 did.
    CHECK(std::count_if(a.policy.ir.rules.begin(), a.policy.ir.rules.end(),
                        [](const ir::PathRule& r) { return !r.invariant; }) == 2);
    const auto* su = a.policy.rule(ir::kFirstRuleId + 1);
    REQUIRE(su != nullptr);
    CHECK(su->text == "deny exec /usr/bin/su");
    CHECK(su->line == 4);
    const auto* fallback = a.policy.rule(ir::kDefaultRuleId);
    REQUIRE(fallback != nullptr);
    CHECK(fallback->text == "default deny");
    CHECK(a.policy.rule(999) == nullptr);
}

TEST_CASE("an artifact records the bindings its policy was compiled with")
{
    test::TempDir dir;
    const auto a = std::get<artifact::Artifact>(
        artifact::read(build(dir, "policy \"home\" {\n default deny\n allow read ${HOME}/\n}\n", "home.o")));
    CHECK(a.policy.ir.bindings == std::map<std::string, std::string>{{"HOME", "/home/user"}});
    CHECK(a.policy.ir.rules.at(0).pattern == "/home/user/**");
}

TEST_CASE("the maps backend's minimum kernel is the newest release among its features")
{
    const auto k = kernel_requirements();
    REQUIRE_FALSE(k.features.empty());
    std::string newest = "0";
    for (const auto& f : k.features) {
        CHECK_FALSE(f.why.empty());
        if (artifact::kernel_older(newest, f.since))
            newest = f.since;
    }
    CHECK(newest == k.min_kernel);
    CHECK_THAT(k.why, Catch::Contains("6.1") && Catch::Contains("6.12"));
}

TEST_CASE("kernel releases compare by their leading numbers")
{
    CHECK(artifact::kernel_older("5.15.0-91-generic", "5.17"));
    CHECK(artifact::kernel_older("5.4", "5.17"));
    CHECK(artifact::kernel_older("4.19.0", "5.7"));
    CHECK_FALSE(artifact::kernel_older("5.17", "5.17"));
    CHECK_FALSE(artifact::kernel_older("5.17.0-rc3", "5.17"));
    CHECK_FALSE(artifact::kernel_older("6.1.0-18-amd64", "5.17"));
    CHECK_FALSE(artifact::kernel_older("6.12.9+bpo-amd64", "5.17"));
    CHECK_FALSE(artifact::kernel_older("10.0", "5.17"));
    CHECK_FALSE(artifact::kernel_older("", "5.17"));
    CHECK_FALSE(artifact::kernel_older("unknown", "5.17"));
}

TEST_CASE("compiling the same input twice gives identical bytes")
{
    test::TempDir dir;
    CHECK(slurp(build(dir, kPolicy, "one.o")) == slurp(build(dir, kPolicy, "two.o")));
}

TEST_CASE("artifacts of different policies share one program identity")
{
    test::TempDir dir;
    const auto a = std::get<artifact::Artifact>(artifact::read(build(dir, kPolicy, "a.o")));
    const auto b = std::get<artifact::Artifact>(
        artifact::read(build(dir, "policy \"other\" {\n default allow\n deny read /etc/\n}\n", "b.o")));
    CHECK(a.program_id == b.program_id);
    CHECK(a.elf != b.elf);
}

TEST_CASE("libbpf opens the artifact and finds the program and its maps")
{
    test::TempDir dir;
    const auto a = std::get<artifact::Artifact>(artifact::read(build(dir, kPolicy, "web.o")));
    libbpf_set_print(nullptr);
    bpf_object* obj = bpf_object__open_mem(a.elf.data(), a.elf.size(), nullptr);
    REQUIRE(obj != nullptr);
    CHECK(bpf_object__find_program_by_name(obj, "bw_file_open") != nullptr);
    for (const char* map : {"bw_sandboxes", "bw_trans", "bw_accepts", "bw_events", "bw_scratch"})
        CHECK(bpf_object__find_map_by_name(obj, map) != nullptr);
    bpf_object__close(obj);
}

TEST_CASE("corrupt and foreign inputs are refused with a reason")
{
    test::TempDir dir;
    const auto good = std::get<artifact::Artifact>(artifact::read(build(dir, kPolicy, "web.o")));
    auto blob = artifact::encode(good.policy);

    SECTION("truncated")
    {
        blob.resize(blob.size() - 3);
        const auto r = artifact::decode(blob);
        REQUIRE(std::holds_alternative<artifact::Error>(r));
        CHECK_THAT(std::get<artifact::Error>(r).message, Catch::Contains("truncated"));
    }
    SECTION("another format version")
    {
        for (const std::byte version : {std::byte{1}, std::byte{99}}) {
            blob[8] = version;
            const auto r = artifact::decode(blob);
            REQUIRE(std::holds_alternative<artifact::Error>(r));
            CHECK_THAT(std::get<artifact::Error>(r).message,
                       Catch::Contains(fmt::format("format version {} is not supported (this build reads version {})",
                                                   static_cast<int>(version), artifact::kFormatVersion)) &&
                           Catch::Contains("recompile"));
        }
    }
    SECTION("an unknown backend")
    {
        auto data = good.policy;
        data.backend = static_cast<artifact::Backend>(7);
        const auto r = artifact::decode(artifact::encode(data));
        REQUIRE(std::holds_alternative<artifact::Error>(r));
        CHECK_THAT(std::get<artifact::Error>(r).message, Catch::Contains("backend 7 is out of range"));
    }
    SECTION("a malformed source hash")
    {
        auto data = good.policy;
        data.sources.at(0).sha256 = "not hex";
        const auto r = artifact::decode(artifact::encode(data));
        REQUIRE(std::holds_alternative<artifact::Error>(r));
        CHECK_THAT(std::get<artifact::Error>(r).message, Catch::Contains("SHA-256"));
    }
    SECTION("a transition out of range")
    {
        auto data = good.policy;
        data.tables.trans.back() = data.tables.sandbox.nstates;
        const auto r = artifact::decode(artifact::encode(data));
        REQUIRE(std::holds_alternative<artifact::Error>(r));
        CHECK_THAT(std::get<artifact::Error>(r).message, Catch::Contains("transition out of range"));
    }
    SECTION("not an ELF file")
    {
        const auto path = dir.write("policy.bwp.o", "policy \"x\" {}");
        const auto r = artifact::read(path);
        REQUIRE(std::holds_alternative<artifact::Error>(r));
        CHECK_THAT(std::get<artifact::Error>(r).message, Catch::Contains("not an ELF object"));
    }
    SECTION("a folder, or no file")
    {
        const auto folder = artifact::read(dir.path().string());
        REQUIRE(std::holds_alternative<artifact::Error>(folder));
        CHECK_THAT(std::get<artifact::Error>(folder).message, Catch::Contains("Is a directory"));
        const auto missing = artifact::read((dir.path() / "missing.o").string());
        REQUIRE(std::holds_alternative<artifact::Error>(missing));
        CHECK_THAT(std::get<artifact::Error>(missing).message,
                   Catch::Contains("cannot open") && Catch::Contains("No such file"));
    }
    SECTION("an ELF object without a policy")
    {
        std::ofstream(dir.path() / "plain.o", std::ios::binary)
            .write(reinterpret_cast<const char*>(embedded::generic_bpf.data()),
                   static_cast<std::streamsize>(embedded::generic_bpf.size()));
        const auto r = artifact::read((dir.path() / "plain.o").string());
        REQUIRE(std::holds_alternative<artifact::Error>(r));
        CHECK_THAT(std::get<artifact::Error>(r).message, Catch::Contains("has no `.bw.policy` section"));
    }
}

TEST_CASE("an artifact reads whole from a pipe as from its file")
{
    test::TempDir dir;
    const auto path = build(dir, kPolicy, "web.o");
    const std::string bytes = slurp(path);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    // A writer thread: the artifact is bigger than a pipe holds.
    std::thread writer([&] {
        for (std::size_t off = 0; off < bytes.size();) {
            const ssize_t n = write(fds[1], bytes.data() + off, bytes.size() - off);
            if (n <= 0)
                break;
            off += static_cast<std::size_t>(n);
        }
        close(fds[1]);
    });
    const auto r = artifact::read(fmt::format("/proc/self/fd/{}", fds[0]));
    writer.join();
    close(fds[0]);
    REQUIRE(std::holds_alternative<artifact::Artifact>(r));
    const auto& a = std::get<artifact::Artifact>(r);
    CHECK(a.elf.size() == bytes.size());
    CHECK(a.policy.ir.name == "web");
    CHECK(a.program_id == std::get<artifact::Artifact>(artifact::read(path)).program_id);
}

TEST_CASE("a failed write leaves no file behind")
{
    test::TempDir dir;
    const auto src = dir.write("web.bwp", kPolicy);
    Compilation c;
    std::string dump;
    auto compiled = run_pipeline(src, c, test::test_options(), dump);
    REQUIRE(compiled);
    compiled->program = {std::byte{1}, std::byte{2}, std::byte{3}}; // not ELF
    const auto out = (dir.path() / "web.o").string();
    CHECK_FALSE(run_write_artifact(*compiled, out, c));
    CHECK(c.diags.all().back().kind == DiagKind::OutputWriteFailed);
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 1); // only web.bwp
}
