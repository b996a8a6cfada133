#include "backend_maps/backend_maps.h"

#include <algorithm>
#include <fmt/format.h>

namespace bw {

MapTables run_backend_maps(const ir::Policy& policy, const Automaton& automaton)
{
    MapTables t;
    t.sandbox.nclasses = automaton.nclasses;
    t.sandbox.nstates = automaton.nstates;
    t.sandbox.default_decision = static_cast<std::uint32_t>(policy.default_decision);
    t.sandbox.default_rule = ir::kDefaultRuleId;
    std::copy(automaton.classes.begin(), automaton.classes.end(), t.sandbox.classes);
    t.trans = automaton.trans;
    t.accepts.reserve(automaton.accepts.size());
    for (const auto& a : automaton.accepts) {
        bw_accept out{};
        out.exact_rule = a.exact_rule;
        out.tree_rule = a.tree_rule;
        out.exact_decision = a.exact_decision;
        out.tree_decision = a.tree_decision;
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
