#include "lint/lint.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace bw {

namespace {

using ir::Access;

// A component with its wildcards filled in, with names unlikely to match other rules'
// literals, so that a sample stands for the paths only the wildcard covers.
std::string fill(std::string_view component)
{
    std::string out;
    for (std::size_t i = 0; i < component.size(); ++i) {
        const char c = component[i];
        if (c == '*') {
            out += "__bw__";
        } else if (c == '?') {
            out += '~';
        } else if (c == '[') {
            const auto close = component.find(']', i + 2);
            const auto set = component.substr(i + 1, close - i - 1);
            out += set[0] == '!' ? (set.find('x') == std::string_view::npos ? 'x' : 'y') : set[0];
            i = close;
        } else {
            out += c;
        }
    }
    return out;
}

// A query that satisfies the rule's conditions, so that the rule can apply to it.
ir::PathQuery query_for(const ir::Conditions& c, Access access, const std::string& path)
{
    ir::PathQuery q;
    q.access = access;
    q.path = path;
    if (!c.exe.empty())
        q.exe = sample_paths(c.exe.front()).front();
    q.uid = c.uid ? c.uid->lo : 0;
    q.gid = c.gid ? c.gid->lo : 0;
    q.owner = c.owner;
    q.flags = c.open_flags;
    return q;
}

std::vector<Access> accesses_of(ir::AccessMask mask)
{
    std::vector<Access> out;
    for (std::size_t i = 0; i < ir::kAccessKinds; ++i) {
        if (mask & (1u << i))
            out.push_back(static_cast<Access>(i));
    }
    return out;
}

std::string describe(const ir::Policy& policy, ir::RuleId id)
{
    const auto* o = ir::find_origin(policy, id);
    if (o == nullptr)
        return fmt::format("rule #{}", id);
    return fmt::format("`{}` (line {})", o->text, o->line);
}

struct Sensitive {
    std::string path;
    ir::AccessMask accesses;
    // The invariant that keeps it closed whatever the path rules say (by device number,
    // not by a path rule the evaluator would see), unless the policy declares it unsafe.
    ir::InvariantMask kept_by = 0;
};

std::vector<Sensitive> sensitive_paths(const ir::Policy& policy)
{
    const auto rw = static_cast<ir::AccessMask>(ir::bit(Access::Read) | ir::bit(Access::Write));
    const auto w = ir::bit(Access::Write);
    const auto devices = static_cast<ir::InvariantMask>(ir::Invariant::Devices);
    std::vector<Sensitive> out = {
        {"/etc/shadow", rw}, {"/etc/gshadow", rw}, {"/etc/sudoers", rw}, {"/etc/sudoers.d/local", rw},
        {"/root/.ssh/id_rsa", rw}, {"/proc/sys/kernel/core_pattern", w}, {"/sys/fs/cgroup/cgroup.procs", w},
        {"/sys/fs/bpf/pinned", rw}, {"/dev/mem", rw, devices}, {"/dev/kmem", rw, devices},
        {"/dev/port", rw, devices}, {"/dev/sda", rw, devices}, {"/dev/nvme0n1", rw, devices},
        {"/dev/vda", rw, devices}, {"/run/docker.sock", w},
        {"/run/containerd/containerd.sock", w}, {"/run/podman/podman.sock", w}, {"/run/bumblewrap/lock", rw},
        {"/sys/fs/bpf/bumblewrap/bw_sandboxes", rw},
    };
    std::string home;
    if (const auto it = policy.bindings.find("HOME"); it != policy.bindings.end())
        home = it->second;
    else if (const char* h = std::getenv("HOME"))
        home = h;
    if (!home.empty() && home != "/") {
        out.push_back({home + "/.ssh/id_rsa", rw});
        out.push_back({home + "/.ssh/id_ed25519", rw});
        out.push_back({home + "/.gnupg/private-keys-v1.d/key", rw});
    }
    return out;
}

class Linter {
public:
    Linter(const ir::Policy& policy, Diagnostics& diags) : policy_(policy), diags_(diags) {}

    // Rules of included files are their authors' concern; only grants of sensitive paths
    // are reported wherever they come from.
    bool in_main(const ir::Provenance& o) const { return !policy_.files.empty() && o.file == policy_.files.front(); }

    void run()
    {
        conflicts();
        broad_grants();
        if (policy_.rules.size() <= kMaxPairwiseLintRules) {
            deciding();
            exec_from_writable();
        }
        sensitive();
    }

private:
    void conflicts()
    {
        for (std::size_t i = 0; i < policy_.rules.size(); ++i) {
            for (std::size_t j = i + 1; j < policy_.rules.size(); ++j) {
                const auto& a = policy_.rules[i];
                const auto& b = policy_.rules[j];
                if (a.pattern != b.pattern)
                    break; // sorted by pattern first
                if (a.conditions == b.conditions && (a.accesses & b.accesses) && a.decision != b.decision &&
                    (in_main(a.origin) || in_main(b.origin))) {
                    const auto& allow = a.decision == ir::Decision::Allow ? a : b;
                    const auto& deny = a.decision == ir::Decision::Allow ? b : a;
                    diags_.report(DiagKind::ConflictingRule, allow.origin.loc, allow.origin.text)
                        .hints.push_back(fmt::format("the deny is {}", describe(policy_, deny.id)));
                    conflicted_.insert(allow.id);
                }
            }
        }
    }

