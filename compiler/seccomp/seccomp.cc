#include "seccomp/seccomp.h"

#include "syscall_bitmap/syscall_bitmap.h"
#include "syscalls/syscalls.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <map>

namespace bw {

namespace {

// From the x86 <asm/unistd.h>, which hosts of other architectures lack. x32 syscalls are x86_64 syscalls
// with this bit set, under the same AUDIT_ARCH_X86_64: without this check they would bypass the filter.
constexpr std::uint32_t kX32SyscallBit = 0x40000000;
constexpr std::size_t kMaxJumpOffset = 255; // jt and jf are 8 bits

constexpr std::uint32_t kNrOffset = offsetof(seccomp_data, nr);
constexpr std::uint32_t kArchOffset = offsetof(seccomp_data, arch);

sock_filter stmt(std::uint16_t code, std::uint32_t k) { return sock_filter{code, 0, 0, k}; }

sock_filter jump(std::uint16_t op, std::uint32_t k, std::size_t jt, std::size_t jf)
{
    return sock_filter{static_cast<std::uint16_t>(BPF_JMP | op | BPF_K), static_cast<std::uint8_t>(jt),
                       static_cast<std::uint8_t>(jf), k};
}

syscalls::Arch table_arch(SeccompArch arch)
{
    return arch == SeccompArch::X86_64 ? syscalls::Arch::X86_64 : syscalls::Arch::Aarch64;
}

std::uint32_t return_value(ir::Decision decision, const ir::SyscallAction& action)
{
    if (decision == ir::Decision::Allow)
        return SECCOMP_RET_ALLOW;
    if (action.kind == ir::SyscallAction::Kind::Kill)
        return SECCOMP_RET_KILL_PROCESS;
    return SECCOMP_RET_ERRNO | (static_cast<std::uint32_t>(action.errno_value) & SECCOMP_RET_DATA);
}

// Syscall numbers from `first` up to the next range's first share `ret`; the last range runs to 2^32-1.
struct Range {
    std::uint32_t first;
    std::uint32_t ret;
};

// The partition of all syscall numbers into maximal runs of one action. Numbers without a syscall on this
// architecture take the policy's default, as evaluate_syscall gives any name no rule mentions.
std::vector<Range> decide_ranges(const ir::Policy& policy, SeccompArch arch)
{
    const std::uint32_t default_ret = return_value(policy.syscall_default.decision, policy.syscall_default_action);
    std::map<std::uint32_t, std::uint32_t> by_number;
    for (const auto& s : syscalls::all()) {
        const auto nr = syscalls::number(s, table_arch(arch));
        if (!nr)
            continue;
        // The LSM programs enforce (and may change live) the syscalls their hooks cover: allow them here so
        // that a later live re-allow is not overruled by a filter that cannot be loosened.
        if (!syscalls::live_hook(s.name).empty()) {
            by_number[static_cast<std::uint32_t>(*nr)] = SECCOMP_RET_ALLOW;
            continue;
        }
        const auto v = evaluate_syscall(policy, s.name);
        by_number[static_cast<std::uint32_t>(*nr)] = return_value(v.decision, v.action);
    }
    std::vector<Range> ranges;
    auto place = [&](std::uint32_t first, std::uint32_t ret) {
        if (ranges.empty() || ranges.back().ret != ret)
            ranges.push_back({first, ret});
    };
    std::uint32_t next = 0; // the first number not yet placed
    for (const auto& [nr, ret] : by_number) {
        if (nr > next)
            place(next, default_ret);
        place(nr, ret);
        next = nr + 1;
    }
    place(next, default_ret);
    return ranges;
}

// A balanced tree over ranges[lo..hi]: `jge` on the middle range's first number, the lower half laid out right
// after it (the fall-through), then the upper half. When the lower half is too long for the 8-bit jump offset,
// a `ja` (32-bit offset) trampoline jumps over it instead.
std::vector<sock_filter> emit_tree(const std::vector<Range>& ranges, std::size_t lo, std::size_t hi)
{
    if (lo == hi)
        return {stmt(BPF_RET | BPF_K, ranges[lo].ret)};
    const std::size_t mid = lo + (hi - lo + 1) / 2;
    auto lower = emit_tree(ranges, lo, mid - 1);
    auto upper = emit_tree(ranges, mid, hi);
    std::vector<sock_filter> out;
    out.reserve(lower.size() + upper.size() + 2);
    if (lower.size() <= kMaxJumpOffset) {
        out.push_back(jump(BPF_JGE, ranges[mid].first, lower.size(), 0));
    } else {
        out.push_back(jump(BPF_JGE, ranges[mid].first, 0, 1));
        out.push_back(stmt(BPF_JMP | BPF_JA, static_cast<std::uint32_t>(lower.size())));
    }
    out.insert(out.end(), lower.begin(), lower.end());
    out.insert(out.end(), upper.begin(), upper.end());
    return out;
}

std::string return_name(std::uint32_t ret)
{
    switch (ret & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_ALLOW:
        return "ALLOW";
    case SECCOMP_RET_KILL_PROCESS:
        return "KILL_PROCESS";
    case SECCOMP_RET_ERRNO: {
        const int value = static_cast<int>(ret & SECCOMP_RET_DATA);
        const auto name = syscalls::errno_name(value);
        return name.empty() ? fmt::format("ERRNO({})", value) : fmt::format("ERRNO({}) {}", value, name);
    }
    default:
        return fmt::format("{:#x}", ret);
    }
}

} // namespace

bool same_seccomp_decisions(const ir::Policy& a, const ir::Policy& b)
{
    if (return_value(a.syscall_default.decision, a.syscall_default_action) !=
        return_value(b.syscall_default.decision, b.syscall_default_action))
        return false;
    return std::ranges::all_of(syscalls::all(), [&](const syscalls::Syscall& s) {
        if (!syscalls::live_hook(s.name).empty())
            return true;
        const auto x = evaluate_syscall(a, s.name), y = evaluate_syscall(b, s.name);
        return return_value(x.decision, x.action) == return_value(y.decision, y.action);
    });
}

std::string to_string(SeccompArch arch) { return arch == SeccompArch::X86_64 ? "x86_64" : "aarch64"; }

std::uint32_t audit_arch(SeccompArch arch)
{
    return arch == SeccompArch::X86_64 ? AUDIT_ARCH_X86_64 : AUDIT_ARCH_AARCH64;
}

std::optional<SeccompProgram> run_compile_seccomp(const ir::Policy& policy, SeccompArch arch, Diagnostics& diags,
                                                  std::size_t max_instructions)
{
    SeccompProgram p{arch, {}};
    p.code.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kArchOffset));
    p.code.push_back(jump(BPF_JEQ, audit_arch(arch), 1, 0));
    p.code.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    p.code.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, kNrOffset));
    if (arch == SeccompArch::X86_64) {
        p.code.push_back(jump(BPF_JGE, kX32SyscallBit, 0, 1));
        p.code.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    }
    const auto ranges = decide_ranges(policy, arch);
    const auto tree = emit_tree(ranges, 0, ranges.size() - 1);
    p.code.insert(p.code.end(), tree.begin(), tree.end());
    if (p.code.size() > max_instructions) {
        diags.report(DiagKind::SeccompTooLarge, policy.syscall_default.origin.loc, to_string(arch), p.code.size(),
                     max_instructions)
            .hints.push_back("deny whole groups, or pick the default that most syscalls share, so that fewer "
                             "ranges of syscall numbers differ from it");
        return std::nullopt;
    }
    return p;
}

