// The intermediate representation: flat, sorted and deduplicated, so that two spellings
// of one policy give identical tables. Every rule keeps its provenance. ir::evaluate is
// the language's reference semantics and the project's oracle.
#pragma once

#include "source/source.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bw::ir {

// Values match enum bw_decision in bpf-templates/bumblewrap.h.
enum class Decision : std::uint8_t { Allow = 1, Deny = 2 };

// Values match enum bw_access_kind in bpf-templates/bumblewrap.h.
enum class Access : std::uint8_t { Read, Write, Append, Exec, Create, Delete, Rename, Link, Metadata, Attr, Ioctl };
inline constexpr std::size_t kAccessKinds = 11;
using AccessMask = std::uint16_t;
inline constexpr AccessMask kAllAccesses = (1u << kAccessKinds) - 1;

constexpr AccessMask bit(Access a)
{
    return static_cast<AccessMask>(1u << static_cast<unsigned>(a));
}
std::string_view name(Access a);
std::optional<Access> parse_access(std::string_view word); // "stat" is an alias of metadata
std::string to_string(AccessMask mask);                     // "read, write" or "all"

// Sandbox invariants (docs/security.md): what every sandbox keeps unless its policy says
// `unsafe NAME`. Values match enum bw_invariant in bpf-templates/bumblewrap.h.
enum class Invariant : std::uint16_t {
    Cgroup = 1u << 0,
    Bpf = 1u << 1,
    Perf = 1u << 2,
    Signal = 1u << 3,
    Ptrace = 1u << 4,
    Mount = 1u << 5,
    Modules = 1u << 6,
    Sysctl = 1u << 7,
    Devices = 1u << 8,
    Self = 1u << 9, // bumblewrap's own state: no policy loosens it
    Tty = 1u << 10,
    // Lifted, the sandbox may create user namespaces and mount inside the mount namespaces
    // they own; paths are still named in the sandbox's own mount namespace.
    Namespaces = 1u << 11,
};
using InvariantMask = std::uint32_t;
inline constexpr InvariantMask kAllInvariants = (1u << 12) - 1;

struct InvariantInfo {
    Invariant invariant;
    std::string_view name; // as `unsafe` names it
    std::string_view what; // what it forbids, for diagnostics and `bwc inspect`
};
// Every invariant, in bit order.
std::span<const InvariantInfo> invariants();
std::string_view name(Invariant invariant);
std::optional<Invariant> parse_invariant(std::string_view word);
std::string invariant_names(InvariantMask mask); // "mount, ptrace" or "none"

// The file used in the provenance of invariant rules, which no source file has.
inline constexpr std::string_view kInvariantFile = "<bumblewrap>";

struct Provenance {
    std::string file;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    std::string text;   // the rule as written
    SourceLocation loc; // for diagnostics about the rule (valid while its sources live)
};

using RuleId = std::uint32_t;
inline constexpr RuleId kDefaultRuleId = 1;        // the path (and device) default
inline constexpr RuleId kNetDefaultRuleId = 2;
inline constexpr RuleId kSyscallDefaultRuleId = 3;
inline constexpr RuleId kFirstRuleId = 4;          // rules are numbered from here, in table order

struct IdRange {
    std::uint32_t lo = 0;
    std::uint32_t hi = 0;
    bool operator==(const IdRange&) const = default;
    auto operator<=>(const IdRange&) const = default;
};

// When a rule applies, besides its pattern. Rules inside `when` blocks carry the block's
// conditions; `owner` and `flags` qualify single rules.
struct Conditions {
    std::vector<std::string> exe; // globs the process's executable must match (all of them)
    std::optional<IdRange> uid;
    std::optional<IdRange> gid;
    bool owner = false;           // the file's owner is the process's fsuid
    std::uint32_t open_flags = 0; // O_* bits the open must carry

