// Parsers and validators for the values the grammar leaves as words: patterns, versions,
// open flags, ids, socket families, endpoints, device numbers and ioctl commands.
#pragma once

#include "diagnostics/diagnostics.h"
#include "ir/ir.h"

#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace bw {

std::optional<std::tuple<int, int, int>> parse_kernel_version(std::string_view text);

// Validates an expanded pattern and returns its normalised alternatives (`{a,b}` expanded,
// a trailing `/` as `/**`); reports what is wrong and returns none otherwise.
std::vector<std::string> normalise_pattern(const std::string& pattern, const SourceLocation& loc,
                                           std::size_t max_alternatives, Diagnostics& diags);

struct SymlinkHit {
    std::string link;             // the symlink on the way
    std::string resolved_pattern; // the pattern with its literal prefix resolved
};
// The first symlink within the literal prefix of `pattern` on this machine, if any.
std::optional<SymlinkHit> symlink_on_path(const std::string& pattern);

std::optional<std::uint32_t> open_flag(std::string_view name);
std::vector<std::string> open_flag_names();

std::optional<ir::IdRange> parse_id_range(std::string_view text); // 1000 or 1000-1999

std::optional<int> socket_family(std::string_view name);
std::vector<std::string> socket_family_names();

// 10.0.0.0/8:53, [::1]:1024-65535, any:443, 127.0.0.1. `any` stands for both families.
std::variant<std::vector<ir::NetEndpoint>, std::string> parse_endpoint(std::string_view text);

std::optional<ir::IdRange> parse_ioctl_range(std::string_view text); // 0x6400-0x64ff or 0x40086409
// MAJOR:MINOR, each a number, a range or `*`.
std::variant<std::pair<ir::IdRange, ir::IdRange>, std::string> parse_device_number(std::string_view text);

} // namespace bw
