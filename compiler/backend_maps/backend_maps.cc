#include "backend_maps/backend_maps.h"

#include <algorithm>
#include <fmt/format.h>

namespace bw {

MapTables run_backend_maps(const ir::Policy& policy, const Automaton& automaton)
{
    MapTables t;
    t.sandbox.nclasses = automaton.nclasses;
    t.sandbox.nstates = automaton.nstates;
    t.sandbox.default_decision = static_cast<std::uint32_t>(policy.path_default.decision);
    t.sandbox.default_rule = policy.path_default.id;
    std::copy(automaton.classes.begin(), automaton.classes.end(), t.sandbox.classes);
    t.trans.reserve(automaton.trans.size());
    for (const auto next : automaton.trans)
        t.trans.push_back(automaton.accepts[next].absorbing ? next | BW_ABSORBING : next);
    t.accepts.reserve(automaton.accepts.size());
    for (const auto& a : automaton.accepts) {
        bw_accept out{};
        std::copy(a.rule.begin(), a.rule.end(), out.rule);
        std::copy(a.decision.begin(), a.decision.end(), out.decision);
        t.accepts.push_back(out);
    }
    return t;
}

std::string dump(const MapTables& t)
{
    return fmt::format("map bw_sandboxes: 1 entry (nclasses={}, nstates={}, default={} rule #{})\n"
                       "map bw_trans:     {} entries of 4 bytes\n"
                       "map bw_accepts:   {} entries of {} bytes\n",
                       t.sandbox.nclasses, t.sandbox.nstates,
                       t.sandbox.default_decision == BW_DECISION_ALLOW ? "allow" : "deny",
                       t.sandbox.default_rule, t.trans.size(), t.accepts.size(), sizeof(bw_accept));
}

} // namespace bw
