// The network stage against the reference evaluator: the kernel's reading of the tables
// (first matching endpoint rule, else the family's verdict) must give ir::evaluate_net's
// verdict and rule for every query.
#include "helpers.h"

#include "artifact/artifact.h"
#include "backend_c/backend_c.h"
#include "check/values.h"
#include "net/net.h"

#include <optional>

#include <catch2/catch.hpp>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>

using namespace bw;
using bw::ir::Decision;

namespace {

// What the conditions of a rule see of the process: bw_link_holds() in decide.bpf.h.
bool holds(const bw_link& l, const ir::PathQuery& p, std::uint32_t exe)
{
    return p.uid >= l.uid_lo && p.uid <= l.uid_hi && p.gid >= l.gid_lo && p.gid <= l.gid_hi && !l.owner &&
           l.open_flags == 0 && (exe & l.exe) == l.exe;
}

// What hooks/net.bpf.h (bw_net_verdict) does with the tables, in user space; `exe` is the
// process's `when exe` mask.
ir::Verdict kernel_decide(const NetTables& t, const std::vector<bw_net_rule>& rules, const ir::NetQuery& q,
                          std::uint32_t exe = 0)
{
    const auto& f = t.policy.families[q.family];
    const bool create = q.op == ir::NetQuery::Op::Create;
    __u32 addr[4];
    std::memcpy(addr, q.address.data(), sizeof addr);
    const __u8 op = create ? BW_NET_CREATE : q.op == ir::NetQuery::Op::Bind ? BW_NET_BIND : BW_NET_CONNECT;
    std::optional<ir::Verdict> decided;
    ir::RuleId enabled = 0;
    if (t.policy.conditional || !create) {
        for (const auto& r : rules) {
            const bool family = r.family == q.family || r.family == BW_NET_ANY_FAMILY;
            if (r.op == BW_NET_ENABLE) {
                if (create && enabled == 0 && family && holds(r.when, q.process, exe))
                    enabled = r.rule;
                continue;
            }
            bool match = r.op == BW_NET_FAMILY_RULE ? family
                                                    : r.family == q.family && r.protocol == q.protocol && r.op == op &&
                                                          q.port >= r.port_lo && q.port <= r.port_hi;
            for (int k = 0; k < 4 && match && r.op != BW_NET_FAMILY_RULE; ++k)
                match = (addr[k] & r.mask[k]) == r.addr[k];
            if (!match || !holds(r.when, q.process, exe) || decided)
                continue;
            decided = ir::Verdict{static_cast<Decision>(r.decision), r.rule};
            if (!create)
                break;
        }
    }
    auto v = decided.value_or(create ? ir::Verdict{static_cast<Decision>(f.create_decision), f.create_rule}
                                     : ir::Verdict{static_cast<Decision>(f.other_decision), f.other_rule});
    if (v.decision != Decision::Allow && enabled != 0)
        v = {Decision::Allow, enabled};
    return v;
}

// The tables of a policy (with the automaton that numbers its `when exe` patterns).
struct Compiled {
    Automaton automaton;
    NetTables tables;
};

Compiled compile_net(const ir::Policy& policy)
{
    SourceManager sources;
    Diagnostics diags(sources);
    auto automaton = run_compile_paths(policy, diags);
    REQUIRE(automaton);
    auto tables = run_net(policy, *automaton);
    return {std::move(*automaton), std::move(tables)};
}

constexpr int kFamilies[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET};

// A few overlapping addresses, so that prefixes nest and collide.
std::array<std::uint8_t, 16> random_address(std::mt19937& rng, int family)
{
    static constexpr std::uint8_t kFirst[] = {10, 127};
    static constexpr std::uint8_t kLast[] = {1, 2, 129};
    std::array<std::uint8_t, 16> a{};
    const std::size_t n = family == AF_INET ? 4 : 16;
    a[0] = kFirst[rng() % std::size(kFirst)];
    a[n - 1] = kLast[rng() % std::size(kLast)];
    return a;
}

std::uint16_t random_port(std::mt19937& rng)
{
    static constexpr std::uint16_t kPorts[] = {0, 53, 80, 8080, 65535};
    return kPorts[rng() % std::size(kPorts)];
}

constexpr const char* kExes[] = {"/usr/bin/curl", "/usr/bin/wget", "/usr/bin/python3.11"};

// Conditions on a third of the rules of a conditional policy: uid, gid and exe, which the
// kernel checks, and owner and flags, which a socket never has.
ir::Conditions random_conditions(std::mt19937& rng)
{
    ir::Conditions c;
    if (rng() % 3 != 0)
        return c;
    switch (rng() % 6) {
    case 0:
        c.uid = ir::IdRange{1000, 1999};
        break;
    case 1:
        c.gid = ir::IdRange{100, 100};
        break;
    case 2:
        c.exe = {"/usr/bin/curl"};
        break;
    case 3:
        c.exe = {"/usr/bin/*"};
        c.uid = ir::IdRange{0, 0};
        break;
    case 4:
        c.owner = true;
        break;
    default:
        c.open_flags = 02000; // O_APPEND
        break;
    }
    return c;
}

ir::NetRule random_rule(std::mt19937& rng, bool conditional)
{
    ir::NetRule r;
    if (conditional)
        r.conditions = random_conditions(rng);
    r.decision = rng() % 2 ? Decision::Allow : Decision::Deny;
    const auto kind = rng() % 6;
    if (kind == 0) {
        r.kind = ir::NetRule::Kind::All;
    } else if (kind == 1) {
        r.kind = ir::NetRule::Kind::Family;
        r.family = kFamilies[rng() % std::size(kFamilies)];
    } else {
        r.kind = ir::NetRule::Kind::Endpoint;
        r.protocol = rng() % 2 ? IPPROTO_TCP : IPPROTO_UDP;
        r.bind = rng() % 3 == 0;
        auto& e = r.endpoint;
        e.family = rng() % 2 ? AF_INET : AF_INET6;
        e.address = random_address(rng, e.family);
        const int bits = e.family == AF_INET ? 32 : 128;
        static constexpr int kPrefixes[] = {0, 8, 25, 32, 120, 128};
        e.prefix = static_cast<std::uint8_t>(std::min(bits, kPrefixes[rng() % std::size(kPrefixes)]));
        const auto a = random_port(rng);
        const auto b = rng() % 2 ? a : random_port(rng);
        e.port_lo = std::min(a, b);
        e.port_hi = std::max(a, b);
    }
    return r;
}

ir::Policy random_net_policy(std::mt19937& rng, bool conditional)
{
    ir::Policy p;
    p.net_default = {rng() % 2 ? Decision::Allow : Decision::Deny, ir::kNetDefaultRuleId, {}};
    const auto n = rng() % 20;
    for (std::uint32_t i = 0; i < n; ++i) {
        auto r = random_rule(rng, conditional);
        r.id = ir::kFirstRuleId + i;
        p.net.push_back(r);
    }
    return p;
}

// Half the queries aim at one of the policy's endpoints, so that rules overlap on them.
ir::NetQuery random_query(std::mt19937& rng, const ir::Policy& policy)
{
    ir::NetQuery q;
    const auto& target = policy.net.empty() ? ir::NetRule{} : policy.net[rng() % policy.net.size()];
    if (target.kind == ir::NetRule::Kind::Endpoint && rng() % 2) {
        q.op = target.bind ? ir::NetQuery::Op::Bind : ir::NetQuery::Op::Connect;
        q.family = target.endpoint.family;
        q.protocol = target.protocol;
        q.address = target.endpoint.address;
        q.address[q.family == AF_INET ? 3 : 15] ^= static_cast<std::uint8_t>(rng() % 2);
        q.port = rng() % 2 ? target.endpoint.port_lo : target.endpoint.port_hi;
        return q;
    }
    const auto op = rng() % 3;
    q.op = op == 0 ? ir::NetQuery::Op::Create : op == 1 ? ir::NetQuery::Op::Connect : ir::NetQuery::Op::Bind;
    q.family = q.op == ir::NetQuery::Op::Create ? kFamilies[rng() % std::size(kFamilies)]
                                                 : (rng() % 2 ? AF_INET : AF_INET6);
    q.protocol = rng() % 2 ? IPPROTO_TCP : IPPROTO_UDP;
    q.address = random_address(rng, q.family);
    q.port = random_port(rng);
    return q;
}

void random_process(std::mt19937& rng, ir::NetQuery& q)
{
    q.process.uid = rng() % 2 ? 0 : 1000 + static_cast<std::uint32_t>(rng() % 2) * 1000;
    q.process.gid = rng() % 2 ? 100 : 0;
    q.process.exe = kExes[rng() % std::size(kExes)];
}

// The endpoint rules in the policy's order rather than by precedence.
std::vector<bw_net_rule> in_policy_order(const NetTables& t)
{
    auto rules = t.rules;
    std::stable_sort(rules.begin(), rules.end(), [](const bw_net_rule& a, const bw_net_rule& b) { return a.rule < b.rule; });
    return rules;
}

} // namespace

