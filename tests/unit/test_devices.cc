// The devices stage against the reference evaluator: the kernel's reading of the device
// table (first matching rule, else the path rules) must give ir::evaluate_device's verdict
// and rule for every query, ioctl commands included.
#include "helpers.h"

#include "artifact/artifact.h"
#include "backend_c/backend_c.h"
#include "devices/devices.h"

#include <catch2/catch.hpp>
#include <random>

using namespace bw;
using bw::ir::Access;
using bw::ir::Decision;

namespace {

// What hooks/devices.bpf.h decides, then the path rules when no device rule does.
ir::Verdict kernel_decide(const ir::Policy& policy, const DeviceTables& tables, const ir::DeviceQuery& q)
{
    const auto v = decide(tables, {q.type, q.major, q.minor, q.access.access, q.ioctl_command});
    return v ? *v : ir::evaluate(policy, q.access);
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
    r.type = rng() % 4 ? 'c' : 'b';
    r.major = rng() % 4 ? random_range(rng) : ir::IdRange{0, 0xfff};
    r.minor = rng() % 4 ? random_range(rng) : ir::IdRange{0, 0xfffff};
    r.accesses = static_cast<ir::AccessMask>(rng() % (1u << ir::kAccessKinds));
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
    q.access.path = "/dev/node";
    q.type = rng() % 4 ? 'c' : 'b';
    q.major = static_cast<std::uint32_t>(rng() % 10);
    q.minor = static_cast<std::uint32_t>(rng() % 10);
    q.ioctl_command = static_cast<std::uint32_t>(0x5400 + rng() % 12);
    return q;
}

ir::Verdict decide_text(const char* text, ir::DeviceQuery q)
{
    const auto result = test::compile_text(text);
    REQUIRE(result.compiled);
    const auto& policy = result.compiled->policy;
    const auto tables = run_devices(policy);
    const auto got = kernel_decide(policy, tables, q);
    CHECK(got == ir::evaluate_device(policy, q));
    return got;
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
    int queries = 0, decided_by_devices = 0, unsorted_disagreements = 0;
    for (int i = 0; i < 2000; ++i) {
        const auto policy = random_device_policy(rng);
        const auto tables = run_devices(policy);
        // The same rules in the policy's order, which ignores precedence.
        DeviceTables unsorted;
        for (const auto& r : policy.devices) {
            ir::Policy one;
            one.devices = {r};
            unsorted.rules.push_back(run_devices(one).rules.front());
        }
        for (int j = 0; j < 20; ++j) {
            const auto q = random_query(rng);
            const auto want = ir::evaluate_device(policy, q);
            const auto got = kernel_decide(policy, tables, q);
            INFO("policy " << i << ", query " << j << ": " << q.type << " " << q.major << ":" << q.minor
                           << " access " << static_cast<int>(q.access.access) << " ioctl " << q.ioctl_command);
            REQUIRE(got == want);
            ++queries;
            if (want.rule != ir::kDefaultRuleId)
                ++decided_by_devices;
            if (!(kernel_decide(policy, unsorted, q) == want))
                ++unsorted_disagreements;
        }
    }
    CHECK(queries == 40000);
    // The queries reach the device rules, and the test catches a broken sort.
    CHECK(decided_by_devices > 5000);
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
    ir::DeviceQuery q;
    q.access.path = "/dev/zero";
    q.major = 1;
    q.minor = 5;
    CHECK(decide_text(text, q).decision == Decision::Deny);
    q.access.access = Access::Write;
    CHECK(decide_text(text, q).decision == Decision::Allow);
}

TEST_CASE("device rules: by number they compile under both backends; by pattern they are refused")
{
    const auto ok = test::compile_text(R"(policy "p" {
    default deny
    device allow read, write char 1:3 ioctl any
})");
    REQUIRE(ok.compiled);
    CHECK(run_backend_maps(ok.compiled->policy, ok.compiled->automaton).devices.rules.size() == 1);
    const auto hooks = run_backend_c(ok.compiled->policy, ok.compiled->automaton).hooks;
    CHECK(std::find(hooks.begin(), hooks.end(), "ioctl") != hooks.end());
    const auto refused = test::compile_text(R"(policy "p" {
    default deny
    device allow read /dev/dri/renderD*
})");
    CHECK_FALSE(refused.compiled);
}
