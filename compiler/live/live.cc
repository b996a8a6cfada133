#include "live/live.h"

#include "automata/automata.h"
#include "syscalls/syscalls.h"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <ctime>
#include <fmt/format.h>

namespace bw::live {

namespace {

ir::RuleId next_id(const ir::Policy& policy)
{
    ir::RuleId last = ir::kFirstRuleId - 1;
    auto after = [&](const auto& rules) {
        for (const auto& r : rules)
            last = std::max(last, r.id);
    };
    after(policy.rules);
    after(policy.audits);
    after(policy.syscalls);
    after(policy.net);
    after(policy.devices);
    return last + 1;
}

auto meaning(const ir::PathRule& r)
{
    return std::tie(r.invariant, r.pattern, r.accesses, r.conditions, r.decision);
}
auto meaning(const ir::NetRule& r)
{
    return std::tie(r.kind, r.family, r.protocol, r.bind, r.endpoint, r.conditions, r.decision);
}
auto meaning(const ir::SyscallRule& r)
{
    return std::tie(r.syscall, r.from_group, r.decision, r.action);
}

bool is_live(const ir::SyscallRule& r)
{
    return !syscalls::live_hook(r.syscall).empty();
}

// Appends each rule the policy lacks, with a fresh id and the edit's provenance.
template <typename Rule>
void add_new(std::vector<Rule>& to, const std::vector<Rule>& rules, const ir::Provenance& origin,
             ir::RuleId& next, std::vector<ir::RuleId>& ids)
{
    for (auto r : rules) {
        const bool present =
            std::any_of(to.begin(), to.end(), [&](const Rule& p) { return meaning(p) == meaning(r); });
        if (present)
            continue;
        r.id = next++;
        r.origin = origin;
        ids.push_back(r.id);
        to.push_back(std::move(r));
    }
}

} // namespace

std::string describe(const EditOrigin& origin)
{
    const std::time_t t = static_cast<std::time_t>(origin.unix_time);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return fmt::format("live edit at {} by uid {}", when, origin.uid);
}

std::vector<ir::RuleId> add_rules(ir::Policy& policy, const ir::Policy& rules, const EditOrigin& origin,
                                  const std::string& text, ir::RuleId& next)
{
    std::vector<ir::RuleId> ids;
    next = std::max(next, next_id(policy));
    const ir::Provenance provenance{describe(origin), 0, 0, text, {}};
    std::vector<ir::PathRule> paths;
    std::copy_if(rules.rules.begin(), rules.rules.end(), std::back_inserter(paths),
                 [](const ir::PathRule& r) { return !r.invariant; });
    add_new(policy.rules, paths, provenance, next, ids);
    add_new(policy.net, rules.net, provenance, next, ids);
    std::vector<ir::SyscallRule> live_syscalls;
    std::copy_if(rules.syscalls.begin(), rules.syscalls.end(), std::back_inserter(live_syscalls), is_live);
    add_new(policy.syscalls, live_syscalls, provenance, next, ids);
    return ids;
}

bool remove_rule(ir::Policy& policy, ir::RuleId id)
{
    const auto paths = std::erase_if(policy.rules, [&](const ir::PathRule& r) { return r.id == id && !r.invariant; });
    const auto nets = std::erase_if(policy.net, [&](const ir::NetRule& r) { return r.id == id; });
    // A syscall rule goes only if the seccomp filter decides none of its syscalls.
    const bool live = std::ranges::all_of(policy.syscalls,
                                          [&](const ir::SyscallRule& r) { return r.id != id || is_live(r); });
    const auto syscall_rules =
        live ? std::erase_if(policy.syscalls, [&](const ir::SyscallRule& r) { return r.id == id; }) : 0;
    return paths + nets + syscall_rules > 0;
}

std::vector<ir::RuleId> remove_named_syscall(ir::Policy& policy, const std::string& syscall, ir::Decision decision)
{
    std::vector<ir::RuleId> ids;
    std::erase_if(policy.syscalls, [&](const ir::SyscallRule& r) {
        if (r.syscall != syscall || r.from_group || r.decision != decision)
            return false;
        ids.push_back(r.id);
        return true;
    });
    return ids;
}

std::vector<ir::RuleId> remove_pattern(ir::Policy& policy, const std::string& pattern)
{
    std::vector<ir::RuleId> ids;
    std::erase_if(policy.rules, [&](const ir::PathRule& r) {
        if (r.invariant || r.pattern != pattern)
            return false;
        ids.push_back(r.id);
        return true;
    });
    return ids;
}

std::optional<MapTables> compile_tables(const ir::Policy& policy, Diagnostics& diags)
{
    const auto automaton = run_compile_paths(policy, diags);
    if (!automaton)
        return std::nullopt;
    return run_backend_maps(policy, *automaton);
}

} // namespace bw::live
