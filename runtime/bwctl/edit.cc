// The verbs that change a running sandbox's policy: allow, deny, remove, reload. Each
// reads the policy in force, changes it, compiles the result as bwc would, and puts it in
// force under the StateLock, so that two bwctl processes editing at once take turns.
#include "commands.h"

#include "enforcer.h"
#include "failure.h"
#include "live_policy.h"
#include "registry.h"

#include "artifact/artifact.h"
#include "driver/driver.h"
#include "live/live.h"
#include "seccomp/seccomp.h"
#include "syscalls/syscalls.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <fmt/format.h>
#include <functional>
#include <unistd.h>

namespace bw::ctl {

namespace {

// What a change did: its description for the audit trail, or why there is nothing to do.
struct Change {
    std::string description;
    bool nothing_to_do = false;
};

// Reads the policy in force in sandbox `name`, lets `change` edit a copy (it returns
// nullopt after printing why it refuses), and puts the copy in force as the next version.
int edit_policy(const std::string& name, Compilation& c,
                const std::function<std::optional<Change>(rt::LivePolicy&)>& change)
{
    const rt::StateLock lock;
    auto record = rt::find_sandbox(name);
    if (!record || !rt::supervisor_alive(*record))
        return no_such_sandbox(name);
    const auto current = rt::read_live_policy(name);
    if (!current) {
        std::fprintf(stderr, "bwctl: sandbox %s has no policy to edit (it was started by another bwrun version); "
                             "start it again to edit it\n",
                     name.c_str());
        return 1;
    }
    auto next = *current;
    const auto done = change(next);
    if (!done)
        return 1;
    if (done->nothing_to_do) {
        std::printf("%s\n", done->description.c_str());
        return 0;
    }
    next.version = current->version + 1;
    next.change = fmt::format("{} by uid {}", done->description, getuid());
    if (!rt::put_in_force(*record, *current, next, c.diags)) {
        c.diags.print(stderr, isatty(STDERR_FILENO) != 0);
        return 1;
    }
    std::printf("sandbox %s: policy version %u: %s\n", name.c_str(), next.version, done->description.c_str());
    return 0;
}

std::string id_list(const std::vector<ir::RuleId>& ids)
{
    std::string out;
    for (const auto id : ids)
        out += fmt::format("{}#{}", out.empty() ? "" : ", ", id);
    return out;
}

std::string expiry_text(std::int64_t at)
{
    const std::time_t t = static_cast<std::time_t>(at);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return when;
}

std::optional<ir::RuleId> rule_id(std::string_view what)
{
    if (what.starts_with('#'))
        what.remove_prefix(1);
    ir::RuleId id = 0;
    const auto [end, ec] = std::from_chars(what.data(), what.data() + what.size(), id);
    if (ec != std::errc() || end != what.data() + what.size() || what.empty())
        return std::nullopt;
    return id;
}

} // namespace

namespace {

// Adds the rule `rule`, written as in a policy, to sandbox `name`'s policy; `source` names
// the command line in diagnostics.
int add_rule(const std::string& name, const std::string& rule, const std::string& source,
             std::optional<std::int64_t> for_seconds)
{
    Compilation c;
    const auto rules = run_rule_frontend(rule, source, c);
    if (!rules) {
        c.diags.print(stderr, isatty(STDERR_FILENO) != 0);
        return 1;
    }
    return edit_policy(name, c, [&](rt::LivePolicy& live) -> std::optional<Change> {
        const live::EditOrigin origin{static_cast<std::int64_t>(std::time(nullptr)), getuid()};
        const auto ids = live::add_rules(live.policy, *rules, origin, rule, live.next_rule);
        if (ids.empty())
            return Change{fmt::format("sandbox {}: `{}` is in force already", name, rule), true};
        std::string description = fmt::format("`{}` as rule {}", rule, id_list(ids));
        if (for_seconds) {
            const std::int64_t expires = origin.unix_time + *for_seconds;
            live.grants.push_back({ids, expires});
            description += fmt::format(" until {}", expiry_text(expires));
        }
        return Change{description};
    });
}

} // namespace

int cmd_rule(const RuleEdit& edit)
{
    std::string kinds = edit.access;
    std::replace(kinds.begin(), kinds.end(), ',', ' ');
    // `read write` -> `read, write`, as a policy lists them.
    std::string list;
    for (std::size_t at = 0; at < kinds.size();) {
        const auto start = kinds.find_first_not_of(' ', at);
        if (start == std::string::npos)
            break;
        const auto end = std::min(kinds.find(' ', start), kinds.size());
        list += (list.empty() ? "" : ", ") + kinds.substr(start, end - start);
        at = end;
    }
    const std::string verb = edit.decision == ir::Decision::Allow ? "allow" : "deny";
    // Quoted, so that any path is one token of the rule.
    const auto rule = fmt::format("{} {} {}", verb, list, ir::string_literal(edit.pattern));
    return add_rule(edit.name, rule, "<bwctl " + verb + ">", edit.for_seconds);
}

int cmd_net(const std::string& name, ir::Decision decision, const std::vector<std::string>& words,
            std::optional<std::int64_t> for_seconds)
{
    const std::string verb = decision == ir::Decision::Allow ? "allow" : "deny";
    std::string rule = "net " + verb;
    for (const auto& w : words)
        rule += " " + w;
    return add_rule(name, rule, "<bwctl net " + verb + ">", for_seconds);
}

int cmd_syscall_edit(const std::string& name, ir::Decision decision, const std::string& syscall)
{
    if (syscalls::find(syscall) == nullptr) {
        const auto close = syscalls::suggest_syscall(syscall);
        std::fprintf(stderr, "bwctl: `%s` is not a syscall of x86_64 or aarch64%s\n", syscall.c_str(),
                     close.empty() ? "" : fmt::format("; did you mean `{}`?", close.front()).c_str());
        return 1;
    }
    const std::string verb = ir::to_string(decision);
    const auto rule = fmt::format("syscalls {} {}", verb, syscall);
    const bool live = !syscalls::live_hook(syscall).empty();
    Compilation c;
    const auto rules = run_rule_frontend(rule, "<bwctl syscall " + verb + ">", c);
    if (!rules) {
        c.diags.print(stderr, isatty(STDERR_FILENO) != 0);
        return 1;
    }
    return edit_policy(name, c, [&](rt::LivePolicy& live_policy) -> std::optional<Change> {
        auto& policy = live_policy.policy;
        if (ir::evaluate_syscall(policy, syscall).decision == decision)
            return Change{fmt::format("sandbox {}: {} is {} already", name, syscall,
                                      decision == ir::Decision::Allow ? "allowed" : "denied"),
                          true};
        if (!live) {
            std::fprintf(stderr,
                         "bwctl: %s in sandbox %s is decided by the seccomp filter that bwrun installed before the "
                         "program started, which cannot change while it runs; put `%s` in the policy and start a new "
                         "sandbox with it\n",
                         syscall.c_str(), name.c_str(), rule.c_str());
            return std::nullopt;
        }
        const auto other = decision == ir::Decision::Allow ? ir::Decision::Deny : ir::Decision::Allow;
        const auto replaced = live::remove_named_syscall(policy, syscall, other);
        const live::EditOrigin origin{static_cast<std::int64_t>(std::time(nullptr)), getuid()};
        const auto ids = live::add_rules(policy, *rules, origin, rule, live_policy.next_rule);
        if (ir::evaluate_syscall(policy, syscall).decision != decision) {
            std::fprintf(stderr, "bwctl: `%s` did not decide %s in the edited policy, which is left as it was; this "
                                 "is a bwctl bug, please report it\n",
                         rule.c_str(), syscall.c_str());
            return std::nullopt;
        }
        std::string description = fmt::format("`{}` as rule {}", rule, id_list(ids));
        if (!replaced.empty())
            description += fmt::format(", replacing rule {} for {}", id_list(replaced), syscall);
        return Change{description};
    });
}

int cmd_remove(const std::string& name, const std::string& what)
{
    Compilation c;
    const auto id = rule_id(what);
    std::optional<ir::Policy> patterns;
    if (!id) {
        // The pattern as the front end normalises it (a trailing `/` is `/**`), as rules hold it.
        patterns = run_rule_frontend("allow read " + ir::string_literal(what), "<bwctl remove>", c);
        if (!patterns) {
            c.diags.print(stderr, isatty(STDERR_FILENO) != 0);
            return 1;
        }
    }
    return edit_policy(name, c, [&](rt::LivePolicy& live) -> std::optional<Change> {
        std::vector<ir::RuleId> removed;
        std::string text;
        if (id) {
            // Copied: removing the rule frees its provenance.
            const auto* origin = ir::find_origin(live.policy, *id);
            text = origin ? origin->text : "";
            if (live::remove_rule(live.policy, *id))
                removed.push_back(*id);
        } else {
            for (const auto& p : patterns->rules) {
                if (p.invariant)
                    continue;
                for (const auto r : live::remove_pattern(live.policy, p.pattern))
                    removed.push_back(r);
            }
            text = what;
        }
        if (removed.empty()) {
            std::fprintf(stderr,
                         "bwctl: sandbox %s has no rule %s%s; `bwctl show %s` lists its rules\n", name.c_str(),
                         id ? "#" : "matching ", id ? std::to_string(*id).c_str() : ir::string_literal(what).c_str(),
                         name.c_str());
            return std::nullopt;
        }
        return Change{fmt::format("removed `{}` (rule {})", text, id_list(removed))};
    });
}

int cmd_reload(const std::string& name, const std::string& path)
{
    const auto read = artifact::read(path);
    if (const auto* e = std::get_if<artifact::Error>(&read)) {
        std::fprintf(stderr, "bwctl: %s\n", e->message.c_str());
        return 1;
    }
    const auto& art = std::get<artifact::Artifact>(read);
    Compilation c;
    return edit_policy(name, c, [&](rt::LivePolicy& live) -> std::optional<Change> {
        if (!same_seccomp_decisions(live.policy, art.policy.ir)) {
            std::fprintf(stderr,
                         "bwctl: %s has other syscall rules than sandbox %s for syscalls no LSM hook covers: they are "
                         "a seccomp filter, fixed when the sandbox started; start a new sandbox with it instead\n",
                         path.c_str(), name.c_str());
            return std::nullopt;
        }
        live.source = path;
        live.sha256 = art.policy.sources.empty() ? "" : art.policy.sources.front().sha256;
        live.policy = art.policy.ir;
        // The live edits and their grants belonged to the policy being replaced.
        live.grants.clear();
        return Change{fmt::format("reloaded from {} (policy `{}`)", path, art.policy.ir.name)};
    });
}

} // namespace bw::ctl
