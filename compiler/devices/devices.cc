#include "devices/devices.h"

#include <algorithm>
#include <fmt/format.h>

namespace bw {

namespace {

bw_device_rule lower_rule(const ir::DeviceRule& r, const Automaton& a)
{
    bw_device_rule out{};
    out.pattern = device_pattern_bit(a, r);
    out.when = condition_link(a, r.conditions);
    out.major_lo = r.major.lo;
    out.major_hi = r.major.hi;
    out.minor_lo = r.minor.lo;
    out.minor_hi = r.minor.hi;
    for (std::size_t k = 0; k < ir::kAccessKinds; ++k) {
        if (ir::device_rule_decides(r, static_cast<ir::Access>(k)))
            out.kinds |= 1u << k;
    }
    out.rule = r.id;
    out.type = static_cast<__u8>(r.type);
    out.decision = static_cast<__u8>(r.decision);
    out.ioctl_any = r.ioctl_any ? 1 : 0;
    const auto n = std::min<std::size_t>(r.ioctl_commands.size(), BW_DEVICE_IOCTLS);
    out.nioctls = static_cast<__u8>(n);
    for (std::size_t i = 0; i < n; ++i)
        out.ioctls[i] = {r.ioctl_commands[i].lo, r.ioctl_commands[i].hi};
    return out;
}

bool ioctl_allowed(const bw_device_rule& r, std::uint32_t command)
{
    if (r.ioctl_any)
        return true;
    return std::any_of(r.ioctls, r.ioctls + r.nioctls,
                       [&](const bw_ioctl_range& c) { return command >= c.lo && command <= c.hi; });
}

// Mirrors bw_link_holds() in decide.bpf.h.
bool holds(const bw_link& l, const DeviceAccess& q)
{
    return q.uid >= l.uid_lo && q.uid <= l.uid_hi && q.gid >= l.gid_lo && q.gid <= l.gid_hi && (!l.owner || q.owner) &&
           (q.open_flags & l.open_flags) == l.open_flags && (q.exe & l.exe) == l.exe;
}

} // namespace

DeviceTables run_devices(const ir::Policy& policy, const Automaton& automaton)
{
    std::vector<const ir::DeviceRule*> sorted;
    for (const auto& r : policy.devices)
        sorted.push_back(&r);
    std::stable_sort(sorted.begin(), sorted.end(), [](const ir::DeviceRule* a, const ir::DeviceRule* b) {
        return ir::device_rule_precedes(*a, *b);
    });
    DeviceTables t;
    for (const auto* r : sorted)
        t.rules.push_back(lower_rule(*r, automaton));
    return t;
}

std::optional<ir::Verdict> decide(const DeviceTables& tables, const DeviceAccess& q)
{
    const auto kind = static_cast<unsigned>(q.access);
    for (const auto& r : tables.rules) {
        if (!(r.kinds & (1u << kind)) || !holds(r.when, q))
            continue;
        const bool matches = r.pattern != 0 ? (q.patterns & r.pattern) != 0
                                            : r.type == static_cast<__u8>(q.type) && q.major >= r.major_lo &&
                                                  q.major <= r.major_hi && q.minor >= r.minor_lo &&
                                                  q.minor <= r.minor_hi;
        if (!matches)
            continue;
        const auto decision = static_cast<ir::Decision>(r.decision);
        if (decision == ir::Decision::Allow && q.access == ir::Access::Ioctl && !ioctl_allowed(r, q.ioctl_command))
            return ir::Verdict{ir::Decision::Deny, r.rule};
        return ir::Verdict{decision, r.rule};
    }
    return std::nullopt;
}

std::string dump(const DeviceTables& tables)
{
    std::string out = fmt::format("device rules: {} (first match decides)\n", tables.rules.size());
    for (const auto& r : tables.rules) {
        out += r.pattern != 0 ? fmt::format("  pattern {:#x}", r.pattern)
                              : fmt::format("  {} {}-{}:{}-{}", static_cast<char>(r.type), r.major_lo, r.major_hi,
                                            r.minor_lo, r.minor_hi);
        out += fmt::format(" kinds {:#x} {} rule #{}", r.kinds, r.decision == BW_DECISION_ALLOW ? "allow" : "deny",
                           r.rule);
        out += condition_text(r.when);
        if (r.ioctl_any)
            out += " ioctl any";
        for (unsigned i = 0; i < r.nioctls; ++i)
            out += fmt::format("{}{:#x}-{:#x}", i == 0 ? " ioctl " : ", ", r.ioctls[i].lo, r.ioctls[i].hi);
        out += "\n";
    }
    return out;
}

} // namespace bw
