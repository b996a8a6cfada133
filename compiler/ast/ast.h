// The project's own syntax tree. Only compiler/parse sees ANTLR; every later stage sees this.
#pragma once

#include "source/source.h"

#include <string>
#include <vector>

namespace bw::ast {

enum class Action { Allow, Deny };

struct DefaultStmt {
    Action action;
    SourceLocation loc; // the whole statement
};

struct PathRule {
    Action action;
    std::string pattern;        // unquoted, escapes resolved
    SourceLocation loc;         // the whole rule, for provenance
    SourceLocation pattern_loc; // just the pattern, for underlines
};

struct Policy {
    std::string name;
    SourceLocation loc;      // the `policy` keyword
    SourceLocation name_loc; // the quoted name
    std::vector<DefaultStmt> defaults;
    std::vector<PathRule> rules; // in source order
};

struct Module {
    FileId file = 0;
    std::vector<Policy> policies;
};

std::string to_string(Action action);

} // namespace bw::ast
