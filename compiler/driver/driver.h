// The driver: the one place that decides the order of the compiler's stages.
#pragma once

#include "automata/automata.h"
#include "backend_maps/backend_maps.h"
#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

#include <optional>
#include <span>
#include <string>

namespace bw {

// Largest policy file read; bigger input is a diagnostic, not an allocation failure.
inline constexpr std::size_t kMaxSourceBytes = 16u << 20;

enum class Emit { None, Ast, Ir, Automata, Maps };

struct Compilation {
    SourceManager sources;
    Diagnostics diags{sources};
};

// load -> parse -> check -> lower. Stops after the first stage that reports an error.
std::optional<ir::Policy> run_frontend(const std::string& path, Compilation& c, Emit emit, std::string& dump);

struct Compiled {
    ir::Policy policy;
    Automaton automaton;
    MapTables tables;
};

// run_frontend, then compile paths -> map backend. `dump` receives the requested stage's
// text; the pipeline stops after that stage.
std::optional<Compiled> run_pipeline(const std::string& path, Compilation& c, Emit emit, std::string& dump);

// Writes policy.o: `program` (the generic BPF object) plus the policy's tables. Reports
// OutputWriteFailed and leaves no partial file when it cannot.
bool run_write_artifact(const Compiled& compiled, const std::string& output, std::span<const std::byte> program,
                        Compilation& c);

} // namespace bw