std::string disassemble(const SeccompProgram& program)
{
    std::map<std::uint32_t, std::string_view> names;
    for (const auto& s : syscalls::all()) {
        if (const auto nr = syscalls::number(s, table_arch(program.arch)))
            names[static_cast<std::uint32_t>(*nr)] = s.name;
    }
    const std::uint32_t arch_value = audit_arch(program.arch);
    const auto arch_name = program.arch == SeccompArch::X86_64 ? "AUDIT_ARCH_X86_64" : "AUDIT_ARCH_AARCH64";

    std::string out = fmt::format("seccomp filter for {}: {} instructions, fixed from sandbox start\n", to_string(program.arch),
                                  program.code.size());
    std::uint32_t loaded = kNrOffset; // the seccomp_data field in the accumulator, to name constants
    for (std::size_t pc = 0; pc < program.code.size(); ++pc) {
        const auto& insn = program.code[pc];
        std::string text;
        if (insn.code == (BPF_LD | BPF_W | BPF_ABS)) {
            loaded = insn.k;
            text = insn.k == kNrOffset ? "ld nr" : insn.k == kArchOffset ? "ld arch" : fmt::format("ld [{}]", insn.k);
        } else if (insn.code == (BPF_RET | BPF_K)) {
            text = "ret " + return_name(insn.k);
        } else if (insn.code == (BPF_JMP | BPF_JA)) {
            text = fmt::format("ja {}", pc + 1 + insn.k);
        } else if (BPF_CLASS(insn.code) == BPF_JMP && BPF_SRC(insn.code) == BPF_K) {
            const char* op = BPF_OP(insn.code) == BPF_JEQ   ? "jeq"
                             : BPF_OP(insn.code) == BPF_JGE ? "jge"
                             : BPF_OP(insn.code) == BPF_JGT ? "jgt"
                                                            : "jset";
            std::string value = fmt::format("{}", insn.k);
            if (loaded == kArchOffset && insn.k == arch_value)
                value = arch_name;
            else if (loaded == kNrOffset && insn.k == kX32SyscallBit)
                value = "__X32_SYSCALL_BIT";
            else if (loaded == kNrOffset && names.contains(insn.k))
                value = fmt::format("{} ({})", insn.k, names.at(insn.k));
            text = fmt::format("{} {:<32} jt {:<5} jf {}", op, value, pc + 1 + insn.jt, pc + 1 + insn.jf);
        } else {
            text = fmt::format(".insn code={:#x} jt={} jf={} k={:#x}", insn.code, insn.jt, insn.jf, insn.k);
        }
        out += fmt::format("{:5}: {}\n", pc, text);
    }
    return out;
}

} // namespace bw
