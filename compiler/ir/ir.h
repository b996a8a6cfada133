// The intermediate representation: flat, sorted and deduplicated, so that two spellings
// of one policy give identical tables. Every rule keeps its provenance.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bw::ir {

// Values match enum bw_decision in bpf-templates/bumblewrap.h.
enum class Decision : std::uint8_t { Allow = 1, Deny = 2 };

enum class MatchKind : std::uint8_t {
    Exact, // the path itself
    Tree,  // the path and everything below it (written with a trailing `/`)
};

struct Provenance {
    std::string file;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    std::string text; // the rule as written
};

using RuleId = std::uint32_t;
inline constexpr RuleId kDefaultRuleId = 1; // path rules are numbered from 2, in table order

struct PathRule {
    RuleId id = 0;
    Decision decision = Decision::Deny;
    MatchKind kind = MatchKind::Exact;
    std::string path; // normalised: no trailing `/`; the root tree is ""
    Provenance origin;
};

struct Policy {
    std::string name;
    std::vector<std::string> files; // every source file, the main one first
    Decision default_decision = Decision::Deny;
    Provenance default_origin;
    std::vector<PathRule> rules; // sorted by (path, kind, decision), ids ascending
};

// The rule with this id (the default included); nullptr when there is none.
const Provenance* find_origin(const Policy& policy, RuleId id);

struct Verdict {
    Decision decision;
    RuleId rule;

    bool operator==(const Verdict&) const = default;
};

// The reference evaluator, written from the language semantics and independent of the
// automata: the most specific matching rule decides. An exact rule beats a tree rule of
// the same path, a longer path beats a shorter one, and deny beats allow at equal
// specificity. No matching rule: the default decides.
Verdict evaluate(const Policy& policy, std::string_view path);

std::string to_string(Decision decision);
std::string dump(const Policy& policy); // --emit=ir

} // namespace bw::ir
