// The devices stage against the reference evaluator: the kernel's reading of the device
// table (first matching rule whose conditions hold, by the patterns the automaton finds on
// the node's path or by number, else the path rules) must give ir::evaluate_device's
// verdict and rule for every query, ioctl commands and conditions included.
#include "helpers.h"

#include "artifact/artifact.h"
#include "backend_c/backend_c.h"
#include "devices/devices.h"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <random>

using namespace bw;
using bw::ir::Access;
using bw::ir::Decision;

namespace {

// What hooks/devices.bpf.h decides, then the path rules when no device rule does.
ir::Verdict kernel_decide(const ir::Policy& policy, const Automaton& automaton, const DeviceTables& tables,
                          const ir::DeviceQuery& q)
{
    const DeviceAccess a{
        .patterns = simulate_walk(automaton, q.access.path).devices,
        .type = q.type,
        .major = q.major,
        .minor = q.minor,
        .access = q.access.access,
        .ioctl_command = q.ioctl_command,
        .uid = q.access.uid,
        .gid = q.access.gid,
        .owner = q.access.owner,
        .open_flags = q.access.flags,
        .exe = simulate_walk(automaton, q.access.exe).exe,
    };
    const auto v = decide(tables, a);
    return v ? *v : simulate(automaton, policy, q.access);
}

// Patterns and device paths that overlap in every way: nested, equal, disjoint.
constexpr const char* kPatterns[] = {"/dev/node", "/dev/n*", "/dev/**", "/dev/dri/*", "/dev/*e", "/dev/dri/card?"};
constexpr const char* kPaths[] = {"/dev/node", "/dev/nope", "/dev/dri/card0", "/dev/dri/renderD128", "/dev/tty"};
constexpr const char* kExePatterns[] = {"/usr/bin/*", "/usr/bin/cat", "/opt/**"};
constexpr const char* kExes[] = {"/usr/bin/cat", "/usr/bin/head", "/opt/x/tool"};

// Conditions over few values, so that they overlap the queries' and each other's.
ir::Conditions random_conditions(std::mt19937& rng)
{
    ir::Conditions c;
    if (rng() % 3 == 0)
        c.uid = rng() % 2 ? ir::IdRange{1000, 1999} : ir::IdRange{0, 0};
    if (rng() % 4 == 0)
        c.gid = ir::IdRange{100, 100};
    c.owner = rng() % 4 == 0;
    if (rng() % 4 == 0)
        c.open_flags = O_APPEND;
    if (rng() % 3 == 0)
        c.exe.push_back(kExePatterns[rng() % std::size(kExePatterns)]);
    return c;
}

// Small numbers, so that ranges nest and collide.
ir::IdRange random_range(std::mt19937& rng)
{
    const auto lo = static_cast<std::uint32_t>(rng() % 6);
    return rng() % 3 == 0 ? ir::IdRange{lo, lo} : ir::IdRange{lo, lo + static_cast<std::uint32_t>(rng() % 4)};
}

ir::DeviceRule random_rule(std::mt19937& rng)
{
    ir::DeviceRule r;
    r.decision = rng() % 2 ? Decision::Allow : Decision::Deny;
    if (rng() % 3 == 0) {
        r.pattern = kPatterns[rng() % std::size(kPatterns)];
    } else {
        r.type = rng() % 4 ? 'c' : 'b';
        r.major = rng() % 4 ? random_range(rng) : ir::IdRange{0, 0xfff};
        r.minor = rng() % 4 ? random_range(rng) : ir::IdRange{0, 0xfffff};
    }
    r.accesses = static_cast<ir::AccessMask>(rng() % (1u << ir::kAccessKinds));
    if (rng() % 2)
        r.conditions = random_conditions(rng);
    r.ioctl_any = rng() % 5 == 0;
    for (auto n = rng() % 4; n > 0; --n) {
        const auto lo = static_cast<std::uint32_t>(0x5400 + rng() % 8);
        r.ioctl_commands.push_back({lo, lo + static_cast<std::uint32_t>(rng() % 3)});
    }
    return r;
}

ir::Policy random_device_policy(std::mt19937& rng)
{
    ir::Policy p;
    p.path_default = {rng() % 2 ? Decision::Allow : Decision::Deny, ir::kDefaultRuleId, {}};
    const auto n = rng() % 12;
    for (std::uint32_t i = 0; i < n; ++i) {
        auto r = random_rule(rng);
        r.id = ir::kFirstRuleId + i;
        p.devices.push_back(r);
    }
    return p;
}

ir::DeviceQuery random_query(std::mt19937& rng)
{
    ir::DeviceQuery q;
    q.access.access = static_cast<Access>(rng() % ir::kAccessKinds);
    q.access.path = kPaths[rng() % std::size(kPaths)];
    q.type = rng() % 4 ? 'c' : 'b';
    q.major = static_cast<std::uint32_t>(rng() % 10);
    q.minor = static_cast<std::uint32_t>(rng() % 10);
    q.ioctl_command = static_cast<std::uint32_t>(0x5400 + rng() % 12);
    q.access.uid = rng() % 2 ? 0 : 1000 + static_cast<std::uint32_t>(rng() % 2) * 1000;
    q.access.gid = rng() % 2 ? 100 : 0;
    q.access.owner = rng() % 2;
    q.access.flags = rng() % 2 ? O_APPEND : 0;
    q.access.exe = kExes[rng() % std::size(kExes)];
    return q;
}

ir::Verdict decide_text(const char* text, ir::DeviceQuery q)
{
    const auto result = test::compile_text(text);
    REQUIRE(result.compiled);
    const auto& policy = result.compiled->policy;
    const auto& automaton = result.compiled->automaton;
    const auto got = kernel_decide(policy, automaton, run_devices(policy, automaton), q);
    CHECK(got == ir::evaluate_device(policy, q));
    return got;
}

// A read of character device MAJOR:MINOR by PATH.
ir::DeviceQuery read_of(const char* path, std::uint32_t major, std::uint32_t minor)
{
    ir::DeviceQuery q;
    q.access.path = path;
    q.major = major;
    q.minor = minor;
    return q;
}

ir::DeviceQuery ioctl_on(std::uint32_t major, std::uint32_t minor, std::uint32_t command)
{
    ir::DeviceQuery q;
    q.access.access = Access::Ioctl;
    q.access.path = "/dev/node";
    q.major = major;
    q.minor = minor;
    q.ioctl_command = command;
    return q;
}

} // namespace

