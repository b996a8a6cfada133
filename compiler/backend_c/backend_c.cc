#include "backend_c/backend_c.h"

#include "backend_c/clang_compile.h"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <numeric>
#include <unordered_map>

namespace bw {

namespace {

// Which access kinds each hook decides, in the order the template knows them.
struct Hook {
    const char* name;
    const char* macro;
    ir::AccessMask accesses;
    bool devices = false; // device rules decide there too (hooks/devices.bpf.h)
    bool exe = false;     // it records the `when exe` patterns at exec (hooks/exe.bpf.h)
    ir::InvariantMask invariants = 0; // the invariants it keeps as well
};
// One entry per hooks/<name>.bpf.h.
constexpr Hook kHooks[] = {
    {"file_open", "BW_HOOK_FILE_OPEN",
     ir::bit(ir::Access::Read) | ir::bit(ir::Access::Write) | ir::bit(ir::Access::Append) |
         ir::bit(ir::Access::Exec),
     true},
    {"create", "BW_HOOK_CREATE", ir::bit(ir::Access::Create), true},
    {"delete", "BW_HOOK_DELETE", ir::bit(ir::Access::Delete)},
    {"rename", "BW_HOOK_RENAME",
     ir::bit(ir::Access::Rename) | ir::bit(ir::Access::Create) | ir::bit(ir::Access::Delete)},
    {"link", "BW_HOOK_LINK", ir::bit(ir::Access::Link) | ir::bit(ir::Access::Create)},
    // With xattr.bpf.h, which decides setting times to now as a write.
    {"attr", "BW_HOOK_ATTR", ir::bit(ir::Access::Attr) | ir::bit(ir::Access::Write)},
    {"truncate", "BW_HOOK_TRUNCATE", ir::bit(ir::Access::Write)},
    {"metadata", "BW_HOOK_METADATA", ir::bit(ir::Access::Metadata)},
    {"exec", "BW_HOOK_EXEC", ir::bit(ir::Access::Exec), false, true},
    {"ioctl", "BW_HOOK_IOCTL", ir::bit(ir::Access::Ioctl) | ir::bit(ir::Access::Attr), true, false,
     static_cast<ir::InvariantMask>(ir::Invariant::Tty)},
    {"unix", "BW_HOOK_UNIX", ir::bit(ir::Access::Write)},
};

bool same_decisions(const StateAccept& a, const StateAccept& b)
{
    return a.decision == b.decision && a.rule == b.rule && a.exe == b.exe && a.audit == b.audit &&
           a.devices == b.devices;
}

bool fewer_decisions(const StateAccept& a, const StateAccept& b)
{
    return std::tie(a.decision, a.rule, a.exe, a.audit, a.devices) <
           std::tie(b.decision, b.rule, b.exe, b.audit, b.devices);
}

// Renumbers the states so that states with the same decisions are adjacent; the dead and
// the start state keep their numbers, which the kernel side relies on.
Automaton group_by_decisions(const Automaton& a)
{
    std::vector<std::uint32_t> order(a.nstates);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin() + BW_START_STATE + 1, order.end(), [&](std::uint32_t x, std::uint32_t y) {
        return fewer_decisions(a.accepts[x], a.accepts[y]);
    });
    std::vector<std::uint32_t> renumbered(a.nstates);
    for (std::uint32_t i = 0; i < a.nstates; ++i)
        renumbered[order[i]] = i;

