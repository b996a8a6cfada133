#include "lower/lower.h"

#include <algorithm>

namespace bw {

namespace {

ir::Provenance provenance(const SourceManager& sources, const SourceLocation& loc)
{
    return ir::Provenance{sources.file(loc.file).name, loc.line, loc.column,
                          std::string(sources.slice(loc))};
}

auto table_key(const ir::PathRule& r)
{
    return std::tie(r.path, r.kind, r.decision);
}

} // namespace

ir::Policy run_lower(const CheckedPolicy& checked, const SourceManager& sources)
{
    ir::Policy policy;
    policy.name = checked.name;
    policy.files.push_back(sources.file(checked.file).name);
    policy.default_decision = checked.default_decision;
    policy.default_origin = provenance(sources, checked.default_loc);

    for (const auto& rule : checked.rules)
        policy.rules.push_back(ir::PathRule{0, rule.decision, rule.kind, rule.path,
                                            provenance(sources, rule.loc)});

    // Table order is semantic order, never source order; of duplicates the first written
    // keeps the provenance.
    std::stable_sort(policy.rules.begin(), policy.rules.end(),
                     [](const auto& a, const auto& b) {
                         if (table_key(a) != table_key(b))
                             return table_key(a) < table_key(b);
                         return std::tie(a.origin.line, a.origin.column) <
                                std::tie(b.origin.line, b.origin.column);
                     });
    policy.rules.erase(std::unique(policy.rules.begin(), policy.rules.end(),
                                   [](const auto& a, const auto& b) { return table_key(a) == table_key(b); }),
                       policy.rules.end());
    ir::RuleId next = ir::kDefaultRuleId + 1;
    for (auto& rule : policy.rules)
        rule.id = next++;
    return policy;
}

} // namespace bw