    std::size_t count() const
    {
        return exe.size() + (uid ? 1 : 0) + (gid ? 1 : 0) + (owner ? 1 : 0) + (open_flags ? 1 : 0);
    }
    bool operator==(const Conditions&) const = default;
    auto operator<=>(const Conditions&) const = default;
};

// A path rule with one glob pattern (alternatives `{a,b}` are expanded into rules that
// share their provenance). Patterns are absolute; `**` is a whole component matching zero
// or more components; a trailing `/` has become `/**`. Invariant rules are added by the
// lower stage for the invariants in force, deny, and take precedence over every policy rule.
struct PathRule {
    RuleId id = 0;
    Decision decision = Decision::Deny;
    AccessMask accesses = 0;
    std::string pattern;
    Conditions conditions;
    Provenance origin;
    bool invariant = false;
};

// The path rules of the invariants in `mask`, without ids.
std::vector<PathRule> invariant_rules(InvariantMask mask);

// `audit` rules record matching accesses and never decide.
struct AuditRule {
    RuleId id = 0;
    AccessMask accesses = 0;
    std::string pattern;
    Conditions conditions;
    Provenance origin;
};

struct SyscallAction {
    enum class Kind : std::uint8_t { Errno, Kill } kind = Kind::Errno;
    int errno_value = 1; // EPERM
    bool operator==(const SyscallAction&) const = default;
    auto operator<=>(const SyscallAction&) const = default;
};

struct SyscallRule {
    RuleId id = 0;
    Decision decision = Decision::Deny;
    std::string syscall;
    bool from_group = false; // named through a group: less specific than a name
    SyscallAction action;
    Provenance origin;
};

struct NetEndpoint {
    int family = 0;                  // AF_INET or AF_INET6
    std::array<std::uint8_t, 16> address{};
    std::uint8_t prefix = 0;         // bits of `address` that must match; 0 = any address
    std::uint16_t port_lo = 0;
    std::uint16_t port_hi = 65535;
    bool operator==(const NetEndpoint&) const = default;
    auto operator<=>(const NetEndpoint&) const = default;
};

struct NetRule {
    enum class Kind : std::uint8_t { All, Family, Endpoint } kind = Kind::All;
    RuleId id = 0;
    Decision decision = Decision::Deny;
    int family = 0;          // Family
    int protocol = 0;        // Endpoint: IPPROTO_TCP or IPPROTO_UDP
    bool bind = false;       // Endpoint: bind rather than connect
    NetEndpoint endpoint;    // Endpoint
    Conditions conditions;
    Provenance origin;
};

struct DeviceRule {
    RuleId id = 0;
    Decision decision = Decision::Deny;
    AccessMask accesses = 0;
    std::string pattern;                 // by path, or empty when by number
    char type = 0;                       // 'c' or 'b' when by number
    IdRange major, minor;                // by number
    bool ioctl_any = false;
    std::vector<IdRange> ioctl_commands; // allowed ioctl command ranges
    Conditions conditions;
    Provenance origin;
};

struct Default {
    Decision decision = Decision::Deny;
    RuleId id = 0;
    Provenance origin;
};

struct Policy {
    std::string name;
    std::string description;
    std::string version;
    std::string min_kernel;
    std::vector<std::string> features;
    std::vector<std::string> files; // every source file, the main one first
    // Built-in variables the policy used, bound at compile time: name -> value.
    std::map<std::string, std::string> bindings;

    Default path_default;    // files and devices (id kDefaultRuleId)
    Default net_default;
    Default syscall_default;
    SyscallAction syscall_default_action;

    // Invariants loosened by `unsafe` statements; the others are in force.
    InvariantMask unsafe = 0;

    InvariantMask invariants() const
    {
        return kAllInvariants & ~unsafe;
    }

    std::vector<PathRule> rules; // sorted, ids ascending
    std::vector<AuditRule> audits;
    std::vector<SyscallRule> syscalls;
    std::vector<NetRule> net;
    // Learn mode's: every socket operation the policy allows is reported too. Not in the
    // language: a policy records paths with `audit` rules.
    bool record_net = false;
    std::vector<DeviceRule> devices;
};