    Automaton out = a;
    for (std::uint32_t i = 0; i < a.nstates; ++i) {
        const auto old = order[i];
        out.accepts[i] = a.accepts[old];
        for (std::uint32_t c = 0; c < a.nclasses; ++c)
            out.trans[std::size_t{i} * a.nclasses + c] = renumbered[a.trans[std::size_t{old} * a.nclasses + c]];
    }
    return out;
}

// About 7 BPF instructions per range: 2,048 keep every jump within the 16-bit offsets of
// BPF branches, and clang's compile time near a second.
constexpr std::size_t kMaxInlineRanges = 2048;

struct Range {
    std::uint32_t first = 0; // states [first, last]
    std::uint32_t last = 0;
};

std::vector<Range> decision_ranges(const Automaton& a)
{
    std::vector<Range> ranges;
    for (std::uint32_t s = 0; s < a.nstates; ++s) {
        if (!ranges.empty() && same_decisions(a.accepts[ranges.back().last], a.accepts[s]))
            ranges.back().last = s;
        else
            ranges.push_back({s, s});
    }
    return ranges;
}

// Text safe inside a C comment: no `*/`, no line breaks, no trigraph or splice tricks.
std::string comment_safe(std::string_view text)
{
    std::string out;
    for (const char c : text) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           std::string_view("/._-+:@ ").find(c) != std::string_view::npos;
        out += plain ? c : '?';
    }
    return out;
}

const char* access_macro(std::size_t kind)
{
    static constexpr const char* kNames[ir::kAccessKinds] = {
        "BW_ACCESS_READ",   "BW_ACCESS_WRITE",  "BW_ACCESS_APPEND",   "BW_ACCESS_EXEC",
        "BW_ACCESS_CREATE", "BW_ACCESS_DELETE", "BW_ACCESS_RENAME",   "BW_ACCESS_LINK",
        "BW_ACCESS_METADATA", "BW_ACCESS_ATTR", "BW_ACCESS_IOCTL"};
    return kNames[kind];
}

const char* decision_macro(std::uint8_t decision)
{
    switch (decision) {
    case BW_DECISION_ALLOW:
        return "BW_DECISION_ALLOW";
    case BW_DECISION_CHAIN:
        return "BW_DECISION_CHAIN";
    default:
        return "BW_DECISION_DENY";
    }
}

// bw_policy_decision: one `case` per range of states that decides something, the rest
// falls to the default. clang lowers the switch to a binary search on the state.
class DecisionWriter {
public:
    explicit DecisionWriter(const ir::Policy& policy)
    {
        for (const auto& r : policy.rules)
            origins_.emplace(r.id, &r.origin);
    }

    std::string function(const Automaton& a, const std::vector<Range>& ranges)
    {
        out_ = "/* decision | rule << 8 for a path that ends in `state`, asked for `kind` */\n"
               "__noinline __u64 bw_policy_decision(__u32 state, __u32 kind)\n{\n\tswitch (state) {\n";
        for (const auto& r : ranges)
            leaf(a.accepts[r.first], r);
        out_ += "\t}\n\treturn BW_VERDICT(BW_POLICY_DEFAULT_DECISION, BW_POLICY_DEFAULT_RULE);\n}\n";
        return std::move(out_);
    }

    // A function of the state alone, for the per-state values besides the decisions:
    // `field` of the state's StateAccept, 0 where none is given.
    std::string state_function(const Automaton& a, const std::vector<Range>& ranges, std::string_view comment,
                               std::string_view name, std::uint32_t StateAccept::*field)
    {
        out_ = fmt::format("/* {} */\n__noinline __u32 {}(__u32 state)\n{{\n\tswitch (state) {{\n", comment, name);
        for (const auto& r : ranges) {
            if (a.accepts[r.first].*field == 0)
                continue;
            out_ += r.first == r.last ? fmt::format("\tcase {}:\n", r.first)
                                      : fmt::format("\tcase {} ... {}:\n", r.first, r.last);
            out_ += fmt::format("\t\treturn {:#x};\n", a.accepts[r.first].*field);
        }
        out_ += "\t}\n\treturn 0;\n}\n";
        return std::move(out_);
    }

private:
    void leaf(const StateAccept& accept, const Range& r)
    {
        if (std::all_of(accept.decision.begin(), accept.decision.end(),
                        [](std::uint8_t d) { return d == BW_DECISION_NONE; }))
            return;
        out_ += r.first == r.last ? fmt::format("\tcase {}:\n", r.first)
                                  : fmt::format("\tcase {} ... {}:\n", r.first, r.last);
        out_ += "\t\tswitch (kind) {\n";
        for (std::size_t k = 0; k < ir::kAccessKinds; ++k) {
            if (accept.decision[k] == BW_DECISION_NONE)
                continue;
            out_ += fmt::format("\t\tcase {}: {}\n\t\t\treturn BW_VERDICT({}, {});\n", access_macro(k),
                                accept.decision[k] == BW_DECISION_CHAIN
                                    ? fmt::format("/* conditions decide: chain at link {} */", accept.rule[k])
                                    : where(accept.rule[k]),
                                decision_macro(accept.decision[k]), accept.rule[k]);
        }
        out_ += "\t\t}\n\t\tbreak;\n";
    }

