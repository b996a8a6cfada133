#include "lower/lower.h"

#include <algorithm>

namespace bw {

namespace {

auto key(const ir::PathRule& r)
{
    return std::tie(r.pattern, r.accesses, r.conditions, r.decision);
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

template <typename Rule>
void normalise(std::vector<Rule>& rules, ir::RuleId& next, Diagnostics& diags)
{
    std::stable_sort(rules.begin(), rules.end(), [](const Rule& a, const Rule& b) {
        if (key(a) != key(b))
            return key(a) < key(b);
        return where(a.origin) < where(b.origin);
    });
    std::vector<Rule> out;
    for (auto& r : rules) {
        if (!out.empty() && key(out.back()) == key(r)) {
            // Alternatives of one rule may coincide; only a second rule is a repeat.
            if (where(out.back().origin) != where(r.origin) && worth_reporting(out.back(), r))
                diags.report(DiagKind::DuplicateRule, r.origin.loc, r.origin.text, out.back().origin.line)
                    .hints.push_back("remove one of them");
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
    normalise(policy.rules, next, diags);
    normalise(policy.audits, next, diags);
    normalise(policy.syscalls, next, diags);
    normalise(policy.net, next, diags);
    normalise(policy.devices, next, diags);
    return policy;
}

} // namespace bw
