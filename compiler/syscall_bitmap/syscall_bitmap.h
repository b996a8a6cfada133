// The live half of a policy's syscall rules: the syscalls an LSM hook covers
// (syscalls::lsm_hook), as one bit per syscall number and architecture, with the rule and
// the action behind each. The LSM programs can check these bits and the bits can change
// while a sandbox runs; seccomp (compiler/seccomp) decides the other syscalls and cannot
// change once installed. Decisions follow ir::evaluate_syscall.
#pragma once

#include "bumblewrap.h"
#include "ir/ir.h"
#include "syscalls/syscalls.h"

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bw {

struct LiveSyscall {
    std::uint32_t number = 0;
    std::string_view name;
    std::string_view hook;
    ir::Decision decision = ir::Decision::Allow;
    ir::RuleId rule = 0;
    ir::SyscallAction action;
};

struct SyscallBitmap {
    static constexpr std::size_t kBits = 512; // above every syscall number of both tables
    syscalls::Arch arch = syscalls::Arch::X86_64;
    std::bitset<kBits> covered; // a hook of ours can deny this number (syscalls::live_hook)
    std::bitset<kBits> denied;  // the policy denies it (covered numbers only)
    std::vector<LiveSyscall> syscalls; // the covered numbers, ascending
};


// Whether the policy says anything about syscalls; if not, bwrun installs no seccomp filter.
bool has_syscall_rules(const ir::Policy& policy);

SyscallBitmap run_compile_syscall_bitmap(const ir::Policy& policy, syscalls::Arch arch);

// The bitmap as the LSM programs read it (hooks/syscalls.bpf.h): a verdict per covered number.
bw_syscall_policy live_syscall_table(const SyscallBitmap& bitmap);

std::string dump(const SyscallBitmap& bitmap); // part of --emit=seccomp

} // namespace bw