    std::string where(ir::RuleId id) const
    {
        const auto it = origins_.find(id);
        if (it == origins_.end())
            return fmt::format("/* rule #{} */", id);
        return fmt::format("/* rule #{}, {}:{} */", id, comment_safe(it->second->file), it->second->line);
    }

    std::unordered_map<ir::RuleId, const ir::Provenance*> origins_;
    std::string out_;
};

// Whether the chain that starts at link `first` has a link that denies.
bool chain_denies(const Automaton& a, std::uint32_t first)
{
    for (auto i = first;; ++i) {
        if (a.links[i].decision == BW_DECISION_DENY)
            return true;
        if (a.links[i].conditions == 0)
            return false;
    }
}

// A hook is needed when one of its access kinds can be denied, device rules decide there, or
// it keeps an invariant in force.
bool needed(const Hook& hook, const ir::Policy& policy, const Automaton& a)
{
    if ((hook.devices && !policy.devices.empty()) || (policy.invariants() & hook.invariants))
        return true;
    // Audit rules record accesses the policy allows: their hooks run whatever it denies.
    for (const auto& r : policy.audits) {
        if (hook.accesses & r.accesses)
            return true;
    }
    // bprm_check_security records which `when exe` patterns each executable matches.
    if (hook.exe && !a.exe_patterns.empty())
        return true;
    if (hook.accesses == 0)
        return false;
    if (policy.path_default.decision == ir::Decision::Deny)
        return true;
    return std::any_of(a.accepts.begin(), a.accepts.end(), [&](const StateAccept& s) {
        for (std::size_t k = 0; k < ir::kAccessKinds; ++k) {
            if (!(hook.accesses & (1u << k)))
                continue;
            if (s.decision[k] == BW_DECISION_DENY || (s.decision[k] == BW_DECISION_CHAIN && chain_denies(a, s.rule[k])))
                return true;
        }
        return false;
    });
}

std::string classes_table(const Automaton& a)
{
    std::string out = "static const __u8 bw_policy_classes[256] = {\n";
    for (std::size_t b = 0; b < 256; b += 16) {
        out += "\t";
        for (std::size_t i = b; i < b + 16; ++i)
            out += fmt::format("{}{}", a.classes[i], i + 1 < b + 16 ? ", " : ",\n");
    }
    return out + "};\n";
}

// bw_policy_device_rules, most specific first; hooks/devices.bpf.h scans them. Padded to a
// power of two, as the network rules are (see net_tables).
std::string device_tables(const DeviceTables& devices)
{
    std::string out = fmt::format("\n#define BW_POLICY_DEVICE_RULES {}\n", devices.rules.size());
    if (devices.rules.empty())
        return out;
    const auto capacity = std::bit_ceil(devices.rules.size());
    out += fmt::format("#define BW_POLICY_DEVICE_RULES_MASK {}\n", capacity - 1);
    out += fmt::format("static const struct bw_device_rule bw_policy_device_rules[{}] = {{\n", capacity);
    for (const auto& r : devices.rules) {
        out += fmt::format("\t{{ .major_lo = {}, .major_hi = {}, .minor_lo = {}, .minor_hi = {}, .kinds = {:#x}, "
                           ".rule = {}, .pattern = {:#x}, .type = {}, .decision = {}, .ioctl_any = {}, "
                           ".nioctls = {},\n\t  .ioctls = {{",
                           r.major_lo, r.major_hi, r.minor_lo, r.minor_hi, r.kinds, r.rule, r.pattern, r.type,
                           r.decision, r.ioctl_any, r.nioctls);
        for (unsigned i = 0; i < r.nioctls; ++i)
            out += fmt::format(" {{ {:#x}, {:#x} }},", r.ioctls[i].lo, r.ioctls[i].hi);
        const auto& w = r.when;
        out += fmt::format(" }},\n\t  .when = {{ .owner = {}, .open_flags = {:#x}, .uid_lo = {}, .uid_hi = {}, "
                           ".gid_lo = {}, .gid_hi = {}, .exe = {:#x} }} }},\n",
                           w.owner, w.open_flags, w.uid_lo, w.uid_hi, w.gid_lo, w.gid_hi, w.exe);
    }
    return out + "};\n";
}