TEST_CASE("network tables: the kernel's first match agrees with ir::evaluate_net, verdict and rule")
{
    std::mt19937 rng(20240611);
    int queries = 0;
    int unsorted_disagreements = 0;
    for (int i = 0; i < 2000; ++i) {
        const auto policy = random_net_policy(rng, false);
        const auto compiled = compile_net(policy);
        const auto& tables = compiled.tables;
        REQUIRE(tables.policy.conditional == 0);
        const auto unsorted = in_policy_order(tables);
        for (int j = 0; j < 20; ++j) {
            const auto q = random_query(rng, policy);
            const auto want = ir::evaluate_net(policy, q);
            const auto got = kernel_decide(tables, tables.rules, q);
            INFO("policy " << i << ", query " << j << ": op " << static_cast<int>(q.op) << " family " << q.family
                           << " port " << q.port);
            REQUIRE(got.decision == want.decision);
            REQUIRE(got.rule == want.rule);
            ++queries;
            if (!(kernel_decide(tables, unsorted, q) == want))
                ++unsorted_disagreements;
        }
    }
    CHECK(queries == 40000);
    // The test has the power to catch a broken sort: unsorted rules disagree often.
    CHECK(unsorted_disagreements > 500);
}

TEST_CASE("network tables with conditions: the kernel's scan agrees with ir::evaluate_net, verdict and rule")
{
    std::mt19937 rng(20261205);
    int queries = 0, conditional_policies = 0, decided_by_condition = 0, enabled_creates = 0, unsorted_disagreements = 0;
    for (int i = 0; i < 2000; ++i) {
        const auto policy = random_net_policy(rng, true);
        const auto compiled = compile_net(policy);
        const auto& tables = compiled.tables;
        conditional_policies += tables.policy.conditional;
        const auto unsorted = in_policy_order(tables);
        for (int j = 0; j < 20; ++j) {
            auto q = random_query(rng, policy);
            random_process(rng, q);
            const auto exe = simulate_walk(compiled.automaton, q.process.exe).exe;
            const auto want = ir::evaluate_net(policy, q);
            const auto got = kernel_decide(tables, tables.rules, q, exe);
            INFO("policy " << i << ", query " << j << ": op " << static_cast<int>(q.op) << " family " << q.family
                           << " port " << q.port << " uid " << q.process.uid << " exe " << q.process.exe);
            REQUIRE(got.decision == want.decision);
            REQUIRE(got.rule == want.rule);
            ++queries;
            const auto decider = std::find_if(policy.net.begin(), policy.net.end(),
                                              [&](const ir::NetRule& r) { return r.id == want.rule; });
            if (decider != policy.net.end() && decider->conditions.count() > 0)
                ++decided_by_condition;
            if (q.op == ir::NetQuery::Op::Create && decider != policy.net.end() &&
                decider->kind == ir::NetRule::Kind::Endpoint)
                ++enabled_creates;
            if (!(kernel_decide(tables, unsorted, q, exe) == want))
                ++unsorted_disagreements;
        }
    }
    CHECK(queries == 40000);
    // Not vacuous: most policies are conditional, and conditions and enabling endpoints decide often.
    CHECK(conditional_policies > 1500);
    CHECK(decided_by_condition > 2000);
    CHECK(enabled_creates > 300);
    CHECK(unsorted_disagreements > 500);
}

