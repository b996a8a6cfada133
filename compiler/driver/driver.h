// The driver: the one place that decides the order of the compiler's stages.
//
//   load -> parse -> resolve (includes) -> check -> lower -> lint -> compile paths
//        -> backend maps (the generic program's tables)
//         | backend c (a specialised program, compiled by clang in a child process)
//
// Each stage stops the pipeline when it reports an error; --emit=STAGE prints a stage's
// output and stops there.
#pragma once

#include "artifact/artifact.h"
#include "automata/automata.h"
#include "backend_maps/backend_maps.h"
#include "check/check.h"
#include "diagnostics/diagnostics.h"
#include "ir/ir.h"
#include "learn/learn.h"
#include "resolve/resolve.h"

#include <optional>
#include <span>
#include <string>

namespace bw {

// Seccomp prints both architectures' live syscall bitmaps (the syscalls our LSM hooks deny, changeable live) and
// seccomp filters (the rest, fixed from sandbox start), right after the front end.
enum class Emit { None, Ast, Ir, Automata, Maps, C, Seccomp };

struct Compilation {
    SourceManager sources;
    Diagnostics diags{sources};
};

struct PipelineOptions {
    ResolveOptions resolve;
    CheckOptions check;
    Emit emit = Emit::None;
    artifact::Backend backend = artifact::Backend::Maps;
};

// Where the standard library of policies is found: $BWC_PATH (colon-separated), then the
// installed and the source tree's stdlib-policies/.
std::vector<std::string> default_library_dirs();
// Library dirs and bindings of this process, ready to use.
PipelineOptions default_options();

struct Compiled {
    ir::Policy policy;
    Automaton automaton;
    artifact::Backend backend = artifact::Backend::Maps;
    MapTables tables;               // what bwrun loads into the program's maps
    std::vector<std::byte> program; // the BPF ELF object
    artifact::KernelRequirements kernel;
    std::vector<artifact::SeccompFilter> seccomp; // empty when the policy has no syscall rule
};

// The front end and the middle: an IR with its lints reported.
std::optional<ir::Policy> run_frontend(FileId main, Compilation& c, const PipelineOptions& options, std::string& dump);

// Everything from a file on disk; `dump` receives the requested stage's text.
std::optional<Compiled> run_pipeline(const std::string& path, Compilation& c, const PipelineOptions& options,
                                     std::string& dump);

// One rule written as in a policy (`allow read, write "/srv/**"`, `net allow tcp connect
// 10.0.0.1:443`), through the same front end as a policy file named `name`: the one-rule
// policy it lowers to (alternatives expanded, invariant rules added as in any policy).
// Diagnostics point into the rule as written, inside a one-line policy.
std::optional<ir::Policy> run_rule_frontend(const std::string& rule, const std::string& name, Compilation& c);

// Learn mode's policy (bwrun --learn records, `bwc learn` writes): drafted from the
// recording with the standard library's policies, then compiled and checked with the
// reference evaluator until it allows every recorded access; formatted as `bwc fmt` does.
// `out` names the file in diagnostics. nullopt when the draft does not compile.
std::optional<std::string> run_learn_pipeline(const learn::Recording& recording, const std::string& name,
                                              const std::string& out, Compilation& c);

// Writes policy.o: the program plus the policy's tables. Reports OutputWriteFailed and
// leaves no partial file when it cannot.
bool run_write_artifact(const Compiled& compiled, const std::string& output, Compilation& c);

} // namespace bw