// --- network: the hooks of hooks/net.bpf.h and the tables they read, as constants ---

// hooks/exe.bpf.h: the task's `when exe` patterns, committed at exec and inherited at fork.
constexpr const char* kExeHooks[] = {"bprm_committed_creds", "task_alloc"};

constexpr const char* kNetHooks[] = {"socket_create", "socket_connect", "socket_bind", "socket_sendmsg"};

std::string net_rule_initializer(const bw_net_rule& r)
{
    const auto& w = r.when;
    return fmt::format("\t{{ .addr = {{ {:#x}, {:#x}, {:#x}, {:#x} }}, .mask = {{ {:#x}, {:#x}, {:#x}, {:#x} }},\n"
                       "\t  .port_lo = {}, .port_hi = {}, .family = {}, .protocol = {}, .op = {}, .decision = {}, "
                       ".rule = {},\n"
                       "\t  .when = {{ .owner = {}, .open_flags = {:#x}, .uid_lo = {}, .uid_hi = {:#x}, .gid_lo = {}, "
                       ".gid_hi = {:#x}, .exe = {:#x} }} }},\n",
                       r.addr[0], r.addr[1], r.addr[2], r.addr[3], r.mask[0], r.mask[1], r.mask[2], r.mask[3],
                       r.port_lo, r.port_hi, r.family, r.protocol, r.op, r.decision, r.rule, w.owner, w.open_flags,
                       w.uid_lo, w.uid_hi, w.gid_lo, w.gid_hi, w.exe);
}

// A rule no query matches (its port range is empty). Linux 6.12 fails to load a program
// (EFAULT after verification) whose bpf_loop count is a constant 0, so a policy without
// endpoint rules gets this one.
bw_net_rule unmatchable_rule()
{
    bw_net_rule r{};
    r.port_lo = 1;
    r.port_hi = 0;
    r.decision = BW_DECISION_DENY;
    return r;
}

// bw_policy_net and bw_policy_net_rules; only when the tables can deny something.
std::string net_tables(const NetTables& net)
{
    auto rules = net.rules;
    if (rules.empty())
        rules.push_back(unmatchable_rule());
    // The array is padded to a power of two so that bw_net_rule_at can mask the index: a
    // mask bounds it for the verifier whatever code clang makes of the range check.
    const auto capacity = std::bit_ceil(rules.size());
    std::string out = fmt::format("\n#define BW_HOOK_NET 1\n#define BW_POLICY_NET_RULES {}\n"
                                  "#define BW_POLICY_NET_RULES_MASK {}\n",
                                  rules.size(), capacity - 1);
    out += "static const struct bw_net_policy bw_policy_net = {\n";
    out += fmt::format("\t.nrules = {},\n\t.conditional = {},\n\t.record = {},\n\t.families = {{\n",
                       rules.size(), net.policy.conditional, net.policy.record);
    for (int f = 0; f < BW_NET_FAMILIES; ++f) {
        const auto& v = net.policy.families[f];
        out += fmt::format("\t\t[{}] = {{ .create_rule = {}, .other_rule = {}, .create_decision = {}, "
                           ".other_decision = {} }}, /* {} */\n",
                           f, v.create_rule, v.other_rule, v.create_decision, v.other_decision,
                           comment_safe(family_name(f)));
    }
    out += "\t},\n};\n";
    out += fmt::format("static const struct bw_net_rule bw_policy_net_rules[{}] = {{\n", capacity);
    for (const auto& r : rules)
        out += net_rule_initializer(r);
    return out + "};\n";
}

