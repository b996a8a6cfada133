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

// The evaluator's precedence among endpoint rules (ir::evaluate_net's rank, whose kind and
// condition count are the same for all of them here).
auto rank(const ir::NetRule& r)
{
    return std::tuple{r.endpoint.prefix, -(r.endpoint.port_hi - r.endpoint.port_lo), r.decision == ir::Decision::Deny};
}

bw_net_rule lower_rule(const ir::NetRule& r)
{
    std::array<std::uint8_t, 16> mask{};
    for (std::size_t bit = 0; bit < r.endpoint.prefix && bit < 128; ++bit)
        mask[bit / 8] |= static_cast<std::uint8_t>(0x80u >> (bit % 8));
    std::array<std::uint8_t, 16> addr{};
    for (std::size_t i = 0; i < addr.size(); ++i)
        addr[i] = r.endpoint.address[i] & mask[i];

    bw_net_rule out{};
    std::memcpy(out.addr, addr.data(), sizeof out.addr);
    std::memcpy(out.mask, mask.data(), sizeof out.mask);
    out.port_lo = r.endpoint.port_lo;
    out.port_hi = r.endpoint.port_hi;
    out.family = static_cast<__u16>(r.endpoint.family);
    out.protocol = static_cast<__u8>(r.protocol);
    out.op = r.bind ? BW_NET_BIND : BW_NET_CONNECT;
    out.decision = static_cast<__u32>(r.decision);
    out.rule = r.id;
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
    return std::any_of(std::begin(policy.families), std::end(policy.families), denies) ||
           std::any_of(rules.begin(), rules.end(), [](const bw_net_rule& r) { return r.decision != BW_DECISION_ALLOW; });
}

NetTables run_net(const ir::Policy& policy)
{
    std::vector<const ir::NetRule*> endpoints;
    for (const auto& r : policy.net) {
        if (r.kind == ir::NetRule::Kind::Endpoint)
            endpoints.push_back(&r);
    }
    std::stable_sort(endpoints.begin(), endpoints.end(),
                     [](const ir::NetRule* a, const ir::NetRule* b) { return rank(*a) > rank(*b); });

    NetTables t;
    for (const auto* r : endpoints)
        t.rules.push_back(lower_rule(*r));
    t.policy.nrules = static_cast<__u32>(t.rules.size());
    for (int f = 0; f < BW_NET_FAMILIES; ++f)
        t.policy.families[f] = family_verdicts(policy, f);
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
    std::string out = fmt::format("map bw_net_rules: {} endpoint rules, most specific first (first match decides)\n",
                                  t.rules.size());
    for (const auto& r : t.rules) {
        const auto prefix = static_cast<unsigned>(
            __builtin_popcount(r.mask[0]) + __builtin_popcount(r.mask[1]) + __builtin_popcount(r.mask[2]) +
            __builtin_popcount(r.mask[3]));
        std::string ports = r.port_lo == r.port_hi ? fmt::format("{}", r.port_lo)
                                                   : fmt::format("{}-{}", r.port_lo, r.port_hi);
        char text[INET6_ADDRSTRLEN] = "?";
        inet_ntop(r.family, r.addr, text, sizeof text);
        out += fmt::format("  {} {} {} {}/{} port {}  rule #{}\n", decision_name(r.decision), protocol_name(r.protocol),
                           r.op == BW_NET_BIND ? "bind" : "connect", text, prefix, ports, r.rule);
    }
    out += "map bw_net: per family, create | connect/bind that no endpoint rule matches\n";
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
