#include "net/net.h"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <cstring>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <tuple>

namespace bw {

namespace {

// The names bwc accepts (compiler/check/values.cc); a unit test keeps the two in step.
struct FamilyName {
    int family;
    std::string_view name;
};
constexpr std::array kFamilyNames = {
    FamilyName{AF_UNIX, "unix"},           FamilyName{AF_INET, "inet"},       FamilyName{AF_INET6, "inet6"},
    FamilyName{AF_NETLINK, "netlink"},     FamilyName{AF_PACKET, "packet"},   FamilyName{AF_BLUETOOTH, "bluetooth"},
    FamilyName{AF_VSOCK, "vsock"},         FamilyName{AF_CAN, "can"},         FamilyName{AF_ALG, "alg"},
    FamilyName{44, "xdp"},                 FamilyName{AF_KEY, "key"},         FamilyName{AF_TIPC, "tipc"},
    FamilyName{AF_RDS, "rds"},             FamilyName{AF_X25, "x25"},         FamilyName{AF_AX25, "ax25"},
    FamilyName{AF_APPLETALK, "appletalk"}, FamilyName{AF_LLC, "llc"},         FamilyName{AF_IB, "ib"},
    FamilyName{AF_MPLS, "mpls"},           FamilyName{AF_SMC, "smc"},         FamilyName{AF_QIPCRTR, "qipcrtr"},
    FamilyName{AF_NFC, "nfc"},             FamilyName{AF_RXRPC, "rxrpc"},     FamilyName{AF_PHONET, "phonet"},
    FamilyName{AF_IEEE802154, "ieee802154"}, FamilyName{AF_CAIF, "caif"},     FamilyName{AF_KCM, "kcm"},
    FamilyName{AF_PPPOX, "pppox"},         FamilyName{AF_NETROM, "netrom"},   FamilyName{AF_ROSE, "rose"},
    FamilyName{45, "mctp"},
};

// ir::evaluate_net's precedence, strongest first; sorted stably, equals keep the policy's order.
auto rank(const ir::NetRule& r)
{
    const bool endpoint = r.kind == ir::NetRule::Kind::Endpoint;
    return std::tuple{static_cast<int>(r.kind), endpoint ? r.endpoint.prefix : 0,
                      endpoint ? -(r.endpoint.port_hi - r.endpoint.port_lo) : 0, r.conditions.count(),
                      r.decision == ir::Decision::Deny};
}

bw_net_rule lower_rule(const ir::NetRule& r, const Automaton& automaton)
{
    bw_net_rule out{};
    out.decision = static_cast<__u32>(r.decision);
    out.rule = r.id;
    out.when = condition_link(automaton, r.conditions);
    if (r.kind != ir::NetRule::Kind::Endpoint) {
        out.op = BW_NET_FAMILY_RULE;
        out.family = r.kind == ir::NetRule::Kind::All ? BW_NET_ANY_FAMILY : static_cast<__u16>(r.family);
        return out;
    }
    std::array<std::uint8_t, 16> mask{};
    for (std::size_t bit = 0; bit < r.endpoint.prefix && bit < 128; ++bit)
        mask[bit / 8] |= static_cast<std::uint8_t>(0x80u >> (bit % 8));
    std::array<std::uint8_t, 16> addr{};
    for (std::size_t i = 0; i < addr.size(); ++i)
        addr[i] = r.endpoint.address[i] & mask[i];

    std::memcpy(out.addr, addr.data(), sizeof out.addr);
    std::memcpy(out.mask, mask.data(), sizeof out.mask);
    out.port_lo = r.endpoint.port_lo;
    out.port_hi = r.endpoint.port_hi;
    out.family = static_cast<__u16>(r.endpoint.family);
    out.protocol = static_cast<__u8>(r.protocol);
    out.op = r.bind ? BW_NET_BIND : BW_NET_CONNECT;
    return out;
}

// An allowed endpoint as what lets a conditional policy create its family's sockets.
bw_net_rule enabling_rule(const ir::NetRule& r, const Automaton& automaton)
{
    bw_net_rule out{};
    out.op = BW_NET_ENABLE;
    out.family = static_cast<__u16>(r.endpoint.family);
    out.decision = BW_DECISION_ALLOW;
    out.rule = r.id;
    out.when = condition_link(automaton, r.conditions);
    return out;
}

bw_net_family family_verdicts(const ir::Policy& policy, int family)
{
    ir::NetQuery create;
    create.op = ir::NetQuery::Op::Create;
    create.family = family;
    // Protocol 0 matches no endpoint rule (they are all tcp or udp): what decides a
    // connect or bind that no endpoint rule matches.
    ir::NetQuery other;
    other.op = ir::NetQuery::Op::Connect;
    other.family = family;
    other.protocol = 0;
    const auto c = ir::evaluate_net(policy, create);
    const auto o = ir::evaluate_net(policy, other);

    bw_net_family out{};
    out.create_rule = c.rule;
    out.create_decision = static_cast<__u8>(c.decision);
    out.other_rule = o.rule;
    out.other_decision = static_cast<__u8>(o.decision);
    return out;
}

const char* decision_name(unsigned decision)
{
    return decision == BW_DECISION_ALLOW ? "allow" : "deny";
}

} // namespace

bool NetTables::can_deny() const
{
    const auto denies = [](const bw_net_family& f) {
        return f.create_decision != BW_DECISION_ALLOW || f.other_decision != BW_DECISION_ALLOW;
    };
    return policy.record != 0 || std::any_of(std::begin(policy.families), std::end(policy.families), denies) ||
           std::any_of(rules.begin(), rules.end(), [](const bw_net_rule& r) { return r.decision != BW_DECISION_ALLOW; });
}

NetTables run_net(const ir::Policy& policy, const Automaton& automaton)
{
    const bool conditional =
        std::any_of(policy.net.begin(), policy.net.end(), [](const ir::NetRule& r) { return r.conditions.count() > 0; });
    // Unconditional: the endpoint rules, and each family's verdicts computed once. Conditional:
    // every rule, and the allowed endpoints that enable a create after them.
    std::vector<const ir::NetRule*> sorted;
    for (const auto& r : policy.net) {
        if (conditional || r.kind == ir::NetRule::Kind::Endpoint)
            sorted.push_back(&r);
    }
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const ir::NetRule* a, const ir::NetRule* b) { return rank(*a) > rank(*b); });

    NetTables t;
    for (const auto* r : sorted)
        t.rules.push_back(lower_rule(*r, automaton));
    if (conditional) {
        for (const auto& r : policy.net) {
            if (r.kind == ir::NetRule::Kind::Endpoint && r.decision == ir::Decision::Allow)
                t.rules.push_back(enabling_rule(r, automaton));
        }
    }
    t.policy.nrules = static_cast<__u32>(t.rules.size());
    t.policy.conditional = conditional ? 1 : 0;
    t.policy.record = policy.record_net ? 1 : 0;
    // What no rule decides: the default, when every rule is in the scan.
    ir::Policy defaults_only;
    defaults_only.net_default = policy.net_default;
    for (int f = 0; f < BW_NET_FAMILIES; ++f)
        t.policy.families[f] = family_verdicts(conditional ? defaults_only : policy, f);
    return t;
}