TEST_CASE("device tables: the kernel's first match agrees with ir::evaluate_device, verdict and rule")
{
    std::mt19937 rng(20261203);
    int queries = 0, decided_by_devices = 0, by_pattern = 0, conditional = 0, unsorted_disagreements = 0;
    for (int i = 0; i < 2000; ++i) {
        const auto policy = random_device_policy(rng);
        SourceManager sources;
        Diagnostics diags(sources);
        const auto automaton = run_compile_paths(policy, diags);
        REQUIRE(automaton);
        const auto tables = run_devices(policy, *automaton);
        // The same rules in the policy's order (rule ids follow it), which ignores precedence.
        auto unsorted = tables;
        std::sort(unsorted.rules.begin(), unsorted.rules.end(),
                  [](const bw_device_rule& a, const bw_device_rule& b) { return a.rule < b.rule; });
        for (int j = 0; j < 20; ++j) {
            const auto q = random_query(rng);
            const auto want = ir::evaluate_device(policy, q);
            const auto got = kernel_decide(policy, *automaton, tables, q);
            INFO("policy " << i << ", query " << j << ": " << q.access.path << " " << q.type << " " << q.major
                           << ":" << q.minor << " access " << static_cast<int>(q.access.access) << " ioctl "
                           << q.ioctl_command);
            REQUIRE(got == want);
            ++queries;
            if (want.rule != ir::kDefaultRuleId)
                ++decided_by_devices;
            if (want.rule >= ir::kFirstRuleId) {
                const auto& rule = policy.devices[want.rule - ir::kFirstRuleId];
                by_pattern += !rule.pattern.empty();
                conditional += rule.conditions.count() > 0;
            }
            if (!(kernel_decide(policy, *automaton, unsorted, q) == want))
                ++unsorted_disagreements;
        }
    }
    CHECK(queries == 40000);
    // The queries reach the device rules by pattern and by number, and the test catches a
    // broken sort.
    CHECK(decided_by_devices > 5000);
    CHECK(by_pattern > 2000);
    CHECK(decided_by_devices - by_pattern > 2000);
    CHECK(conditional > 1000);
    CHECK(unsorted_disagreements > 500);
}

