#include "ir/ir.h"

#include <fmt/format.h>

namespace bw::ir {

namespace {

bool matches(const PathRule& rule, std::string_view path)
{
    if (rule.kind == MatchKind::Exact)
        return path == rule.path;
    // A tree rule covers its own path and everything below it; the root tree ("") all.
    if (!path.starts_with(rule.path))
        return false;
    return path.size() == rule.path.size() || path[rule.path.size()] == '/';
}

// Larger is more specific.
auto specificity(const PathRule& rule)
{
    return std::tuple{rule.path.size(), rule.kind == MatchKind::Exact, rule.decision == Decision::Deny};
}

} // namespace

const Provenance* find_origin(const Policy& policy, RuleId id)
{
    if (id == kDefaultRuleId)
        return &policy.default_origin;
    for (const auto& rule : policy.rules) {
        if (rule.id == id)
            return &rule.origin;
    }
    return nullptr;
}

Verdict evaluate(const Policy& policy, std::string_view path)
{
    const PathRule* best = nullptr;
    for (const auto& rule : policy.rules) {
        if (matches(rule, path) && (best == nullptr || specificity(rule) > specificity(*best)))
            best = &rule;
    }
    if (best == nullptr)
        return {policy.default_decision, kDefaultRuleId};
    return {best->decision, best->id};
}

std::string to_string(Decision decision)
{
    return decision == Decision::Allow ? "allow" : "deny";
}

std::string dump(const Policy& policy)
{
    std::string out = fmt::format("policy {:?}\n", policy.name);
    for (const auto& file : policy.files)
        out += fmt::format("  source {:?}\n", file);
    out += fmt::format("  #{:<4} default {:<5}            {}:{}\n", kDefaultRuleId,
                       to_string(policy.default_decision), policy.default_origin.file,
                       policy.default_origin.line);
    for (const auto& rule : policy.rules) {
        const auto shown = rule.kind == MatchKind::Tree ? rule.path + "/" : rule.path;
        out += fmt::format("  #{:<4} {:<5} {:<5} {:?}  {}:{}\n", rule.id, to_string(rule.decision),
                           rule.kind == MatchKind::Tree ? "tree" : "exact", shown, rule.origin.file,
                           rule.origin.line);
    }
    return out;
}

} // namespace bw::ir