std::string family_name(int family)
{
    for (const auto& n : kFamilyNames) {
        if (n.family == family)
            return std::string(n.name);
    }
    return fmt::format("family {}", family);
}

int endpoint_protocol(int type, int protocol)
{
    if (type == SOCK_STREAM && protocol == IPPROTO_TCP)
        return IPPROTO_TCP;
    if (type == SOCK_DGRAM && protocol == IPPROTO_UDP)
        return IPPROTO_UDP;
    return 0;
}

std::string protocol_name(int protocol)
{
    if (protocol == IPPROTO_TCP)
        return "tcp";
    if (protocol == IPPROTO_UDP)
        return "udp";
    return fmt::format("protocol {}", protocol);
}

std::string endpoint_text(int family, const __u32 addr[4], unsigned port)
{
    char text[INET6_ADDRSTRLEN] = "?";
    inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, addr, text, sizeof text);
    return family == AF_INET6 ? fmt::format("[{}]:{}", text, port) : fmt::format("{}:{}", text, port);
}

std::string dump(const NetTables& t)
{
    std::string out = fmt::format("map bw_net_rules: {} rules, most specific first (first match decides)\n",
                                  t.rules.size());
    for (const auto& r : t.rules) {
        if (r.op == BW_NET_FAMILY_RULE || r.op == BW_NET_ENABLE) {
            out += fmt::format("  {} {} {}  rule #{}{}\n", decision_name(r.decision),
                               r.op == BW_NET_ENABLE ? "create (an allowed endpoint of)" : "family",
                               r.family == BW_NET_ANY_FAMILY ? std::string("all") : family_name(r.family), r.rule,
                               condition_text(r.when));
            continue;
        }
        const auto prefix = static_cast<unsigned>(
            __builtin_popcount(r.mask[0]) + __builtin_popcount(r.mask[1]) + __builtin_popcount(r.mask[2]) +
            __builtin_popcount(r.mask[3]));
        std::string ports = r.port_lo == r.port_hi ? fmt::format("{}", r.port_lo)
                                                   : fmt::format("{}-{}", r.port_lo, r.port_hi);
        char text[INET6_ADDRSTRLEN] = "?";
        inet_ntop(r.family, r.addr, text, sizeof text);
        out += fmt::format("  {} {} {} {}/{} port {}  rule #{}{}\n", decision_name(r.decision),
                           protocol_name(r.protocol), r.op == BW_NET_BIND ? "bind" : "connect", text, prefix, ports,
                           r.rule, condition_text(r.when));
    }
    out += t.policy.conditional ? "map bw_net: conditional; per family, what no rule decides\n"
                                : "map bw_net: per family, create | connect/bind that no endpoint rule matches\n";
    if (t.policy.record)
        out += "  every socket operation allowed is recorded (learn mode)\n";
    // Families that share their verdicts with the most common pair are listed as "others".
    const auto same = [](const bw_net_family& a, const bw_net_family& b) {
        return std::memcmp(&a, &b, sizeof a) == 0;
    };
    const auto& families = t.policy.families;
    const auto* common = std::max_element(std::begin(families), std::end(families), [&](const auto& a, const auto& b) {
        return std::count_if(std::begin(families), std::end(families), [&](const auto& f) { return same(f, a); }) <
               std::count_if(std::begin(families), std::end(families), [&](const auto& f) { return same(f, b); });
    });
    const auto line = [](const std::string& name, const bw_net_family& f) {
        return fmt::format("  {:<12} create {} rule #{} | other {} rule #{}\n", name, decision_name(f.create_decision),
                           f.create_rule, decision_name(f.other_decision), f.other_rule);
    };
    for (int f = 0; f < BW_NET_FAMILIES; ++f) {
        if (!same(families[f], *common))
            out += line(family_name(f), families[f]);
    }
    return out + line("others", *common);
}

} // namespace bw
