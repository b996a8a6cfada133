// Lowers a policy's syscall rules to a classic-BPF seccomp filter, one per architecture.
//
// The filter decides only the syscalls that no hook of ours covers (live_hook empty): the eBPF side cannot
// deny those, so seccomp, installed before exec and fixed from then on, must. Syscalls with an LSM hook are
// always allowed here, whatever the policy says, because the LSM programs enforce them and can change them live.
//
// Layout: check `arch` (anything else is killed), on x86_64 kill x32 numbers, then a balanced binary tree of
// `jge` over the ranges of syscall numbers that share an action, with a `ret` per range.
#pragma once

#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

#include <cstddef>
#include <cstdint>
#include <linux/filter.h>
#include <optional>
#include <string>
#include <vector>

namespace bw {

enum class SeccompArch { X86_64, Aarch64 };

struct SeccompProgram {
    SeccompArch arch;
    std::vector<sock_filter> code;
};

// Decisions follow ir::evaluate_syscall. Reports SeccompTooLarge and returns nullopt when the program would
// need more than `max_instructions` (the kernel's limit unless a test asks for less).
std::optional<SeccompProgram> run_compile_seccomp(const ir::Policy& policy, SeccompArch arch, Diagnostics& diags,
                                                  std::size_t max_instructions = BPF_MAXINSNS);

// For `bwc --emit=seccomp`: one line per instruction, jump targets as instruction indexes, syscall numbers named,
// return values named (ALLOW, ERRNO(1), KILL_PROCESS).
std::string disassemble(const SeccompProgram& program);

// Whether the two policies' filters decide alike every syscall no live hook covers, and the numbers no syscall
// has. A running sandbox can take a policy only if this holds (bwctl reload); the filters' architecture check
// may differ, as the live hooks deny other ABIs' syscalls while they deny any.
bool same_seccomp_decisions(const ir::Policy& a, const ir::Policy& b);

std::string to_string(SeccompArch arch); // "x86_64", "aarch64"
std::uint32_t audit_arch(SeccompArch arch); // AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64

} // namespace bw
