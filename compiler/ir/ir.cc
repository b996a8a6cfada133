#include "ir/ir.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace bw::ir {

namespace {

constexpr std::array<std::string_view, kAccessKinds> kAccessNames = {
    "read", "write", "append", "exec", "create", "delete", "rename", "link", "metadata", "attr", "ioctl"};

constexpr std::array<InvariantInfo, 12> kInvariants = {{
    {Invariant::Cgroup, "cgroup", "leaving the sandbox's cgroup: writes under /sys/fs/cgroup, new cgroups"},
    {Invariant::Bpf, "bpf", "the bpf() system call and the BPF file system (/sys/fs/bpf)"},
    {Invariant::Perf, "perf", "perf events (perf_event_open, hardware breakpoints)"},
    {Invariant::Signal, "signal", "signals to processes outside the sandbox"},
    {Invariant::Ptrace, "ptrace", "ptrace, process_vm_readv/writev and /proc/PID/mem of processes outside the sandbox"},
    {Invariant::Mount, "mount", "mount, umount, move_mount, pivot_root and chroot"},
    {Invariant::Modules, "modules", "loading kernel modules and kexec images, module auto-loading"},
    {Invariant::Sysctl, "sysctl", "writes to /proc/sys and /sys/kernel"},
    {Invariant::Devices, "devices", "block devices, /dev/mem, /dev/kmem and /dev/port, by device number"},
    {Invariant::Tty, "tty", "pushing input into a terminal (TIOCSTI) or pasting the console's selection (TIOCLINUX)"},
    {Invariant::Self, "bumblewrap", "bumblewrap's own state: /run/bumblewrap and /sys/fs/bpf/bumblewrap"},
    {Invariant::Namespaces, "namespaces",
     "new user namespaces, and mounts, pivot_root and chroot in the mount namespaces they own"},
}};

// Kernel tunables and cgroup files may be read; changing them is what the invariant forbids.
constexpr AccessMask kChanges = kAllAccesses & ~(bit(Access::Read) | bit(Access::Metadata));

struct InvariantPath {
    Invariant invariant;
    std::string_view pattern;
    AccessMask accesses;
};
constexpr std::array<InvariantPath, 6> kInvariantPaths = {{
    {Invariant::Cgroup, "/sys/fs/cgroup/**", kChanges},
    {Invariant::Bpf, "/sys/fs/bpf/**", kAllAccesses},
    {Invariant::Sysctl, "/proc/sys/**", kChanges},
    {Invariant::Sysctl, "/sys/kernel/**", kChanges},
    {Invariant::Self, "/run/bumblewrap/**", kAllAccesses},
    {Invariant::Self, "/sys/fs/bpf/bumblewrap/**", kAllAccesses},
}};

bool is_wildcard_char(char c)
{
    return c == '*' || c == '?' || c == '[';
}

// One path component against one pattern component (`*`, `?`, `[...]`; no `/` in either).
bool component_match(std::string_view p, std::string_view s)
{
    std::size_t pi = 0, si = 0;
    std::size_t star_p = std::string_view::npos, star_s = 0;
    while (si < s.size()) {
        if (pi < p.size() && p[pi] == '*') {
            star_p = pi++;
            star_s = si;
            continue;
        }
        if (pi < p.size() && p[pi] == '[') {
            // [abc], [a-z], [!a-z]; the check stage guarantees a closing `]`.
            const auto close = p.find(']', pi + 2);
            const std::string_view set = p.substr(pi + 1, close - pi - 1);
            const bool negate = !set.empty() && set[0] == '!';
            bool hit = false;
            for (std::size_t k = negate ? 1 : 0; k < set.size(); ++k) {
                if (k + 2 < set.size() && set[k + 1] == '-') {
                    hit = hit || (s[si] >= set[k] && s[si] <= set[k + 2]);
                    k += 2;
                } else {
                    hit = hit || s[si] == set[k];
                }
            }
            if (hit != negate) {
                pi = close + 1;
                ++si;
                continue;
            }
        } else if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
            ++pi;
            ++si;
            continue;
        }
        if (star_p == std::string_view::npos)
            return false;
        pi = star_p + 1;
        si = ++star_s;
    }
    while (pi < p.size() && p[pi] == '*')
        ++pi;
    return pi == p.size();
}

template <typename Rule>
const Provenance* origin_in(const std::vector<Rule>& rules, RuleId id)
{
    for (const auto& r : rules) {
        if (r.id == id)
            return &r.origin;
    }
    return nullptr;
}

} // namespace