TEST_CASE("device rules: ioctl lists, `ioctl any`, and none without `ioctl`")
{
    const char* text = R"(policy "p" {
    default deny
    device allow read, write char 5:2 ioctl 0x80045430, 0x5410-0x541f
    device allow read, write char 1:3
    device allow read char 4:* ioctl any
})";
    CHECK(decide_text(text, ioctl_on(5, 2, 0x80045430)).decision == Decision::Allow);
    CHECK(decide_text(text, ioctl_on(5, 2, 0x5414)).decision == Decision::Allow);
    CHECK(decide_text(text, ioctl_on(5, 2, 0x5401)).decision == Decision::Deny);
    CHECK(decide_text(text, ioctl_on(1, 3, 0x5401)).decision == Decision::Deny);
    CHECK(decide_text(text, ioctl_on(4, 7, 0x5401)).decision == Decision::Allow);
}

TEST_CASE("device rules: a rule by number decides over the path rules; other devices keep them")
{
    const char* text = R"(policy "p" {
    default deny
    allow read, write /dev/**
    device allow read, write char 1:3
    device deny read char 1:5
})";
    auto q = read_of("/dev/zero", 1, 5);
    CHECK(decide_text(text, q).decision == Decision::Deny);
    q.access.access = Access::Write;
    CHECK(decide_text(text, q).decision == Decision::Allow);
}

TEST_CASE("device rules: a rule by pattern decides over rules by number and the path rules")
{
    const char* text = R"(policy "p" {
    default deny
    allow read /dev/dri/
    device allow read, write /dev/dri/renderD* ioctl 0x6400-0x64ff
    device deny all char 226:*
})";
    auto q = read_of("/dev/dri/renderD128", 226, 128);
    CHECK(decide_text(text, q).decision == Decision::Allow);
    q.access.access = Access::Write;
    CHECK(decide_text(text, q).decision == Decision::Allow);
    CHECK(decide_text(text, ioctl_on(226, 128, 0x6440)).decision == Decision::Deny); // not its path
    q.access.access = Access::Ioctl;
    q.ioctl_command = 0x6440;
    CHECK(decide_text(text, q).decision == Decision::Allow);
    q.ioctl_command = 0x5401;
    CHECK(decide_text(text, q).decision == Decision::Deny);
    CHECK(decide_text(text, read_of("/dev/dri/card0", 226, 0)).decision == Decision::Deny);
}

TEST_CASE("device rules: by number and by pattern they compile under both backends")
{
    const auto ok = test::compile_text(R"(policy "p" {
    default deny
    device allow read, write char 1:3 ioctl any
    device allow read /dev/dri/renderD*
})");
    REQUIRE(ok.compiled);
    const auto tables = run_backend_maps(ok.compiled->policy, ok.compiled->automaton).devices;
    REQUIRE(tables.rules.size() == 2);
    CHECK(tables.rules[0].pattern == 1); // by pattern, so first
    CHECK(tables.rules[1].pattern == 0);
    const auto hooks = run_backend_c(ok.compiled->policy, ok.compiled->automaton).hooks;
    CHECK(std::find(hooks.begin(), hooks.end(), "ioctl") != hooks.end());
}
