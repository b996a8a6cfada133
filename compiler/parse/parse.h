#pragma once
#include "ast/ast.h"
#include "diagnostics/diagnostics.h"
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>
namespace bw {
// Parses one file into the AST. Returns std::nullopt when any error was reported:
// a tree that had syntax errors is never walked or returned.
std::optional<ast::Module> run_parse(const SourceFile& file, Diagnostics& diags);

// One token as the lexer saw it, for tools that work on the text (`bwc fmt`).
struct LexToken {
    // Keyword: a keyword's spelling, even where the grammar takes it as a name (`syscalls
    // allow read`).
    enum class Kind { Keyword, Punct, String, Path, Group, SetRef, Word, Comment };
    Kind kind;
    std::string_view text;   // exactly as written (strings keep their quotes and escapes)
    std::uint32_t line;      // 1-based
    std::uint32_t column;    // 1-based, bytes
    // The first token of a `policy` or of a statement. Statements are separated by whitespace
    // only, so where one ends is known to the parser alone.
    bool starts_statement;
};
// All tokens including comments, in order, when the file parses without errors; std::nullopt
// (with diagnostics) otherwise. Only the syntax is checked: string escapes are not resolved.
std::optional<std::vector<LexToken>> run_lex(const SourceFile& file, Diagnostics& diags);
}
