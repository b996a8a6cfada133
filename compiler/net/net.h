// The network stage: a policy's net rules as the kernel's tables (structs from
// bpf-templates/bumblewrap.h), read by bpf-templates/hooks/net.bpf.h under both backends.
//
// Creating a socket, and a connect or bind that no endpoint rule matches, are decided by a
// verdict per address family, computed with ir::evaluate_net itself. The endpoint rules
// are sorted by the evaluator's precedence (longer prefix, then narrower ports, then deny;
// the policy's order among equals), so the first rule the kernel finds that matches is the
// one the evaluator picks. A policy with conditions on a net rule is scanned whole instead
// (struct bw_net_policy): the family and `all` rules follow the endpoint rules, each with
// its conditions as a bw_link, then the allowed endpoints that enable a create.
#pragma once

#include "automata/automata.h"
#include "bumblewrap.h"
#include "ir/ir.h"

#include <string>
#include <string_view>
#include <vector>

namespace bw {

struct NetTables {
    bw_net_policy policy{};
    std::vector<bw_net_rule> rules; // policy.nrules of them, first match decides

    // Whether the tables deny anything; a specialised program without net hooks otherwise.
    bool can_deny() const;
};

// The automaton numbers the `when exe` patterns of the rules' conditions.
NetTables run_net(const ir::Policy& policy, const Automaton& automaton);

// The language's name of an address family ("inet6"), or its number as text.
std::string family_name(int family);

// The protocol's name in rules ("tcp", "udp"), or its number as text.
std::string protocol_name(int protocol);

// The protocol endpoint rules see in a socket of this type and protocol: IPPROTO_TCP for
// TCP over SOCK_STREAM, IPPROTO_UDP for UDP over SOCK_DGRAM, else 0 (its family rules
// decide), as hooks/net.bpf.h's bw_net_rule_protocol does.
int endpoint_protocol(int type, int protocol);

// An address and port as people write them: 10.0.0.1:443, [::1]:8080.
std::string endpoint_text(int family, const __u32 addr[4], unsigned port);

std::string dump(const NetTables& tables); // part of --emit=maps and `bwc inspect`

} // namespace bw