// bw_policy_syscalls: the denied live syscalls, the others zero (allowed); only when there
// is one, else the program has no syscall hooks and a live edit moves the sandbox to the
// generic program, which has.
std::string syscall_table(const bw_syscall_policy& t)
{
    if (t.denied == 0)
        return "\n#define BW_HOOK_SYSCALLS 0\n";
    std::string out = fmt::format("\n#define BW_HOOK_SYSCALLS 1\n"
                                  "static const struct bw_syscall_policy bw_policy_syscalls = {{\n"
                                  "\t.denied = {},\n\t.numbers = {{\n",
                                  t.denied);
    for (std::size_t nr = 0; nr < BW_SYSCALL_NUMBERS; ++nr) {
        const auto& v = t.numbers[nr];
        if (v.decision == BW_DECISION_DENY)
            out += fmt::format("\t\t[{}] = {{ .rule = {}, .error = {}, .decision = BW_DECISION_DENY, .kill = {} }},\n",
                               nr, v.rule, v.error, v.kill);
    }
    return out + "\t},\n};\n";
}

} // namespace

CProgram run_backend_c(const ir::Policy& policy, const Automaton& automaton)
{
    const auto grouped = group_by_decisions(automaton);
    const auto ranges = decision_ranges(grouped);

    CProgram p;
    p.decision_ranges = ranges.size();
    p.tables = run_backend_maps(policy, grouped);
    std::string& h = p.header;
    h += fmt::format("/* bw_policy.h: generated by bwc from policy \"{}\" for specialised.bpf.c; do not edit.\n"
                     " * {} states, {} byte classes, {} ranges of states with the same decisions. */\n",
                     comment_safe(policy.name), grouped.nstates, grouped.nclasses, ranges.size());
    h += fmt::format("#define BW_POLICY_NCLASSES {}\n#define BW_POLICY_NSTATES {}\n#define BW_POLICY_NLINKS {}\n",
                     grouped.nclasses, grouped.nstates, grouped.links.size());
    h += fmt::format("#define BW_POLICY_DEFAULT_DECISION {}\n#define BW_POLICY_DEFAULT_RULE {}\n",
                     policy.path_default.decision == ir::Decision::Allow ? "BW_DECISION_ALLOW" : "BW_DECISION_DENY",
                     policy.path_default.id);
    for (const auto& hook : kHooks) {
        const bool on = needed(hook, policy, grouped);
        h += fmt::format("#define {} {}\n", hook.macro, on ? 1 : 0);
        if (on)
            p.hooks.emplace_back(hook.name);
    }
    h += fmt::format("#define BW_POLICY_HOOKS {}\n", p.hooks.size());
    // bumblewrap's own state is kept by path rules; the other invariants need their hooks.
    const auto hooked = policy.invariants() & ~static_cast<ir::InvariantMask>(ir::Invariant::Self);
    h += fmt::format("#define BW_POLICY_INVARIANTS 0x{:x} /* {} */\n#define BW_HOOK_INVARIANTS {}\n", hooked,
                     ir::invariant_names(hooked), hooked != 0 ? 1 : 0);
    if (hooked != 0)
        p.hooks.emplace_back("invariants");
    h += device_tables(p.tables.devices);
    h += "\n" + classes_table(grouped) + "\n";
    p.inline_decisions = ranges.size() <= kMaxInlineRanges;
    // Without a hook nothing calls the decision function, and libbpf would take an
    // uncalled global function for a program of unknown type.
    p.exe_patterns = grouped.exe_patterns.size();
    h += fmt::format("#define BW_POLICY_EXE_PATTERNS {}\n#define BW_HOOK_EXE {}\n#define BW_POLICY_AUDITS {}\n"
                     "#define BW_POLICY_DEVICE_PATTERNS {}\n",
                     p.exe_patterns, p.exe_patterns != 0 ? 1 : 0, policy.audits.empty() ? 0 : 1,
                     grouped.device_patterns.size());
    if (p.exe_patterns != 0)
        p.hooks.insert(p.hooks.end(), std::begin(kExeHooks), std::end(kExeHooks));
    // Every hook above names paths or keeps the mount invariant: both need to know the
    // file systems the sandbox made itself.
    const bool new_fs = !p.hooks.empty();
    h += fmt::format("#define BW_HOOK_NEW_FS {}\n", new_fs ? 1 : 0);
    if (new_fs)
        p.hooks.emplace_back("new_fs");
    if (p.hooks.empty()) {
        h += "/* No hook: nothing to decide. */\n";
    } else if (p.inline_decisions) {
        h += "#define BW_POLICY_INLINE_DECISIONS 1\n\n";
        DecisionWriter writer(policy);
        h += writer.function(grouped, ranges);
        if (p.exe_patterns != 0)
            h += writer.state_function(grouped, ranges,
                                       "the `when exe` patterns an executable whose path ends in `state` matches",
                                       "bw_policy_exe_patterns", &StateAccept::exe);
        if (!policy.audits.empty())
            h += writer.state_function(grouped, ranges, "the first link of the audit chain of `state`; 0: none",
                                       "bw_policy_audit_chain", &StateAccept::audit);
        if (!grouped.device_patterns.empty())
            h += writer.state_function(grouped, ranges,
                                       "the device rules' patterns a device node whose path ends in `state` matches",
                                       "bw_policy_device_patterns", &StateAccept::devices);
    } else {
        h += fmt::format("/* {} ranges: more than the {} inlined, so the decisions are a map. */\n"
                         "#define BW_POLICY_INLINE_DECISIONS 0\n",
                         ranges.size(), kMaxInlineRanges);
    }
    if (p.tables.net.can_deny()) {
        h += net_tables(p.tables.net);
        p.hooks.insert(p.hooks.end(), std::begin(kNetHooks), std::end(kNetHooks));
    } else {
        h += "\n#define BW_HOOK_NET 0\n";
    }
    h += syscall_table(p.tables.syscalls);
    if (p.tables.syscalls.denied != 0)
        p.hooks.emplace_back("syscalls");
    return p;
}

