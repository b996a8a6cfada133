// Semantic checks: one policy per file, one default, well-formed absolute paths.
// The output carries normalised paths so that lowering needs no more validation.
#pragma once

#include "ast/ast.h"
#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

#include <optional>

namespace bw {

struct CheckedRule {
    ir::Decision decision;
    ir::MatchKind kind;
    std::string path; // normalised as in ir::PathRule
    SourceLocation loc;
};

struct CheckedPolicy {
    std::string name;
    FileId file = 0;
    ir::Decision default_decision = ir::Decision::Deny;
    SourceLocation default_loc;
    std::vector<CheckedRule> rules; // source order
};

std::optional<CheckedPolicy> run_check(const ast::Module& module, Diagnostics& diags);

} // namespace bw
