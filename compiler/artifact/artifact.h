// policy.o: the BPF program's ELF object plus one extra section, `.bw.policy`, holding
// what produced it (bwc, backend, the sources and their SHA-256), what the program needs
// of the kernel, the policy's map tables, and the whole IR. bwc writes it; bwrun and
// `bwc inspect` and `bwc query` read it.
#pragma once

#include "artifact/codec.h"
#include "artifact/features.h"
#include "backend_maps/backend_maps.h"
#include "ir/ir.h"
#include "source/source.h"

#include <cstddef>
#include <cstdint>
#include <linux/filter.h>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace bw::artifact {

inline constexpr std::uint32_t kFormatVersion = 13;
inline constexpr const char* kSectionName = ".bw.policy";

// The compiler backend that produced the program. Both fill the same map tables.
enum class Backend : std::uint32_t { Maps = 0, C = 1 };
std::string_view name(Backend backend);

struct SourceRecord {
    std::string name;   // as bwc named it
    std::string sha256; // lowercase hex, of the bytes bwc read
};

// A classic-BPF seccomp program for one architecture (compiler/seccomp): bwrun installs the one for its own.
struct SeccompFilter {
    std::uint32_t audit_arch = 0; // AUDIT_ARCH_X86_64 or AUDIT_ARCH_AARCH64
    std::vector<sock_filter> code;
};

struct PolicyData {
    std::uint32_t format_version = kFormatVersion;
    std::uint32_t abi_version = BW_ABI_VERSION;
    std::string bwc_version;
    Backend backend = Backend::Maps;
    std::vector<SourceRecord> sources; // every file bwc read, the main one first
    KernelRequirements kernel;
    MapTables tables;
    // The policy itself: `bwc query` evaluates it, and its provenance names the rule
    // behind each denial (so no separate rule table is stored).
    ir::Policy ir;
    // Empty when the policy has no syscall rule: bwrun then installs no filter.
    std::vector<SeccompFilter> seccomp;

    // The rule with this id (defaults included), as written; nullptr when there is none.
    const ir::Provenance* rule(ir::RuleId id) const;
};

// `sources` holds every file the compilation read; each is recorded with its SHA-256.
PolicyData make_policy_data(const ir::Policy& policy, const SourceManager& sources, Backend backend,
                            MapTables tables, KernelRequirements kernel, std::string bwc_version);

std::vector<std::byte> encode(const PolicyData& data);
std::variant<PolicyData, Error> decode(std::span<const std::byte> bytes);

// Writes atomically: a temporary file in the same folder, renamed over `path` when whole.
// The error says why, without repeating the path.
std::variant<std::monostate, Error> write(const std::string& path, std::span<const std::byte> program,
                                          const PolicyData& data);

struct Artifact {
    std::vector<std::byte> elf; // the whole object, for libbpf
    // Identifies the BPF program: a hash of every section but the policy's, so that
    // all policies compiled by one bwc build share one loaded program.
    std::uint64_t program_id = 0;
    PolicyData policy;
};

// An artifact bigger than this is not one bwc wrote: read() and the nesting broker refuse it.
inline constexpr std::size_t kMaxArtifactBytes = 64u << 20;

std::variant<Artifact, Error> read(const std::string& path);

// An id for a BPF object that has no policy section (the generic program nested sandboxes use).
std::uint64_t program_id(std::span<const std::byte> elf);

// Whether the file starts with the ELF magic: an artifact rather than policy text.
bool is_elf_file(const std::string& path);

} // namespace bw::artifact
