// bwctl syscall list: the syscall rules in force, and what enforces each. A syscall that an
// LSM hook of ours sees on every call (compiler/syscalls, live_hook) changes live (edit.cc);
// the others are decided by the seccomp filter bwrun installed before the program started,
// which the kernel lets no one loosen and which bwrun cannot tighten from outside.
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

} // namespace bw::ctl
