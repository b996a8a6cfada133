// Live edits (bwctl): rules added to and removed from a running sandbox's policy, which
// then compiles to new tables exactly as a policy file does. A live rule is an ordinary
// rule of the IR: the same precedence decides, and the same evaluator is its oracle.
#pragma once

#include "backend_maps/backend_maps.h"
#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bw::live {

// Who made an edit, and when: the provenance of its rules ("live edit at TIME by uid N").
struct EditOrigin {
    std::int64_t unix_time = 0;
    std::uint32_t uid = 0;
};

// Adds the path and network rules, and the syscall rules a live hook decides, of `rules`
// (a one-rule policy from the front end) to the policy with fresh ids, from `next` on and
// after every id in use, so that existing rules keep theirs; `next` moves past them.
// Returns the new ids. A rule the policy has already (same meaning, conditions and
// decision) is not repeated.
std::vector<ir::RuleId> add_rules(ir::Policy& policy, const ir::Policy& rules, const EditOrigin& origin,
                                  const std::string& text, ir::RuleId& next);

// Removes the policy's path, network or syscall rule with this id; false when there is
// none, when it is an invariant's (no edit loosens those), or when it is a syscall rule
// the seccomp filter enforces, fixed when the sandbox started.
bool remove_rule(ir::Policy& policy, ir::RuleId id);
// Removes the rules that name `syscall` itself (not through a group) with `decision`: a
// rule of the other decision added for it would not beat a deny (deny wins a tie), and
// would leave an allow standing beside it. Returns their ids.
std::vector<ir::RuleId> remove_named_syscall(ir::Policy& policy, const std::string& syscall, ir::Decision decision);
// Removes the policy's path rules whose pattern is `pattern` (as the front end normalised
// it); returns their ids.
std::vector<ir::RuleId> remove_pattern(ir::Policy& policy, const std::string& pattern);

// The generic program's tables for the policy: the compile-paths stage, then the map
// backend, as bwc runs them.
std::optional<MapTables> compile_tables(const ir::Policy& policy, Diagnostics& diags);

// "live edit at 2026-12-07T10:00:00Z by uid 0"
std::string describe(const EditOrigin& origin);

} // namespace bw::live