TEST_CASE("network tables: families, the enabling endpoint and the sort, on an example")
{
    const auto p = test::checked_policy(R"(policy "p" {
    default deny
    net deny all
    net allow family unix
    net allow tcp connect 127.0.0.0/8:8000-8999
    net deny tcp connect 127.0.0.0/8:8080
    net allow tcp connect 127.0.0.2:8080
})");
    const auto t = compile_net(p).tables;
    const auto& unix_ = t.policy.families[AF_UNIX];
    const auto& inet = t.policy.families[AF_INET];
    const auto& inet6 = t.policy.families[AF_INET6];
    CHECK(unix_.create_decision == BW_DECISION_ALLOW);
    CHECK(inet.create_decision == BW_DECISION_ALLOW); // enabled by an allowed endpoint
    CHECK(inet.other_decision == BW_DECISION_DENY);   // but a connect elsewhere is `all`'s
    CHECK(inet6.create_decision == BW_DECISION_DENY);
    CHECK(inet.other_rule == inet6.create_rule);
    REQUIRE(t.rules.size() == 3);
    CHECK(t.policy.nrules == 3);
    // /32 first, then the /8 single port, then the /8 range.
    CHECK(t.rules[0].mask[0] == 0xffffffffu);
    CHECK(t.rules[0].decision == BW_DECISION_ALLOW);
    CHECK(t.rules[1].decision == BW_DECISION_DENY);
    CHECK(t.rules[1].port_lo == 8080);
    CHECK(t.rules[2].port_hi == 8999);
    CHECK(t.can_deny());
}

