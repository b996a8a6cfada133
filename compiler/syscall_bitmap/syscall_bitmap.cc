#include "syscall_bitmap/syscall_bitmap.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace bw {

bool has_syscall_rules(const ir::Policy& policy)
{
    return !policy.syscalls.empty() || policy.syscall_default.decision == ir::Decision::Deny;
}

SyscallBitmap run_compile_syscall_bitmap(const ir::Policy& policy, syscalls::Arch arch)
{
    SyscallBitmap b;
    b.arch = arch;
    for (const auto& s : syscalls::all()) {
        const auto hook = syscalls::live_hook(s.name);
        const auto nr = syscalls::number(s, arch);
        if (hook.empty() || !nr)
            continue;
        const auto number = static_cast<std::uint32_t>(*nr);
        const auto v = ir::evaluate_syscall(policy, s.name);
        b.covered.set(number);
        b.denied.set(number, v.decision == ir::Decision::Deny);
        b.syscalls.push_back({number, s.name, hook, v.decision, v.rule, v.action});
    }
    std::sort(b.syscalls.begin(), b.syscalls.end(),
              [](const LiveSyscall& x, const LiveSyscall& y) { return x.number < y.number; });
    return b;
}

bw_syscall_policy live_syscall_table(const SyscallBitmap& b)
{
    bw_syscall_policy t{};
    static_assert(SyscallBitmap::kBits == BW_SYSCALL_NUMBERS);
    for (const auto& s : b.syscalls) {
        auto& v = t.numbers[s.number];
        v.rule = s.rule;
        if (s.decision != ir::Decision::Deny) {
            v.decision = BW_DECISION_ALLOW;
            continue;
        }
        v.decision = BW_DECISION_DENY;
        v.kill = s.action.kind == ir::SyscallAction::Kind::Kill ? 1 : 0;
        v.error = static_cast<std::uint16_t>(s.action.errno_value);
        ++t.denied;
    }
    return t;
}

std::string dump(const SyscallBitmap& b)
{
    std::string out = fmt::format("live syscalls, {}: {} covered by LSM hooks (bwctl can change them), {} denied\n",
                                  b.arch == syscalls::Arch::X86_64 ? "x86_64" : "aarch64", b.covered.count(),
                                  b.denied.count());
    for (const auto& s : b.syscalls) {
        if (s.decision != ir::Decision::Deny)
            continue;
        const auto action = s.action.kind == ir::SyscallAction::Kind::Kill
                                ? std::string("KILL")
                                : fmt::format("ERRNO({})", s.action.errno_value);
        out += fmt::format("  {:>4} {:<24} deny {:<10} by rule #{} at {}\n", s.number, s.name, action, s.rule, s.hook);
    }
    return out;
}

} // namespace bw
