// Loads a policy file and, transitively, everything it includes. Includes are resolved
// against the including file's folder, then the library folders (stdlib-policies/).
#pragma once

#include "ast/ast.h"
#include "diagnostics/diagnostics.h"

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace bw {

// Largest policy file read; bigger input is a diagnostic, not an allocation failure.
inline constexpr std::size_t kMaxSourceBytes = 16u << 20;

struct ResolveOptions {
    std::vector<std::string> library_dirs; // searched in order after the includer's folder
};

namespace ast {

// One policy file of a program and how it was reached.
struct Unit {
    const Policy* policy;
    FileId file;
    std::vector<SourceLocation> included_at; // the `include` statements, outermost first; empty for the main file
};

// A policy with everything it includes: units[0] is the main file. Each file appears once,
// however often it is included.
struct Program {
    std::deque<Module> modules;
    std::vector<Unit> units;

    const Policy& main() const { return *units.front().policy; }
};

} // namespace ast

// Reads one file into `sources`; a diagnostic (at `from`, if given) when it cannot.
std::optional<FileId> load_file(const std::string& path, SourceManager& sources, Diagnostics& diags,
                                SourceLocation from = {});

std::optional<ast::Program> run_resolve(FileId main, SourceManager& sources, Diagnostics& diags,
                                        const ResolveOptions& options);

// "included from a.bwp:3, from main.bwp:5": hints for a diagnostic inside an included file.
std::vector<std::string> include_chain_hints(const ast::Unit& unit, const SourceManager& sources);

} // namespace bw