    void broad_grants()
    {
        const ir::AccessMask writes = ir::bit(Access::Write) | ir::bit(Access::Create) | ir::bit(Access::Delete) |
                                      ir::bit(Access::Rename) | ir::bit(Access::Attr) | ir::bit(Access::Link);
        for (const auto& r : policy_.rules) {
            if (r.decision != ir::Decision::Allow || ir::specificity(r.pattern).literal_prefix > 0 || !in_main(r.origin))
                continue;
            if (r.accesses & writes)
                diags_.report(DiagKind::BroadGrant, r.origin.loc,
                              fmt::format("grants {} anywhere under `/`", ir::to_string(r.accesses & writes)))
                    .hints.push_back("name the trees the program may change, e.g. `${CWD}/**` and `/tmp/**`");
            else if ((r.accesses & ir::bit(Access::Read)) && r.pattern == "/**")
                diags_.report(DiagKind::BroadGrant, r.origin.loc, "grants read of the whole filesystem")
                    .hints.push_back("include `base` and name what the program reads; `deny` secrets at least");
        }
    }

    // Never decides, or decides only what the policy decides without it. A rule written
    // with alternatives or a set is several IR rules, judged together.
    void deciding()
    {
        std::map<std::tuple<FileId, std::uint32_t, std::uint32_t>, std::vector<const ir::PathRule*>> by_origin;
        for (const auto& r : policy_.rules) {
            if (!conflicted_.contains(r.id) && in_main(r.origin))
                by_origin[{r.origin.loc.file, r.origin.loc.line, r.origin.loc.column}].push_back(&r);
        }
        for (const auto& [where, rules] : by_origin) {
            bool decides = false;
            bool changes = false;
            ir::RuleId winner = 0;
            ir::RuleId without_winner = 0;
            ir::Policy without = policy_;
            std::erase_if(without.rules, [&](const auto& x) {
                return std::find_if(rules.begin(), rules.end(), [&](const auto* r) { return r->id == x.id; }) !=
                       rules.end();
            });
            for (const auto* r : rules) {
                for (const auto& path : sample_paths(r->pattern)) {
                    for (const auto access : accesses_of(r->accesses)) {
                        const auto q = query_for(r->conditions, access, path);
                        const auto v = ir::evaluate(policy_, q);
                        if (v.rule != r->id) {
                            winner = winner ? winner : v.rule;
                            continue;
                        }
                        decides = true;
                        const auto w = ir::evaluate(without, q);
                        changes = changes || w.decision != r->decision;
                        without_winner = without_winner ? without_winner : w.rule;
                    }
                }
            }
            const auto& origin = rules.front()->origin;
            if (!decides && winner != 0) {
                diags_.report(DiagKind::RuleNeverDecides, origin.loc,
                              fmt::format("{} always takes precedence", describe(policy_, winner)))
                    .hints.push_back("remove it, or make it more specific than that rule");
            } else if (decides && !changes) {
                diags_.report(DiagKind::RedundantRule, origin.loc, describe(policy_, without_winner))
                    .hints.push_back("remove it");
            }
        }
    }

    void exec_from_writable()
    {
        for (const auto& r : policy_.rules) {
            if (r.decision != ir::Decision::Allow || !(r.accesses & ir::bit(Access::Exec)) || !in_main(r.origin))
                continue;
            for (const auto& path : sample_paths(r.pattern)) {
                const auto exec = ir::evaluate(policy_, query_for(r.conditions, Access::Exec, path));
                const auto write = ir::evaluate(policy_, query_for(r.conditions, Access::Write, path));
                if (exec.rule == r.id && write.decision == ir::Decision::Allow) {
                    diags_.report(DiagKind::ExecFromWritable, r.origin.loc, r.pattern)
                        .hints.push_back("a program that can write what it may run can run anything; keep build "
                                         "output apart, or accept this knowingly");
                    break;
                }
            }
        }
    }

    void sensitive()
    {
        // (deciding rule, access) -> sensitive paths it grants
        std::map<std::pair<ir::RuleId, Access>, std::vector<std::string>> grants;
        for (const auto& s : sensitive_paths(policy_)) {
            if (policy_.invariants() & s.kept_by)
                continue;
            for (const auto access : accesses_of(s.accesses)) {
                ir::PathQuery q;
                q.access = access;
                q.path = s.path;
                const auto v = ir::evaluate(policy_, q);
                if (v.decision == ir::Decision::Allow)
                    grants[{v.rule, access}].push_back(s.path);
            }
        }
        for (const auto& [key, paths] : grants) {
            const auto* origin = ir::find_origin(policy_, key.first);
            if (origin == nullptr)
                continue;
            std::string shown;
            for (std::size_t i = 0; i < paths.size() && i < 3; ++i)
                shown += fmt::format("{}`{}`", i ? ", " : "", paths[i]);
            if (paths.size() > 3)
                shown += fmt::format(" and {} more", paths.size() - 3);
            diags_.report(DiagKind::SensitiveGrant, origin->loc, ir::name(key.second), shown)
                .hints.push_back("deny them explicitly (include `deny-secrets`), or narrow this rule");
        }
    }

    const ir::Policy& policy_;
    Diagnostics& diags_;
    std::set<ir::RuleId> conflicted_;
};

} // namespace

std::vector<std::string> sample_paths(const std::string& pattern)
{
    // Two fillings: `**` as nothing and as two components, so both depths are tried.
    std::vector<std::string> out(2);
    for (const auto component : ir::components(pattern)) {
        if (component == "**") {
            out[1] += "/__bw__/__bw__";
        } else {
            const auto filled = fill(component);
            out[0] += "/" + filled;
            out[1] += "/" + filled;
        }
    }
    for (auto& p : out) {
        if (p.empty())
            p = "/";
    }
    if (out[0] == out[1])
        out.pop_back();
    return out;
}

void run_lint(const ir::Policy& policy, Diagnostics& diags)
{
    Linter(policy, diags).run();
}

} // namespace bw