std::vector<std::string_view> components(std::string_view path)
{
    std::vector<std::string_view> out;
    std::size_t start = 1; // skip the leading '/'
    while (start <= path.size()) {
        auto end = path.find('/', start);
        if (end == std::string_view::npos)
            end = path.size();
        if (end > start)
            out.push_back(path.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string_view name(Access a)
{
    return kAccessNames.at(static_cast<std::size_t>(a));
}

std::optional<Access> parse_access(std::string_view word)
{
    if (word == "stat")
        return Access::Metadata;
    for (std::size_t i = 0; i < kAccessNames.size(); ++i) {
        if (kAccessNames[i] == word)
            return static_cast<Access>(i);
    }
    return std::nullopt;
}

std::string to_string(AccessMask mask)
{
    if (mask == kAllAccesses)
        return "all";
    std::string out;
    for (std::size_t i = 0; i < kAccessKinds; ++i) {
        if (mask & (1u << i))
            out += (out.empty() ? "" : ", ") + std::string(kAccessNames[i]);
    }
    return out;
}

bool glob_match(std::string_view pattern, std::string_view path)
{
    const auto p = components(pattern);
    const auto s = components(path);
    // memo[i][j]: pattern components from i match path components from j (0 unknown, 1 no, 2 yes).
    std::vector<std::uint8_t> memo((p.size() + 1) * (s.size() + 1), 0);
    auto match = [&](auto&& self, std::size_t i, std::size_t j) -> bool {
        auto& m = memo[i * (s.size() + 1) + j];
        if (m != 0)
            return m == 2;
        bool r;
        if (i == p.size())
            r = j == s.size();
        else if (p[i] == "**")
            r = self(self, i + 1, j) || (j < s.size() && self(self, i, j + 1));
        else
            r = j < s.size() && component_match(p[i], s[j]) && self(self, i + 1, j + 1);
        m = r ? 2 : 1;
        return r;
    };
    return match(match, 0, 0);
}

Specificity specificity(std::string_view pattern)
{
    Specificity s;
    s.literal_prefix = pattern.size();
    int wildcards = 0;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (!is_wildcard_char(c)) {
            ++s.literal_bytes;
            continue;
        }
        if (wildcards++ == 0) {
            // The `/` before a `**` belongs to it: `/usr/**` matches `/usr` itself.
            const bool globstar = c == '*' && i + 1 < pattern.size() && pattern[i + 1] == '*';
            s.literal_prefix = globstar && i > 0 && pattern[i - 1] == '/' ? i - 1 : i;
        }
        if (c == '*' && i + 1 < pattern.size() && pattern[i + 1] == '*')
            ++i;
        else if (c == '[')
            i = pattern.find(']', i + 2);
    }
    s.literal = wildcards == 0;
    s.fewer_wildcards = -wildcards;
    return s;
}

bool conditions_hold(const Conditions& c, const PathQuery& q)
{
    for (const auto& exe : c.exe) {
        if (!glob_match(exe, q.exe))
            return false;
    }
    if (c.uid && (q.uid < c.uid->lo || q.uid > c.uid->hi))
        return false;
    if (c.gid && (q.gid < c.gid->lo || q.gid > c.gid->hi))
        return false;
    if (c.owner && !q.owner)
        return false;
    return (q.flags & c.open_flags) == c.open_flags;
}

std::span<const InvariantInfo> invariants()
{
    return kInvariants;
}

std::string_view name(Invariant invariant)
{
    for (const auto& i : kInvariants) {
        if (i.invariant == invariant)
            return i.name;
    }
    return "invariant";
}

std::optional<Invariant> parse_invariant(std::string_view word)
{
    for (const auto& i : kInvariants) {
        if (i.name == word)
            return i.invariant;
    }
    return std::nullopt;
}

std::string invariant_names(InvariantMask mask)
{
    std::string out;
    for (const auto& i : kInvariants) {
        if (mask & static_cast<InvariantMask>(i.invariant))
            out += fmt::format("{}{}", out.empty() ? "" : ", ", i.name);
    }
    return out.empty() ? "none" : out;
}

std::vector<PathRule> invariant_rules(InvariantMask mask)
{
    std::vector<PathRule> out;
    for (const auto& p : kInvariantPaths) {
        if (!(mask & static_cast<InvariantMask>(p.invariant)))
            continue;
        PathRule r;
        r.decision = Decision::Deny;
        r.accesses = p.accesses;
        r.pattern = std::string(p.pattern);
        r.invariant = true;
        r.origin.file = std::string(kInvariantFile);
        r.origin.text = fmt::format("invariant: {}", name(p.invariant));
        out.push_back(std::move(r));
    }
    return out;
}

Verdict evaluate(const Policy& policy, const PathQuery& q)
{
    const PathRule* best = nullptr;
    auto rank = [](const PathRule& r) {
        return std::tuple{r.invariant, specificity(r.pattern), r.conditions.count(), r.decision == Decision::Deny};
    };
    for (const auto& rule : policy.rules) {
        if (!(rule.accesses & bit(q.access)) || !glob_match(rule.pattern, q.path) || !conditions_hold(rule.conditions, q))
            continue;
        // Rules come in id order, so among equals the lowest id decides.
        if (best == nullptr || rank(rule) > rank(*best))
            best = &rule;
    }
    if (best == nullptr)
        return {policy.path_default.decision, policy.path_default.id};
    return {best->decision, best->id};
}

RuleId evaluate_audit(const Policy& policy, const PathQuery& q)
{
    const AuditRule* best = nullptr;
    auto rank = [](const AuditRule& r) { return std::tuple{specificity(r.pattern), r.conditions.count()}; };
    for (const auto& rule : policy.audits) {
        if (!(rule.accesses & bit(q.access)) || !glob_match(rule.pattern, q.path) || !conditions_hold(rule.conditions, q))
            continue;
        if (best == nullptr || rank(rule) > rank(*best))
            best = &rule;
    }
    return best == nullptr ? 0 : best->id;
}

SyscallVerdict evaluate_syscall(const Policy& policy, std::string_view syscall)
{
    const SyscallRule* best = nullptr;
    auto rank = [](const SyscallRule& r) { return std::tuple{!r.from_group, r.decision == Decision::Deny}; };
    for (const auto& rule : policy.syscalls) {
        if (rule.syscall == syscall && (best == nullptr || rank(rule) > rank(*best)))
            best = &rule;
    }
    if (best == nullptr)
        return {policy.syscall_default.decision, policy.syscall_default.id, policy.syscall_default_action};
    return {best->decision, best->id, best->action};
}

namespace {

bool endpoint_matches(const NetEndpoint& e, int family, const std::array<std::uint8_t, 16>& address,
                      std::uint16_t port)
{
    if (e.family != family || port < e.port_lo || port > e.port_hi)
        return false;
    for (std::size_t bit = 0; bit < e.prefix; ++bit) {
        const auto mask = static_cast<std::uint8_t>(0x80u >> (bit % 8));
        if ((e.address[bit / 8] & mask) != (address[bit / 8] & mask))
            return false;
    }
    return true;
}

} // namespace

Verdict evaluate_net(const Policy& policy, const NetQuery& q)
{
    const NetRule* best = nullptr;
    auto rank = [](const NetRule& r) {
        const int kind = static_cast<int>(r.kind);
        const int prefix = r.kind == NetRule::Kind::Endpoint ? r.endpoint.prefix : 0;
        const int narrow = r.kind == NetRule::Kind::Endpoint ? -(r.endpoint.port_hi - r.endpoint.port_lo) : 0;
        return std::tuple{kind, prefix, narrow, r.conditions.count(), r.decision == Decision::Deny};
    };
    const NetRule* enabling = nullptr; // an allowed endpoint of the family, for Create
    for (const auto& r : policy.net) {
        if (!conditions_hold(r.conditions, q.process))
            continue;
        bool applies = r.kind == NetRule::Kind::All || (r.kind == NetRule::Kind::Family && r.family == q.family);
        if (r.kind == NetRule::Kind::Endpoint) {
            if (q.op == NetQuery::Op::Create) {
                if (r.decision == Decision::Allow && r.endpoint.family == q.family && enabling == nullptr)
                    enabling = &r;
                continue;
            }
            applies = r.protocol == q.protocol && r.bind == (q.op == NetQuery::Op::Bind) &&
                      endpoint_matches(r.endpoint, q.family, q.address, q.port);
        }
        if (applies && (best == nullptr || rank(r) > rank(*best)))
            best = &r;
    }
    Verdict v = best ? Verdict{best->decision, best->id} : Verdict{policy.net_default.decision, policy.net_default.id};
    if (q.op == NetQuery::Op::Create && v.decision == Decision::Deny && enabling != nullptr)
        v = {Decision::Allow, enabling->id};
    return v;
}

bool device_rule_decides(const DeviceRule& r, Access access)
{
    return (r.accesses & bit(access)) || (access == Access::Ioctl && r.decision == Decision::Allow);
}

bool device_rule_precedes(const DeviceRule& a, const DeviceRule& b)
{
    auto rank = [](const DeviceRule& r) {
        const bool by_path = !r.pattern.empty();
        const auto spec = by_path ? specificity(r.pattern) : Specificity{};
        // Among rules by number, an exact major and minor is most specific.
        const std::int64_t narrow = by_path ? 0 : -(std::int64_t{r.major.hi} - r.major.lo) * (1 << 20) -
                                                      (std::int64_t{r.minor.hi} - r.minor.lo);
        return std::tuple{by_path, spec, narrow, r.conditions.count(), r.decision == Decision::Deny};
    };
    return rank(a) > rank(b);
}

Verdict evaluate_device(const Policy& policy, const DeviceQuery& q)
{
    const DeviceRule* best = nullptr;
    for (const auto& r : policy.devices) {
        if (!device_rule_decides(r, q.access.access) || !conditions_hold(r.conditions, q.access))
            continue;
        const bool matches = r.pattern.empty()
                                 ? r.type == q.type && q.major >= r.major.lo && q.major <= r.major.hi &&
                                       q.minor >= r.minor.lo && q.minor <= r.minor.hi
                                 : glob_match(r.pattern, q.access.path);
        if (matches && (best == nullptr || device_rule_precedes(r, *best)))
            best = &r;
    }
    if (best == nullptr)
        return evaluate(policy, q.access);
    if (best->decision == Decision::Allow && q.access.access == Access::Ioctl && !best->ioctl_any) {
        const bool listed = std::any_of(best->ioctl_commands.begin(), best->ioctl_commands.end(), [&](const IdRange& c) {
            return q.ioctl_command >= c.lo && q.ioctl_command <= c.hi;
        });
        if (!listed)
            return {Decision::Deny, best->id};
    }
    return {best->decision, best->id};
}

const Provenance* find_origin(const Policy& policy, RuleId id)
{
    for (const auto* d : {&policy.path_default, &policy.net_default, &policy.syscall_default}) {
        if (d->id == id)
            return &d->origin;
    }
    if (const auto* o = origin_in(policy.rules, id))
        return o;
    if (const auto* o = origin_in(policy.audits, id))
        return o;
    if (const auto* o = origin_in(policy.syscalls, id))
        return o;
    if (const auto* o = origin_in(policy.net, id))
        return o;
    return origin_in(policy.devices, id);
}

std::string to_string(Decision decision)
{
    return decision == Decision::Allow ? "allow" : "deny";
}

std::string string_literal(std::string_view text)
{
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : std::string(1, c);
    }
    return out + "\"";
}

std::string dump(const Policy& policy)
{
    auto where = [](const Provenance& p) { return fmt::format("{}:{}", p.file, p.line); };
    auto conditions = [](const Conditions& c) {
        std::string out;
        for (const auto& e : c.exe)
            out += fmt::format(" when exe {:?}", e);
        if (c.uid)
            out += fmt::format(" when uid {}-{}", c.uid->lo, c.uid->hi);
        if (c.gid)
            out += fmt::format(" when gid {}-{}", c.gid->lo, c.gid->hi);
        if (c.owner)
            out += " owner";
        if (c.open_flags)
            out += fmt::format(" flags 0x{:x}", c.open_flags);
        return out;
    };
    std::string out = fmt::format("policy {:?}\n", policy.name);
    for (const auto& file : policy.files)
        out += fmt::format("  source {:?}\n", file);
    for (const auto& [k, v] : policy.bindings)
        out += fmt::format("  binds ${{{}}} = {:?}\n", k, v);
    out += fmt::format("  unsafe {}\n", invariant_names(policy.unsafe));
    out += fmt::format("  #{:<4} default {}  {}\n", policy.path_default.id, to_string(policy.path_default.decision),
                       where(policy.path_default.origin));
    out += fmt::format("  #{:<4} net default {}  {}\n", policy.net_default.id, to_string(policy.net_default.decision),
                       where(policy.net_default.origin));
    out += fmt::format("  #{:<4} syscalls default {}  {}\n", policy.syscall_default.id,
                       to_string(policy.syscall_default.decision), where(policy.syscall_default.origin));
    for (const auto& r : policy.rules)
        out += fmt::format("  #{:<4} {}{} {} {:?}{}  {}\n", r.id, r.invariant ? "invariant " : "", to_string(r.decision),
                           to_string(r.accesses), r.pattern, conditions(r.conditions),
                           r.invariant ? r.origin.text : where(r.origin));
    for (const auto& r : policy.audits)
        out += fmt::format("  #{:<4} audit {} {:?}{}  {}\n", r.id, to_string(r.accesses), r.pattern,
                           conditions(r.conditions), where(r.origin));
    for (const auto& r : policy.syscalls)
        out += fmt::format("  #{:<4} syscall {} {}{}{}  {}\n", r.id, to_string(r.decision), r.syscall,
                           r.from_group ? " (group)" : "",
                           r.decision == Decision::Deny
                               ? (r.action.kind == SyscallAction::Kind::Kill ? " kill"
                                                                              : fmt::format(" errno {}", r.action.errno_value))
                               : "",
                           where(r.origin));
    for (const auto& r : policy.net)
        out += fmt::format("  #{:<4} net {} {}  {}\n", r.id, to_string(r.decision), r.origin.text, where(r.origin));
    for (const auto& r : policy.devices)
        out += fmt::format("  #{:<4} device {} {}  {}\n", r.id, to_string(r.decision), r.origin.text, where(r.origin));
    return out;
}

} // namespace bw::ir
