// Semantic checks over a resolved program: names, variables and sets are expanded, every
// pattern, access, syscall, address and device number is validated, and the rules are
// gathered into one unordered policy. Lints that need only the source (unused names,
// symlinks on this machine, syscalls seccomp must enforce) are reported here; lints that
// need the policy's meaning run after lowering (compiler/lint).
#pragma once

#include "diagnostics/diagnostics.h"
#include "ir/ir.h"
#include "resolve/resolve.h"

#include <map>
#include <optional>

namespace bw {

inline constexpr std::size_t kMaxAlternatives = 256;

struct CheckOptions {
    // Values of the built-in variables (HOME, USER, UID, GID, CWD, EXE) at compile time.
    std::map<std::string, std::string> bindings;
    // Whether to look at this machine's filesystem for rules through symlinks.
    bool check_symlinks = true;
};

// The policy's rules, validated and expanded but not yet sorted, deduplicated or numbered.
struct CheckedPolicy {
    ir::Policy policy;
};

// The built-ins' values for the process running bwc.
std::map<std::string, std::string> environment_bindings();

std::optional<CheckedPolicy> run_check(const ast::Program& program, const SourceManager& sources,
                                       const CheckOptions& options, Diagnostics& diags);

} // namespace bw
