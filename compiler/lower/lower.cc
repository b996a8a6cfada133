#include "lower/lower.h"

#include <algorithm>
#include <set>

namespace bw {

namespace {

auto key(const ir::PathRule& r)
{
    return std::tie(r.invariant, r.pattern, r.accesses, r.conditions, r.decision);
}
auto key(const ir::AuditRule& r)
{
    return std::tie(r.pattern, r.accesses, r.conditions);
}
auto key(const ir::SyscallRule& r)
{
    return std::tie(r.syscall, r.from_group, r.decision, r.action);
}
auto key(const ir::NetRule& r)
{
    return std::tie(r.kind, r.family, r.protocol, r.bind, r.endpoint, r.conditions, r.decision);
}
auto key(const ir::DeviceRule& r)
{
    return std::tie(r.pattern, r.type, r.major, r.minor, r.accesses, r.ioctl_any, r.ioctl_commands, r.conditions,
                    r.decision);
}

// Overlapping groups (`@mount` and `@privileged`) repeat syscalls by design.
template <typename Rule>
bool worth_reporting(const Rule&, const Rule&)
{
    return true;
}
bool worth_reporting(const ir::SyscallRule& a, const ir::SyscallRule& b)
{
    return !a.from_group && !b.from_group;
}

auto where(const ir::Provenance& p)
{
    return std::tie(p.loc.file, p.line, p.column);
}

// A repeat is reported once per pair of source rules, at the main file's copy when the
// other comes from an include (repeating a library rule is the includer's doing), and not
// at all between two included files (their own checks report those).
template <typename Rule>
void report_repeat(const Rule& kept, const Rule& repeat, const std::string& main_file,
                   std::set<std::pair<SourceLocation, SourceLocation>>& seen, Diagnostics& diags)
{
    const bool kept_main = kept.origin.file == main_file;
    const bool repeat_main = repeat.origin.file == main_file;
    if (!kept_main && !repeat_main)
        return;
    const auto& at = repeat_main ? repeat.origin : kept.origin;
    const auto& other = repeat_main ? kept.origin : repeat.origin;
    if (!seen.emplace(at.loc, other.loc).second)
        return;
    const auto where = other.file == at.file ? fmt::format("line {}", other.line)
                                             : fmt::format("{}:{}", other.file, other.line);
    diags.report(DiagKind::DuplicateRule, at.loc, other.text, where).hints.push_back("remove one of them");
}

template <typename Rule>
void normalise(std::vector<Rule>& rules, ir::RuleId& next, const std::string& main_file, Diagnostics& diags)
{
    std::stable_sort(rules.begin(), rules.end(), [](const Rule& a, const Rule& b) {
        if (key(a) != key(b))
            return key(a) < key(b);
        return where(a.origin) < where(b.origin);
    });
    std::vector<Rule> out;
    std::set<std::pair<SourceLocation, SourceLocation>> seen;
    for (auto& r : rules) {
        if (!out.empty() && key(out.back()) == key(r)) {
            // Alternatives of one rule may coincide; only a second rule is a repeat.
            if (where(out.back().origin) != where(r.origin) && worth_reporting(out.back(), r))
                report_repeat(out.back(), r, main_file, seen, diags);
            continue;
        }
        out.push_back(std::move(r));
    }
    for (auto& r : out)
        r.id = next++;
    rules = std::move(out);
}

} // namespace

ir::Policy run_lower(CheckedPolicy checked, Diagnostics& diags)
{
    auto policy = std::move(checked.policy);
    ir::RuleId next = ir::kFirstRuleId;
    const std::string main_file = policy.files.empty() ? std::string() : policy.files.front();
    normalise(policy.rules, next, main_file, diags);
    normalise(policy.audits, next, main_file, diags);
    normalise(policy.syscalls, next, main_file, diags);
    normalise(policy.net, next, main_file, diags);
    normalise(policy.devices, next, main_file, diags);
    // Numbered last, so that the policy's own rules keep their ids whatever is in force.
    for (auto& r : ir::invariant_rules(policy.invariants())) {
        r.id = next++;
        policy.rules.push_back(std::move(r));
    }
    return policy;
}

} // namespace bw
