// bwctl syscall: the syscall rules in force, and edits of them. A syscall that an LSM hook
// of ours decides could change live; the others are decided by the seccomp filter bwrun
// installed before the program started, which the kernel lets no one loosen and which
// bwrun cannot tighten from outside. This build's hooks decide none yet (compiler/syscalls,
// kLiveHooks), so every edit is refused with the way to get the rule: a new sandbox.
#include "commands.h"

#include "enforcer.h"
#include "live_policy.h"
#include "registry.h"

#include "syscalls/syscalls.h"

#include <cstdio>
#include <fmt/format.h>

namespace bw::ctl {

namespace {

std::string enforced_by(std::string_view syscall)
{
    const auto hook = syscalls::live_hook(syscall);
    return hook.empty() ? "seccomp filter, fixed when the sandbox started"
                        : fmt::format("LSM hook {}, changeable live", hook);
}

std::optional<rt::LivePolicy> policy_of(const std::string& name)
{
    const rt::StateLock lock;
    if (!rt::find_sandbox(name)) {
        no_such_sandbox(name);
        return std::nullopt;
    }
    auto live = rt::read_live_policy(name);
    if (!live)
        std::fprintf(stderr, "bwctl: sandbox %s keeps no policy to show (a sandbox started by another bwrun "
                             "version)\n",
                     name.c_str());
    return live;
}

} // namespace

int cmd_syscall_list(const std::string& name)
{
    const auto live = policy_of(name);
    if (!live)
        return 1;
    const auto& p = live->policy;
    std::printf("#%-5u syscalls default %s  (%s)\n", p.syscall_default.id,
                ir::to_string(p.syscall_default.decision).c_str(), where(p.syscall_default.origin).c_str());
    for (const auto& r : p.syscalls)
        std::printf("#%-5u %s %s  (%s; %s)\n", r.id, ir::to_string(r.decision).c_str(), r.syscall.c_str(),
                    where(r.origin).c_str(), enforced_by(r.syscall).c_str());
    return 0;
}

int cmd_syscall_edit(const std::string& name, ir::Decision decision, const std::string& syscall)
{
    if (syscalls::find(syscall) == nullptr) {
        const auto close = syscalls::suggest_syscall(syscall);
        std::fprintf(stderr, "bwctl: `%s` is not a syscall of x86_64 or aarch64%s\n", syscall.c_str(),
                     close.empty() ? "" : fmt::format("; did you mean `{}`?", close.front()).c_str());
        return 1;
    }
    const auto live = policy_of(name);
    if (!live)
        return 1;
    const auto verdict = ir::evaluate_syscall(live->policy, syscall);
    const std::string verb = ir::to_string(decision);
    if (verdict.decision == decision) {
        std::printf("sandbox %s: %s is %s already\n", name.c_str(), syscall.c_str(),
                    decision == ir::Decision::Allow ? "allowed" : "denied");
        return 0;
    }
    std::fprintf(stderr,
                 "bwctl: %s in sandbox %s is decided by the seccomp filter that bwrun installed before the program "
                 "started, which cannot change while it runs; put `syscalls %s %s` in the policy and start a new "
                 "sandbox with it\n",
                 syscall.c_str(), name.c_str(), verb.c_str(), syscall.c_str());
    return 1;
}

} // namespace bw::ctl
