// policy.o: the generic BPF program's ELF object plus one extra section, `.bw.policy`,
// holding the policy's map tables and its rule table with provenance. bwc writes it;
// bwrun, bwctl and `bwc inspect` read it.
#pragma once

#include "backend_maps/backend_maps.h"
#include "ir/ir.h"

#include <cstddef>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace bw::artifact {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr const char* kSectionName = ".bw.policy";

// Which backend built the program: the generic one with per-sandbox tables, or a
// specialised one with the policy compiled in (its transitions still come from `tables`).
enum class Backend : std::uint32_t { Maps = 0, C = 1 };

struct RuleRecord {
    ir::RuleId id = 0;
    ir::Decision decision = ir::Decision::Deny;
    std::string file;
    std::uint32_t line = 0;
    std::uint32_t column = 0;
    std::string text; // the rule as written; "default deny" for the default
};

struct PolicyData {
    std::uint32_t format_version = kFormatVersion;
    std::uint32_t abi_version = BW_ABI_VERSION;
    Backend backend = Backend::Maps;
    std::string bwc_version;
    std::string policy_name;
    std::vector<std::string> source_files;
    MapTables tables;
    std::vector<RuleRecord> rules; // the default and every path rule, by id

    const RuleRecord* rule(ir::RuleId id) const;
};

PolicyData make_policy_data(const ir::Policy& policy, MapTables tables, std::string bwc_version);

struct Error {
    std::string message;
};

std::vector<std::byte> encode(const PolicyData& data);
std::variant<PolicyData, Error> decode(std::span<const std::byte> bytes);

// Writes atomically: a temporary file in the same folder, renamed over `path` when whole.
// The error says why, without repeating the path.
std::variant<std::monostate, Error> write(const std::string& path, std::span<const std::byte> program,
                                          const PolicyData& data);

struct Artifact {
    std::vector<std::byte> elf; // the whole object, for libbpf
    // Identifies the loaded BPF program: a hash of every section but the policy's, so that
    // all policies of the map backend compiled by one bwc build share one program (the
    // specialised backend's program also covers its transition table).
    std::uint64_t program_id = 0;
    PolicyData policy;
};

std::variant<Artifact, Error> read(const std::string& path);

} // namespace bw::artifact