TEST_CASE("network tables: a policy that allows every socket denies nothing")
{
    const auto open = test::checked_policy(R"(policy "p" {
    default deny
    net default allow
    net allow tcp connect 127.0.0.1:80
})");
    CHECK_FALSE(compile_net(open).tables.can_deny());
    const auto closed = test::checked_policy(R"(policy "p" {
    default deny
})");
    // The net default follows the file default: every socket is denied.
    CHECK(compile_net(closed).tables.can_deny());
}

TEST_CASE("network: the specialised program has socket hooks only when its policy can deny a socket")
{
    auto hooks_of = [](const char* text) {
        const auto result = test::compile_text(text);
        REQUIRE(result.compiled);
        return run_backend_c(result.compiled->policy, result.compiled->automaton).hooks;
    };
    const auto deny = hooks_of(R"(policy "p" {
    default allow
    net deny tcp connect any:25
})");
    CHECK(std::find(deny.begin(), deny.end(), "socket_connect") != deny.end());
    CHECK(std::find(deny.begin(), deny.end(), "socket_create") != deny.end());
    const auto allow = hooks_of(R"(policy "p" {
    default allow
})");
    CHECK(std::find(allow.begin(), allow.end(), "socket_connect") == allow.end());
}

TEST_CASE("network: rules with conditions compile, and decide as the evaluator says")
{
    const auto result = test::compile_text(R"(policy "p" {
    default deny
    net deny all
    net allow udp connect 10.0.0.0/8:53
    when uid 1000 {
        net deny udp connect 10.0.0.0/8:53
    }
    when exe /usr/bin/curl {
        net allow tcp connect 0.0.0.0/0:443
    }
})");
    REQUIRE(result.compiled);
    const auto& policy = result.compiled->policy;
    const auto& automaton = result.compiled->automaton;
    const auto tables = run_net(policy, automaton);
    CHECK(tables.policy.conditional == 1);
    auto dns = [](std::uint32_t uid, const char* exe) {
        ir::NetQuery q;
        q.op = ir::NetQuery::Op::Connect;
        q.family = AF_INET;
        q.protocol = IPPROTO_UDP;
        q.address = {10, 0, 0, 1};
        q.port = 53;
        q.process.uid = uid;
        q.process.exe = exe;
        return q;
    };
    auto decide = [&](ir::NetQuery q) {
        const auto got = kernel_decide(tables, tables.rules, q, simulate_walk(automaton, q.process.exe).exe);
        CHECK(got == ir::evaluate_net(policy, q));
        return got.decision;
    };
    CHECK(decide(dns(0, "/usr/bin/dig")) == Decision::Allow);
    CHECK(decide(dns(1000, "/usr/bin/dig")) == Decision::Deny);
    auto https = dns(0, "/usr/bin/curl");
    https.protocol = IPPROTO_TCP;
    https.port = 443;
    CHECK(decide(https) == Decision::Allow);
    https.process.exe = "/usr/bin/wget";
    CHECK(decide(https) == Decision::Deny);
    // curl may create inet sockets (an allowed endpoint of the family), wget may not.
    ir::NetQuery create;
    create.family = AF_INET;
    create.process.exe = "/usr/bin/wget";
    CHECK(decide(create) == Decision::Allow); // the unconditional udp endpoint enables it
}

