// The IR inside an artifact: every policy we ship or test survives encode and decode with
// the same meaning (dump and evaluator answers), and corrupt bytes give an error, never a
// crash, a huge allocation or a policy the evaluator could hang on.
#include "artifact/artifact.h"
#include "artifact/ir_codec.h"
#include "helpers.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <filesystem>
#include <netinet/in.h>
#include <random>
#include <sys/socket.h>

namespace bw::embedded {
extern const std::span<const std::byte> generic_bpf;
}

using namespace bw;
namespace fs = std::filesystem;

namespace {

// The policies to round-trip: the valid test policies, the standard library and the examples.
std::vector<fs::path> policy_files()
{
    std::vector<fs::path> out;
    for (const auto* dir : {"tests/policies/valid", "stdlib-policies", "examples"}) {
        for (const auto& e : fs::recursive_directory_iterator(fs::path(BW_SOURCE_DIR) / dir)) {
            if (e.is_regular_file() && e.path().extension() == ".bwp")
                out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

ir::Policy round_trip(const ir::Policy& policy)
{
    auto decoded = artifact::decode_ir(artifact::encode_ir(policy));
    if (const auto* e = std::get_if<artifact::Error>(&decoded))
        FAIL(e->message);
    return std::get<ir::Policy>(decoded);
}

std::string decode_error(const ir::Policy& policy)
{
    const auto decoded = artifact::decode_ir(artifact::encode_ir(policy));
    REQUIRE(std::holds_alternative<artifact::Error>(decoded));
    return std::get<artifact::Error>(decoded).message;
}

template <typename T>
const T& pick(std::mt19937& rng, const std::vector<T>& items)
{
    return items[std::uniform_int_distribution<std::size_t>(0, items.size() - 1)(rng)];
}

// A path the glob matches, or nearly: each wildcard filled in one of a few ways.
std::string fill(std::string_view glob, std::mt19937& rng)
{
    std::string out;
    for (std::size_t i = 0; i < glob.size(); ++i) {
        const char c = glob[i];
        if (c == '*' && i + 1 < glob.size() && glob[i + 1] == '*') {
            out += pick(rng, std::vector<std::string>{"", "a", "a/b", "x/.y/z"});
            ++i;
        } else if (c == '*') {
            out += pick(rng, std::vector<std::string>{"", "f", "name.txt"});
        } else if (c == '?') {
            out += 'q';
        } else if (c == '[') {
            const auto close = glob.find(']', i + 2);
            const bool negate = glob[i + 1] == '!';
            out += negate ? '~' : glob[i + 1];
            i = close;
        } else {
            out += c;
        }
    }
    // `**` filled with nothing leaves `//` or a trailing `/`; the kernel's paths have neither.
    std::string clean;
    for (const char c : out) {
        if (c != '/' || clean.empty() || clean.back() != '/')
            clean += c;
    }
    if (clean.size() > 1 && clean.back() == '/')
        clean.pop_back();
    return clean.empty() ? "/" : clean;
}

struct Sample {
    std::string path;
    ir::AccessMask accesses; // of the rule the path was made from, so that it may apply
};

std::vector<Sample> sample_paths(const ir::Policy& p, std::mt19937& rng, std::size_t n)
{
    std::vector<std::pair<std::string, ir::AccessMask>> globs;
    for (const auto& r : p.rules)
        globs.emplace_back(r.pattern, r.accesses);
    for (const auto& r : p.audits)
        globs.emplace_back(r.pattern, r.accesses);
    for (const auto& r : p.devices) {
        if (!r.pattern.empty())
            globs.emplace_back(r.pattern, r.accesses);
    }
    const std::vector<std::string> names = {"etc", "usr", "home", "user", "tmp", "dev", ".ssh", "bin", "a"};
    std::vector<Sample> out;
    while (out.size() < n) {
        Sample s{"", ir::kAllAccesses};
        if (!globs.empty() && out.size() % 4 != 3) {
            const auto& [glob, accesses] = pick(rng, globs);
            s = {fill(glob, rng), accesses};
            if (out.size() % 5 == 0)
                s.path += (s.path == "/" ? "" : "/") + pick(rng, names);
        } else {
            for (int depth = std::uniform_int_distribution<int>(1, 4)(rng); depth > 0; --depth)
                s.path += "/" + pick(rng, names);
        }
        out.push_back(std::move(s));
    }
    return out;
}

ir::PathQuery path_query(const ir::Policy& p, const Sample& sample, std::mt19937& rng)
{
    std::vector<std::string> exes = {"/usr/bin/sh", "/usr/bin/git"};
    for (const auto& r : p.rules) {
        for (const auto& e : r.conditions.exe)
            exes.push_back(fill(e, rng));
    }
    // Mostly an access the sample's rule names; sometimes any.
    std::vector<ir::Access> accesses;
    for (std::size_t i = 0; i < ir::kAccessKinds; ++i) {
        if (rng() % 4 == 0 || (sample.accesses & (1u << i)))
            accesses.push_back(static_cast<ir::Access>(i));
    }
    ir::PathQuery q;
    q.access = accesses.empty() ? ir::Access::Read : pick(rng, accesses);
    q.path = sample.path;
    q.exe = pick(rng, exes);
    q.uid = pick(rng, std::vector<std::uint32_t>{0, 1000, 65534});
    q.gid = pick(rng, std::vector<std::uint32_t>{0, 1000});
    q.owner = rng() % 2 == 0;
    q.flags = pick(rng, std::vector<std::uint32_t>{0, O_TRUNC, O_APPEND, O_TRUNC | O_CREAT});
    return q;
}

// Path, device, syscall and socket queries must get the same verdicts from both policies.
void check_same_answers(const ir::Policy& a, const ir::Policy& b, std::mt19937& rng)
{
    for (const auto& sample : sample_paths(a, rng, 300)) {
        const auto q = path_query(a, sample, rng);
        INFO(ir::name(q.access) << " " << q.path << " exe " << q.exe);
        CHECK(ir::evaluate(a, q) == ir::evaluate(b, q));
        ir::DeviceQuery d;
        d.access = q;
        d.type = rng() % 2 == 0 ? 'c' : 'b';
        d.major = pick(rng, std::vector<std::uint32_t>{1, 5, 226});
        d.minor = pick(rng, std::vector<std::uint32_t>{0, 3, 128});
        d.ioctl_command = pick(rng, std::vector<std::uint32_t>{0x5401, 0x6401, 0x6500});
        CHECK(ir::evaluate_device(a, d) == ir::evaluate_device(b, d));
    }
    for (const auto* name : {"read", "ptrace", "bpf", "mount", "pivot_root", "personality"}) {
        const auto x = ir::evaluate_syscall(a, name);
        const auto y = ir::evaluate_syscall(b, name);
        CHECK((x.decision == y.decision && x.rule == y.rule && x.action == y.action));
    }
    for (int i = 0; i < 50; ++i) {
        ir::NetQuery q;
        q.op = static_cast<ir::NetQuery::Op>(i % 3);
        q.family = i % 2 == 0 ? AF_INET : AF_INET6;
        q.protocol = i % 4 < 2 ? IPPROTO_TCP : IPPROTO_UDP;
        for (auto& byte : q.address)
            byte = static_cast<std::uint8_t>(i % 5 == 0 ? 0 : rng() % 3 == 0 ? 10 : 127);
        q.port = pick(rng, std::vector<std::uint16_t>{53, 443, 8080});
        q.process.exe = "/usr/bin/sh";
        CHECK(ir::evaluate_net(a, q) == ir::evaluate_net(b, q));
    }
}

// A policy with every kind of rule and condition, as the front end makes it.
ir::Policy everything()
{
    const auto r = test::check_file(std::string(BW_SOURCE_DIR) + "/tests/policies/valid/everything.bwp");
    REQUIRE(r.policy);
    return *r.policy;
}

} // namespace

TEST_CASE("every valid, stdlib and example policy survives encode and decode with its meaning")
{
    std::mt19937 rng(20260315);
    int lowered = 0;
    for (const auto& file : policy_files()) {
        const auto r = test::check_file(file.string());
        if (!r.policy || r.diags().has_errors())
            continue;
        ++lowered;
        INFO(file.string());
        const auto decoded = round_trip(*r.policy);
        CHECK(ir::dump(decoded) == ir::dump(*r.policy));
        CHECK(artifact::encode_ir(decoded) == artifact::encode_ir(*r.policy));
        check_same_answers(*r.policy, decoded, rng);
    }
    CHECK(lowered >= 10);
}

TEST_CASE("the IR keeps what its dump does not show")
{
    const auto p = everything();
    const auto d = round_trip(p);
    CHECK(d.description == "a tour of the language");
    CHECK(d.version == "2.0");
    CHECK(d.min_kernel == p.min_kernel);
    CHECK(d.features == std::vector<std::string>{"bpf_lsm"});
    CHECK(d.bindings == p.bindings);
    CHECK(d.syscall_default_action == p.syscall_default_action);
    REQUIRE(d.rules.size() == p.rules.size());
    for (std::size_t i = 0; i < p.rules.size(); ++i) {
        CHECK(d.rules[i].conditions == p.rules[i].conditions);
        CHECK(d.rules[i].origin.column == p.rules[i].origin.column);
        CHECK(d.rules[i].origin.text == p.rules[i].origin.text);
        CHECK_FALSE(d.rules[i].origin.loc.known()); // the sources are gone
    }
    REQUIRE(d.net.size() == p.net.size());
    for (std::size_t i = 0; i < p.net.size(); ++i) {
        CHECK(d.net[i].endpoint == p.net[i].endpoint);
        CHECK(d.net[i].kind == p.net[i].kind);
        CHECK(d.net[i].protocol == p.net[i].protocol);
        CHECK(d.net[i].bind == p.net[i].bind);
    }
    REQUIRE(d.devices.size() == p.devices.size());
    for (std::size_t i = 0; i < p.devices.size(); ++i) {
        CHECK(d.devices[i].ioctl_commands == p.devices[i].ioctl_commands);
        CHECK(d.devices[i].major == p.devices[i].major);
        CHECK(d.devices[i].minor == p.devices[i].minor);
        CHECK(d.devices[i].type == p.devices[i].type);
    }
    REQUIRE(d.syscalls.size() == p.syscalls.size());
    for (std::size_t i = 0; i < p.syscalls.size(); ++i)
        CHECK(d.syscalls[i].action == p.syscalls[i].action);
}

TEST_CASE("unsafe invariants and invariant rules survive encode and decode")
{
    const auto p = test::checked_policy("policy \"p\" {\n    default deny\n    unsafe mount, sysctl\n"
                                        "    allow write /proc/sys/kernel/\n}\n");
    const auto d = round_trip(p);
    CHECK(d.unsafe == (static_cast<ir::InvariantMask>(ir::Invariant::Mount) |
                       static_cast<ir::InvariantMask>(ir::Invariant::Sysctl)));
    // The sysctl rules are gone, so the policy's allow decides; the cgroup invariant still denies.
    ir::PathQuery q;
    q.access = ir::Access::Write;
    q.path = "/proc/sys/kernel/ostype";
    CHECK(ir::evaluate(d, q).decision == ir::Decision::Allow);
    q.path = "/sys/fs/cgroup/cgroup.procs";
    const auto v = ir::evaluate(d, q);
    CHECK(v.decision == ir::Decision::Deny);
    const auto* origin = ir::find_origin(d, v.rule);
    REQUIRE(origin != nullptr);
    CHECK(origin->text == "invariant: cgroup");
    CHECK(std::count_if(d.rules.begin(), d.rules.end(), [](const ir::PathRule& r) { return r.invariant; }) ==
          std::count_if(p.rules.begin(), p.rules.end(), [](const ir::PathRule& r) { return r.invariant; }));
}

TEST_CASE("out-of-range values in the IR are refused")
{
    auto p = everything();
    REQUIRE_FALSE(p.rules.empty());
    REQUIRE_FALSE(p.net.empty());
    REQUIRE_FALSE(p.devices.empty());
    REQUIRE_FALSE(p.syscalls.empty());
    SECTION("a decision")
    {
        p.rules[0].decision = static_cast<ir::Decision>(7);
        CHECK_THAT(decode_error(p), Catch::Contains("decision 7 is out of range"));
    }
    SECTION("a default's decision")
    {
        p.net_default.decision = static_cast<ir::Decision>(0);
        CHECK_THAT(decode_error(p), Catch::Contains("decision 0 is out of range"));
    }
    SECTION("an access bit")
    {
        p.rules[0].accesses = static_cast<ir::AccessMask>(1u << 15);
        CHECK_THAT(decode_error(p), Catch::Contains("unknown accesses"));
    }
    SECTION("a syscall action")
    {
        p.syscalls[0].action.kind = static_cast<ir::SyscallAction::Kind>(9);
        CHECK_THAT(decode_error(p), Catch::Contains("syscall action 9 is out of range"));
    }
    SECTION("a network rule kind")
    {
        p.net[0].kind = static_cast<ir::NetRule::Kind>(3);
        CHECK_THAT(decode_error(p), Catch::Contains("network rule kind 3 is out of range"));
    }
    SECTION("an address prefix")
    {
        p.net[0].endpoint.prefix = 129;
        CHECK_THAT(decode_error(p), Catch::Contains("prefix /129 is out of range"));
    }
    SECTION("a device type")
    {
        p.devices[0].type = 'x';
        CHECK_THAT(decode_error(p), Catch::Contains("device type"));
    }
    SECTION("a glob whose class does not close")
    {
        p.rules[0].pattern = "/etc/[ab/c]";
        CHECK_THAT(decode_error(p), Catch::Contains("without its `]`"));
    }
    SECTION("an unknown invariant in the unsafe mask")
    {
        p.unsafe = 1u << 20;
        CHECK_THAT(decode_error(p), Catch::Contains("unknown invariants"));
    }
    SECTION("bumblewrap's own state made unsafe")
    {
        p.unsafe = static_cast<ir::InvariantMask>(ir::Invariant::Self);
        CHECK_THAT(decode_error(p), Catch::Contains("no policy can"));
    }
    SECTION("an exe glob whose class does not close")
    {
        p.rules[0].conditions.exe = {"/usr/bin/["};
        CHECK_THAT(decode_error(p), Catch::Contains("without its `]`"));
    }
}

TEST_CASE("a truncated IR is an error at every length")
{
    const auto bytes = artifact::encode_ir(everything());
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        INFO("length " << n);
        const auto r = artifact::decode_ir(std::span(bytes).first(n));
        REQUIRE(std::holds_alternative<artifact::Error>(r));
    }
    auto longer = bytes;
    longer.push_back(std::byte{0});
    const auto r = artifact::decode_ir(longer);
    REQUIRE(std::holds_alternative<artifact::Error>(r));
    CHECK_THAT(std::get<artifact::Error>(r).message, Catch::Contains("trailing bytes"));
}

TEST_CASE("flipped bytes in the IR give an error or a policy the evaluator can use")
{
    const auto policy = everything();
    const auto bytes = artifact::encode_ir(policy);
    ir::PathQuery q;
    std::size_t errors = 0, policies = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        for (const auto mask : {0x01, 0x80, 0xff}) {
            auto flipped = bytes;
            flipped[i] ^= std::byte(mask);
            const auto r = artifact::decode_ir(flipped);
            if (const auto* p = std::get_if<ir::Policy>(&r)) {
                ++policies;
                // Whatever changed, the evaluator must still answer (and not hang).
                std::mt19937 rng(static_cast<unsigned>(i));
                for (const auto& rule : p->rules) {
                    q.path = fill(rule.pattern, rng);
                    (void)ir::evaluate(*p, q);
                }
            } else {
                ++errors;
            }
        }
    }
    // Most flips land in lengths, counts, enums and glob brackets; many in text stay valid.
    CHECK(errors > 0);
    CHECK(policies > 0);
}

TEST_CASE("a truncated or flipped artifact section is an error or a valid policy, never a crash")
{
    const auto r = test::compile_text("policy \"t\" {\n default deny\n allow read /usr/[a-c]*/**\n deny read /etc/\n}\n");
    REQUIRE(r.compiled);
    const auto data = artifact::make_policy_data(r.compiled->policy, r.compilation->sources, artifact::Backend::Maps,
                                                 r.compiled->tables, kernel_requirements(), "test");
    const auto section = artifact::encode(data);
    for (std::size_t n = 0; n < section.size(); ++n)
        REQUIRE(std::holds_alternative<artifact::Error>(artifact::decode(std::span(section).first(n))));
    std::size_t errors = 0;
    for (std::size_t i = 0; i < section.size(); ++i) {
        auto flipped = section;
        flipped[i] ^= std::byte{0x80};
        errors += std::holds_alternative<artifact::Error>(artifact::decode(flipped)) ? 1 : 0;
    }
    CHECK(errors > 0);
}