artifact::KernelRequirements kernel_requirements(const CProgram& program)
{
    auto k = kernel_requirements();
    for (auto& f : k.features) {
        if (f.name == "hash-of-maps in sleepable programs")
            f.why = fmt::format("each sandbox's ring buffer is an inner map of a hash-of-maps keyed by cgroup id, "
                                "looked up from the sleepable file_open; the transitions{} are array maps of the "
                                "program's own",
                                program.inline_decisions ? "" : " and decisions");
    }
    return k;
}

std::optional<std::vector<std::byte>> run_compile_c(const CProgram& program, Diagnostics& diags)
{
    auto object = backend_c::compile_bpf(program.header);
    if (const auto* failure = std::get_if<backend_c::CompileFailure>(&object)) {
        diags.report(DiagKind::SpecialisedCompileFailed, SourceLocation{}, failure->message)
            .hints.push_back(failure->module_missing
                                 ? "bwc's installation is incomplete: reinstall it, or compile with --backend=maps"
                                 : "this is a bwc bug: compile with --backend=maps meanwhile, and report it with "
                                   "the policy");
        return std::nullopt;
    }
    return std::move(std::get<std::vector<std::byte>>(object));
}

std::string dump(const CProgram& program)
{
    return "/* bpf-templates/specialised.bpf.c includes this file; hooks: " +
           (program.hooks.empty() ? std::string("none") : fmt::format("{}", fmt::join(program.hooks, ", "))) +
           " */\n" + program.header;
}

} // namespace bw