TEST_CASE("network tables survive the artifact")
{
    // Unconditional (endpoint rules only), and conditional (every rule, in the scan).
    const char* sources[] = {R"(policy "p" {
    default deny
    net allow family unix
    net allow tcp connect [::1]:8080, 127.0.0.1:8080
    net deny tcp bind any:1-1023
})",
                             R"(policy "p" {
    default deny
    net allow family unix
    when uid 1000 {
        net allow tcp connect [::1]:8080, 127.0.0.1:8080
    }
    net deny tcp bind any:1-1023
})"};
    for (const char* text : sources) {
        test::TempDir dir;
        const auto src = dir.write("net.bwp", text);
        Compilation c;
        std::string dump;
        const auto compiled = run_pipeline(src, c, test::test_options(), dump);
        REQUIRE(compiled);
        const auto out = (dir.path() / "net.o").string();
        REQUIRE(run_write_artifact(*compiled, out, c));
        const auto read = artifact::read(out);
        REQUIRE(std::holds_alternative<artifact::Artifact>(read));
        const auto& net = std::get<artifact::Artifact>(read).policy.tables.net;
        const auto want = run_net(compiled->policy, compiled->automaton);
        REQUIRE(net.rules.size() == want.rules.size());
        CHECK(net.rules.size() >= 4);
        CHECK(std::memcmp(&net.policy, &want.policy, sizeof want.policy) == 0);
        CHECK(std::memcmp(net.rules.data(), want.rules.data(), sizeof(bw_net_rule) * want.rules.size()) == 0);
    }
}

TEST_CASE("network: every family name bwc accepts is the name denials and dumps print")
{
    for (const auto& name : socket_family_names()) {
        const auto family = socket_family(name);
        REQUIRE(family);
        CHECK(family_name(*family) == name);
    }
    CHECK(family_name(63) == "family 63");
}

TEST_CASE("network: endpoints print as people write them")
{
    __u32 v4[4] = {htonl(0x0a000001), 0, 0, 0};
    CHECK(endpoint_text(AF_INET, v4, 443) == "10.0.0.1:443");
    __u32 v6[4] = {0, 0, 0, htonl(1)};
    CHECK(endpoint_text(AF_INET6, v6, 8080) == "[::1]:8080");
}
