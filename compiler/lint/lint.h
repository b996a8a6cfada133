// Lints that need the policy's meaning: rules that never decide or repeat a broader one,
// contradictions, overly broad grants, exec from writable trees, and grants on sensitive
// paths. Each asks the reference evaluator about sample paths of the rules' patterns.
#pragma once

#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

namespace bw {

// Pairwise lints cost rules^2 evaluations; past this many path rules they are skipped.
inline constexpr std::size_t kMaxPairwiseLintRules = 1000;

// Paths a pattern matches, for lints and tests: wildcards filled in with sample names.
std::vector<std::string> sample_paths(const std::string& pattern);

void run_lint(const ir::Policy& policy, Diagnostics& diags);

} // namespace bw
