// `bwc POLICY.bwp --stats`: how big the compiled policy is and which path rules make it so,
// for authors whose automaton grows too large for the kernel (or just slow to load).
#pragma once

#include "automata/automata.h"
#include "backend_maps/backend_maps.h"
#include "ir/ir.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bw::stats {

// Up to this many path rules, each is measured by rebuilding the automaton without it;
// beyond, the rebuilds would take too long and a heuristic ranks the patterns.
inline constexpr std::size_t kMaxRemovalRules = 200;
inline constexpr std::size_t kTopContributors = 5;

struct Contributor {
    const ir::PathRule* rule = nullptr;
    std::int64_t score = 0; // states saved by removing the rule, or the heuristic's rank
};

struct Stats {
    std::size_t path_rules = 0, audit_rules = 0, syscall_rules = 0, net_rules = 0, device_rules = 0;
    std::uint32_t states = 0;
    std::uint32_t classes = 0;
    std::size_t transitions = 0;
    std::size_t trans_bytes = 0, accepts_bytes = 0, header_bytes = 0;
    enum class Method : std::uint8_t { Removal, Heuristic } method = Method::Removal;
    std::vector<Contributor> contributors; // largest first, at most kTopContributors

    std::size_t table_bytes() const { return trans_bytes + accepts_bytes + header_bytes; }
};

// `policy`, `automaton` and `tables` are one compilation's; the contributors point into `policy`.
Stats compute(const ir::Policy& policy, const Automaton& automaton, const MapTables& tables,
              std::size_t max_removal_rules = kMaxRemovalRules);

std::string render(const Stats& stats);

} // namespace bw::stats
