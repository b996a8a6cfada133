// SHA-256 (FIPS 180-4), for the source hashes an artifact records: enough to tell which
// bytes a policy was compiled from, with no crypto library among the dependencies.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bw {

std::array<std::uint8_t, 32> sha256(std::string_view data);

// Lowercase hex, as sha256sum prints it.
std::string sha256_hex(std::string_view data);

} // namespace bw
