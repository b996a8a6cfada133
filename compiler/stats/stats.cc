#include "stats/stats.h"

#include <algorithm>
#include <fmt/format.h>

namespace bw::stats {

namespace {

// States the automaton has without rule `index`; rebuilt from scratch so that the number is
// exactly what the compiler would produce for that policy.
std::int64_t states_without(const ir::Policy& policy, std::size_t index)
{
    ir::Policy reduced = policy;
    reduced.rules.erase(reduced.rules.begin() + static_cast<std::ptrdiff_t>(index));
    SourceManager sources;
    Diagnostics diags(sources);
    const auto automaton = run_compile_paths(reduced, diags);
    return automaton ? automaton->nstates : 0;
}

// Wildcards multiply states (each `*` or `**` keeps alternatives alive), and long
// patterns add states one byte at a time: wildcards first, then length.
std::int64_t heuristic_score(const std::string& pattern)
{
    const auto spec = ir::specificity(pattern);
    return std::int64_t{-spec.fewer_wildcards} * (std::int64_t{1} << 32) + static_cast<std::int64_t>(pattern.size());
}

} // namespace

Stats compute(const ir::Policy& policy, const Automaton& automaton, const MapTables& tables,
              std::size_t max_removal_rules)
{
    Stats s;
    // Invariant rules are in every policy; the user can only change the others.
    s.path_rules = static_cast<std::size_t>(
        std::count_if(policy.rules.begin(), policy.rules.end(), [](const ir::PathRule& r) { return !r.invariant; }));
    s.audit_rules = policy.audits.size();
    s.syscall_rules = policy.syscalls.size();
    s.net_rules = policy.net.size();
    s.device_rules = policy.devices.size();
    s.states = automaton.nstates;
    s.classes = automaton.nclasses;
    s.transitions = automaton.trans.size();
    s.trans_bytes = tables.trans.size() * sizeof(tables.trans[0]);
    s.accepts_bytes = tables.accepts.size() * sizeof(bw_accept);
    s.header_bytes = sizeof(bw_sandbox);

    s.method = policy.rules.size() <= max_removal_rules ? Stats::Method::Removal : Stats::Method::Heuristic;
    for (std::size_t i = 0; i < policy.rules.size(); ++i) {
        if (policy.rules[i].invariant)
            continue;
        const auto score = s.method == Stats::Method::Removal
                               ? std::int64_t{automaton.nstates} - states_without(policy, i)
                               : heuristic_score(policy.rules[i].pattern);
        s.contributors.push_back({&policy.rules[i], score});
    }
    // Stable: among equal scores the lower rule id (the earlier in table order) comes first.
    std::stable_sort(s.contributors.begin(), s.contributors.end(),
                     [](const Contributor& a, const Contributor& b) { return a.score > b.score; });
    if (s.contributors.size() > kTopContributors)
        s.contributors.resize(kTopContributors);
    return s;
}

std::string render(const Stats& s)
{
    std::string out;
    out += fmt::format("rules:        {} path, {} audit, {} syscall, {} net, {} device\n", s.path_rules, s.audit_rules,
                       s.syscall_rules, s.net_rules, s.device_rules);
    out += fmt::format("automaton:    {} states, {} byte classes, {} transitions\n", s.states, s.classes,
                       s.transitions);
    out += fmt::format("table bytes:  {} ({} transitions + {} accepts + {} sandbox header)\n", s.table_bytes(),
                       s.trans_bytes, s.accepts_bytes, s.header_bytes);
    if (s.contributors.empty())
        return out;
    const bool removal = s.method == Stats::Method::Removal;
    out += removal ? "largest contributors (states saved by removing each rule alone, rebuilt):\n"
                   : fmt::format("likely contributors (heuristic: more than {} rules to rebuild; most wildcards, "
                                 "then longest patterns):\n",
                                 kMaxRemovalRules);
    for (const auto& c : s.contributors) {
        const auto& r = *c.rule;
        const std::string measure = removal ? fmt::format("{:>7} states  ", c.score) : "";
        // The pattern as compiled (one alternative of `{a,b}`), then the rule as written.
        out += fmt::format("  {}#{:<4} {}  from `{}` ({}:{})\n", measure, r.id, r.pattern, r.origin.text,
                           r.origin.file, r.origin.line);
    }
    return out;
}

} // namespace bw::stats