// The rule with this id (defaults included); nullptr when there is none.
const Provenance* find_origin(const Policy& policy, RuleId id);

struct Verdict {
    Decision decision;
    RuleId rule;

    bool operator==(const Verdict&) const = default;
};

// A file access to decide. `flags` are the open's O_* bits.
struct PathQuery {
    Access access = Access::Read;
    std::string path;
    std::string exe;
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    bool owner = false;
    std::uint32_t flags = 0;
};

// The components of an absolute path or normalised pattern, without the slashes.
std::vector<std::string_view> components(std::string_view path);

// Whether a glob pattern matches a path (both absolute, no trailing `/`).
bool glob_match(std::string_view pattern, std::string_view path);
// True if the rule's conditions hold for the query.
bool conditions_hold(const Conditions& c, const PathQuery& q);

// How specific a pattern is; larger decides. See docs/language.md, "Precedence".
struct Specificity {
    std::size_t literal_prefix = 0; // bytes before the first wildcard
    bool literal = false;           // no wildcard at all
    int fewer_wildcards = 0;        // minus the number of wildcards
    std::size_t literal_bytes = 0;  // all non-wildcard bytes
    auto operator<=>(const Specificity&) const = default;
};
Specificity specificity(std::string_view pattern);

// The reference evaluator: among the rules whose pattern matches, whose accesses include
// the query's and whose conditions hold, an invariant rule decides first; otherwise the most
// specific; then the one with more conditions; then deny over allow. No rule: the default.
Verdict evaluate(const Policy& policy, const PathQuery& query);

// Audit rules: among those whose pattern matches, whose accesses include the query's and
// whose conditions hold, the most specific, then the one with more conditions, then the
// lowest id; 0 when there is none. An access is recorded only when evaluate() allows it.
RuleId evaluate_audit(const Policy& policy, const PathQuery& query);

// Syscalls: a rule naming the syscall beats one through a group; deny wins a tie.
struct SyscallVerdict {
    Decision decision;
    RuleId rule;
    SyscallAction action;
};
SyscallVerdict evaluate_syscall(const Policy& policy, std::string_view syscall);

// Sockets. Creating one is decided by the `all` and `family` rules, except that an allowed
// endpoint of the family lets it be created; connect and bind by the most specific rule:
// endpoints (longer prefix, then fewer ports) over families over `all`; deny wins a tie.
struct NetQuery {
    enum class Op : std::uint8_t { Create, Connect, Bind } op = Op::Create;
    int family = 0;
    int protocol = 0; // Connect, Bind
    std::array<std::uint8_t, 16> address{};
    std::uint16_t port = 0;
    PathQuery process; // only its exe, uid and gid matter
};
Verdict evaluate_net(const Policy& policy, const NetQuery& query);

// Device nodes: the most specific matching device rule decides (rules by path before rules
// by number; then as for paths); for ioctl, an allowing rule must also list the command.
// No device rule matches: the path rules decide, through evaluate().
struct DeviceQuery {
    PathQuery access;    // access, path and process
    char type = 'c';     // 'c' or 'b'
    std::uint32_t major = 0;
    std::uint32_t minor = 0;
    std::uint32_t ioctl_command = 0; // when access.access is ioctl
};
Verdict evaluate_device(const Policy& policy, const DeviceQuery& query);

// Whether a device rule decides an access kind: its own, and ioctl when it allows (its
// `ioctl` list names the commands; a rule without one allows none).
bool device_rule_decides(const DeviceRule& rule, Access access);
// Whether `a` decides over `b` when both match a device node: evaluate_device's precedence.
bool device_rule_precedes(const DeviceRule& a, const DeviceRule& b);

std::string to_string(Decision decision);
// A string as a policy writes it: in double quotes, with `"`, `\`, newline and tab escaped.
std::string string_literal(std::string_view text);
std::string dump(const Policy& policy); // --emit=ir

} // namespace bw::ir
