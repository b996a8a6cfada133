// Path rules compiled to a deterministic automaton over the bytes of a kernel-resolved
// path, walked in the kernel one byte per step (see bpf-templates/generic.bpf.c).
//
// Step 1 patterns are literal, so the automaton is a trie: each state is a path prefix.
// Bytes that appear in no pattern share class 0, which always leads to the dead state,
// keeping a transition row as wide as the policy's alphabet rather than 256.
#pragma once

#include "bumblewrap.h"
#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

#include <array>
#include <optional>
#include <vector>

namespace bw {

struct StateAccept {
    ir::RuleId exact_rule = 0; // decides when the path ends in this state
    ir::RuleId tree_rule = 0;  // decides this prefix and below, unless a deeper state does
    std::uint8_t exact_decision = BW_DECISION_NONE;
    std::uint8_t tree_decision = BW_DECISION_NONE;
};

struct Automaton {
    std::array<std::uint8_t, 256> classes{}; // byte -> class
    std::uint32_t nclasses = 1;
    std::uint32_t nstates = 2; // BW_DEAD_STATE and BW_START_STATE
    std::vector<std::uint32_t> trans;  // nstates * nclasses; next = trans[state * nclasses + class]
    std::vector<StateAccept> accepts; // nstates

    std::uint32_t next(std::uint32_t state, unsigned char byte) const
    {
        return trans[state * nclasses + classes[byte]];
    }
};

// Largest transition table we hand to the kernel (entries of 4 bytes).
inline constexpr std::size_t kMaxTransitions = 16u << 20;

std::optional<Automaton> run_compile_paths(const ir::Policy& policy, Diagnostics& diags);

// The user-space twin of the kernel walk; tests compare it with ir::evaluate.
ir::Verdict simulate(const Automaton& automaton, const ir::Policy& policy, std::string_view path);

std::string dump(const Automaton& automaton); // --emit=automata

} // namespace bw
