// Compiles the specialised BPF program with clang 19's libraries, in a child process:
// a second CO-RE compile in one process crashes inside LLVM's BPF backend, so every
// compile gets a fresh fork, and only that child loads the libraries (clang_module.cc,
// built as bumblewrap-clang.so). Sources come from memory (embedded_sources.h plus the
// generated policy header); DWARF is stripped and BTF kept, as for the generic program.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace bw::backend_c {

struct CompileFailure {
    std::string message;         // clang's diagnostics, or what went wrong around it
    bool module_missing = false; // bumblewrap-clang.so could not be loaded: an installation problem
};

std::variant<std::vector<std::byte>, CompileFailure> compile_bpf(std::string_view policy_header);

} // namespace bw::backend_c
