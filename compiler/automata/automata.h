// Path rules compiled to one deterministic automaton over the bytes of a kernel-resolved
// path, walked in the kernel one byte per step (see bpf-templates/generic.bpf.c).
//
// Each pattern becomes an NFA (Thompson construction: `*` is [^/]*, `?` is [^/], `**` is
// (/[^/]*)*), all of them are joined, and subset construction gives the DFA. Bytes that
// every pattern treats alike share a class, so a row is as wide as the policy's alphabet.
// Each state records, per access kind, the rule that decides a path ending there (by the
// precedence of ir::evaluate). A state whose every transition leads back to itself is
// absorbing: whatever follows, the decision stays, and the walk stops there.
//
// Conditional rules (`when uid`, `owner`, `flags`) decide only at run time. Where one is
// a candidate, the state's decision is BW_DECISION_CHAIN and its rule the first link of a
// decision chain: the candidates in precedence order down to the first unconditional one
// (or the default). The kernel takes the first link whose conditions hold. States without
// conditional candidates keep their plain decision, so unconditional policies pay nothing.
//
// `when exe` patterns join the same automaton: each state also records which of them a
// path ending there matches. The kernel walks each executable's path at exec, keeps that
// mask with the task (inherited at fork), and a link's exe patterns hold when the task's
// mask has them all.
//
// `audit` rules join it too: a state where audit rules match has an audit chain, those
// rules strongest first, each with the access kinds it records; the kernel names the
// first that holds and records a kind of an access it allowed.
//
// So do the patterns of device rules by path: each state records which of them a device
// node whose path ends there matches, and the device table (compiler/devices) names each
// rule's pattern by its bit.
#pragma once

#include "bumblewrap.h"
#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

#include <array>
#include <optional>
#include <vector>

namespace bw {

struct StateAccept {
    std::array<ir::RuleId, ir::kAccessKinds> rule{};       // 0: no rule, the default decides; CHAIN: a link
    std::array<std::uint8_t, ir::kAccessKinds> decision{}; // enum bw_decision
    std::uint32_t exe = 0;   // bit i: exe_patterns[i] matches a path ending here
    ir::RuleId audit = 0;    // the first link of the state's audit chain; 0: none
    std::uint32_t devices = 0; // bit i: device_patterns[i] matches a path ending here
    bool absorbing = false;
};

// One candidate of a decision chain or an audit chain (struct bw_link in the kernel).
struct Link {
    std::uint32_t conditions = 0;             // index into Automaton::conditions; 0: none
    std::uint8_t decision = BW_DECISION_NONE; // NONE: the default decides (audit: nothing is recorded)
    ir::RuleId rule = 0;
    ir::AccessMask kinds = 0;                 // audit chains: the kinds the rule records
    bool operator==(const Link&) const = default;
};

struct Automaton {
    std::array<std::uint8_t, 256> classes{}; // byte -> class
    std::uint32_t nclasses = 1;
    std::uint32_t nstates = 2; // BW_DEAD_STATE and BW_START_STATE
    std::vector<std::uint32_t> trans;  // nstates * nclasses; next = trans[state * nclasses + class]
    std::vector<StateAccept> accepts;  // nstates
    // Deduplicated; [0] is no condition at all, which ends every chain.
    std::vector<ir::Conditions> conditions{ir::Conditions{}};
    // The decision chains, each ending with an unconditional link; link 0 is in none.
    std::vector<Link> links{Link{}};
    // The distinct `when exe` patterns of the path, audit and device rules; the index is the
    // mask bit.
    std::vector<std::string> exe_patterns;
    // The distinct patterns of the device rules by path; the index is the mask bit.
    std::vector<std::string> device_patterns;

    std::uint32_t next(std::uint32_t state, unsigned char byte) const
    {
        return trans[std::size_t{state} * nclasses + classes[byte]];
    }
};

// Bounds on the subset construction, whose work and memory can grow exponentially with
// wildcards (`/*a???...?` doubles the states with every `?`): it stops with a diagnostic
// at the first bound reached. The defaults take 10,000 ordinary rules (150,000 states).
struct AutomatonLimits {
    std::size_t max_states = 1u << 18;
    std::size_t max_transitions = 16u << 20;
    std::size_t max_nfa_entries = 16u << 20; // NFA states summed over all DFA states
};

// The mask of `c`'s exe patterns, which a task's mask must hold all of.
std::uint32_t exe_mask(const Automaton& automaton, const ir::Conditions& c);
// A link that holds where `c` holds (its decision and rule left unset).
bw_link condition_link(const Automaton& automaton, const ir::Conditions& c);
// " when uid LO-HI gid LO-HI owner O flags F exe E" for a link that has conditions, for
// the dumps of tables that carry them; empty for one that holds always.
std::string condition_text(const bw_link& link);
// The bit of a device rule's pattern; 0 for a rule by number.
std::uint32_t device_pattern_bit(const Automaton& automaton, const ir::DeviceRule& rule);

std::optional<Automaton> run_compile_paths(const ir::Policy& policy, Diagnostics& diags,
                                          const AutomatonLimits& limits = {});

// The user-space twin of the kernel walk and its decision chains; tests compare it with
// ir::evaluate.
ir::Verdict simulate(const Automaton& automaton, const ir::Policy& policy, const ir::PathQuery& query);
// The same for audit chains; tests compare it with ir::evaluate_audit.
ir::RuleId simulate_audit(const Automaton& automaton, const ir::PathQuery& query);
// Where the kernel's walk of a path ends: the exe and device patterns it matches.
const StateAccept& simulate_walk(const Automaton& automaton, std::string_view path);

std::string dump(const Automaton& automaton); // --emit=automata

} // namespace bw
