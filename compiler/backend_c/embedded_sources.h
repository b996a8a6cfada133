// The specialised backend's BPF template and the headers it includes, embedded in bwc at
// build time (cmake/EmbedBpfSources.cmake) and served to clang from memory.
#pragma once

#include <span>
#include <string_view>

namespace bw::backend_c {

inline constexpr std::string_view kTemplateRoot = "/bumblewrap/templates";
inline constexpr std::string_view kIncludeRoot = "/bumblewrap/include";
inline constexpr std::string_view kTemplateFile = "/bumblewrap/templates/specialised.bpf.c";
inline constexpr std::string_view kPolicyHeader = "/bumblewrap/templates/bw_policy.h";

struct EmbeddedFile {
    std::string_view path; // under kTemplateRoot or kIncludeRoot
    std::string_view text;
};

extern const std::span<const EmbeddedFile> embedded_sources;

} // namespace bw::backend_c
