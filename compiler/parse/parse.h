#pragma once
#include "ast/ast.h"
#include "diagnostics/diagnostics.h"
#include <optional>
namespace bw {
// Parses one file into the AST. Returns std::nullopt when any error was reported:
// a tree that had syntax errors is never walked or returned.
std::optional<ast::Module> run_parse(const SourceFile& file, Diagnostics& diags);
}
