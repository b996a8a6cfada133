// The specialised backend: the policy's automaton as BPF C, compiled together with
// bpf-templates/specialised.bpf.c. The decisions become code (a switch over ranges of
// states that share their decisions), the automaton's shape becomes constants, and only
// the hooks the policy needs are switched on.
#pragma once

#include "automata/automata.h"
#include "backend_maps/backend_maps.h"
#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace bw {

struct CProgram {
    std::string header;             // bw_policy.h, included by specialised.bpf.c
    MapTables tables;               // the automaton renumbered so that equal decisions are adjacent
    std::vector<std::string> hooks; // the LSM hooks the program attaches, e.g. "file_open"
    std::size_t decision_ranges = 0;
    std::size_t exe_patterns = 0; // `when exe` patterns: the exec hooks record them
    bool inline_decisions = true; // false: too many ranges, the decisions are an array map
};

CProgram run_backend_c(const ir::Policy& policy, const Automaton& automaton);

// What the specialised program needs of the kernel: the generic program's list, except
// that its tables are maps of its own rather than inner maps per sandbox.
artifact::KernelRequirements kernel_requirements(const CProgram& program);

// The program as a BPF ELF object, by clang in a child process (see clang_compile.h).
// Reports SpecialisedCompileFailed with clang's messages when it does not compile.
std::optional<std::vector<std::byte>> run_compile_c(const CProgram& program, Diagnostics& diags);

std::string dump(const CProgram& program); // --emit=c

} // namespace bw
