#include "automata/automata.h"

#include <fmt/format.h>
#include <map>

namespace bw {

namespace {

// Records a decision unless a stronger one is already there: deny wins a tie.
void decide(std::uint8_t& decision, ir::RuleId& rule, const ir::PathRule& r)
{
    const auto d = static_cast<std::uint8_t>(r.decision);
    if (decision == BW_DECISION_NONE || (decision == BW_DECISION_ALLOW && d == BW_DECISION_DENY)) {
        decision = d;
        rule = r.id;
    }
}

} // namespace

std::optional<Automaton> run_compile_paths(const ir::Policy& policy, Diagnostics& diags)
{
    Automaton a;
    for (const auto& rule : policy.rules) {
        for (const char c : rule.path) {
            auto& cls = a.classes[static_cast<unsigned char>(c)];
            if (cls == 0)
                cls = static_cast<std::uint8_t>(a.nclasses++);
        }
    }

    // Build the trie with sparse children, then lay it out as a dense table.
    std::vector<std::map<std::uint8_t, std::uint32_t>> children(2);
    a.accepts.resize(2);
    for (const auto& rule : policy.rules) {
        std::uint32_t state = BW_START_STATE;
        for (const char c : rule.path) {
            const auto cls = a.classes[static_cast<unsigned char>(c)];
            auto [it, inserted] = children[state].try_emplace(cls, a.nstates);
            if (inserted) {
                ++a.nstates;
                children.emplace_back();
                a.accepts.emplace_back();
            }
            state = it->second;
        }
        auto& acc = a.accepts[state];
        if (rule.kind == ir::MatchKind::Exact)
            decide(acc.exact_decision, acc.exact_rule, rule);
        else
            decide(acc.tree_decision, acc.tree_rule, rule);
    }

    const std::size_t entries = std::size_t{a.nstates} * a.nclasses;
    if (entries > kMaxTransitions) {
        auto& d = diags.report(DiagKind::AutomatonTooLarge, SourceLocation{}, entries, kMaxTransitions);
        d.hints.push_back("fold rules that share a directory into one tree rule (`/dir/`)");
        return std::nullopt;
    }
    a.trans.assign(entries, BW_DEAD_STATE);
    for (std::uint32_t s = 0; s < a.nstates; ++s) {
        for (const auto& [cls, next] : children[s])
            a.trans[std::size_t{s} * a.nclasses + cls] = next;
    }
    return a;
}

ir::Verdict simulate(const Automaton& a, const ir::Policy& policy, std::string_view path)
{
    std::uint8_t decision = BW_DECISION_NONE;
    ir::RuleId rule = 0;
    std::uint32_t state = BW_START_STATE;
    // Mirrors walk_step(): boundaries at '/' and at the terminating NUL.
    for (std::size_t i = 0; i <= path.size(); ++i) {
        const unsigned char c = i < path.size() ? static_cast<unsigned char>(path[i]) : 0;
        const auto& acc = a.accepts[state];
        if ((c == '/' || c == 0) && acc.tree_decision != BW_DECISION_NONE) {
            decision = acc.tree_decision;
            rule = acc.tree_rule;
        }
        if (c == 0) {
            if (acc.exact_decision != BW_DECISION_NONE) {
                decision = acc.exact_decision;
                rule = acc.exact_rule;
            }
            break;
        }
        state = a.next(state, c);
        if (state == BW_DEAD_STATE)
            break;
    }
    if (decision == BW_DECISION_NONE)
        return {policy.default_decision, ir::kDefaultRuleId};
    return {static_cast<ir::Decision>(decision), rule};
}

std::string dump(const Automaton& a)
{
    std::string out = fmt::format("automaton: {} states, {} byte classes, {} transitions\n", a.nstates,
                                  a.nclasses, a.trans.size());
    for (std::uint32_t s = BW_START_STATE; s < a.nstates; ++s) {
        out += fmt::format("  state {}", s);
        const auto& acc = a.accepts[s];
        if (acc.exact_decision != BW_DECISION_NONE)
            out += fmt::format("  exact={}#{}", acc.exact_decision == BW_DECISION_ALLOW ? "allow" : "deny",
                               acc.exact_rule);
        if (acc.tree_decision != BW_DECISION_NONE)
            out += fmt::format("  tree={}#{}", acc.tree_decision == BW_DECISION_ALLOW ? "allow" : "deny",
                               acc.tree_rule);
        out += "\n";
        for (unsigned b = 0; b < 256; ++b) {
            const auto cls = a.classes[b];
            if (cls == 0)
                continue;
            const auto next = a.trans[std::size_t{s} * a.nclasses + cls];
            if (next != BW_DEAD_STATE)
                out += fmt::format("    {:?} -> {}\n", std::string(1, static_cast<char>(b)), next);
        }
    }
    return out;
}

} // namespace bw
