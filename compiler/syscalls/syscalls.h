// Syscall names and numbers for the policy language's `syscalls` rules: the x86_64 and aarch64 tables (generated
// at build time from the kernel's UAPI headers, see generate_tables.cmake), named groups of syscalls modelled on
// systemd's SystemCallFilter sets, which LSM hook (if any) can deny a syscall live, errno names, and did-you-mean
// hints for misspelt names.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bw::syscalls {

enum class Arch : std::uint8_t { X86_64, Aarch64 };

// The architecture bwc and bwrun run on, for which the live syscall table is laid out.
#if defined(__aarch64__)
inline constexpr Arch kHostArch = Arch::Aarch64;
#else
inline constexpr Arch kHostArch = Arch::X86_64;
#endif

struct Syscall {
    std::string_view name;
    int x86_64;  // -1 where the architecture lacks the syscall
    int aarch64; // -1 likewise
};

// Union over both architectures, sorted by name.
std::span<const Syscall> all();
// nullptr if the name is unknown on both architectures.
const Syscall* find(std::string_view name);
// The syscall's number on `arch`, or nullopt where that architecture lacks it.
std::optional<int> number(const Syscall& syscall, Arch arch);
// The syscall with this number on `arch`; nullptr for none.
const Syscall* by_number(int nr, Arch arch);

struct Group {
    std::string_view name; // without the '@'
    std::string_view description;
    std::span<const std::string_view> members; // syscall names, and "@group" for nested groups
};

std::span<const Group> groups();
// "mount" and "@mount" both find @mount; nullptr if there is no such group.
const Group* find_group(std::string_view name);
// Every syscall the group stands for, nested groups expanded, deduplicated and sorted.
std::vector<std::string_view> expand_group(const Group& group);

// The LSM hook through which bumblewrap can deny this syscall from eBPF, and so deny and re-allow it while a
// sandbox runs; empty if no hook covers it, and then only a seccomp filter fixed at sandbox start can deny it
// (design.md section 2). See the table in syscalls.cc for what "covers" means and for each choice.
std::string_view lsm_hook(std::string_view syscall);
// lsm_hook(syscall) when bumblewrap's program for that hook checks the live syscall bitmap; empty otherwise,
// and then seccomp decides the syscall.
std::string_view live_hook(std::string_view syscall);
// The hooks live_hook can name: bpf-templates/hooks/syscalls.bpf.h attaches a program to each.
std::span<const std::string_view> live_hooks();

// "EPERM" -> 1; nullopt for an unknown name.
std::optional<int> errno_value(std::string_view name);
// 11 -> "EAGAIN" (the canonical name, not the alias EWOULDBLOCK); empty for an unknown value.
std::string_view errno_name(int value);

// Up to 3 known names closest to a misspelt one by edit distance, best first, only those within
// max(1, length / 3) edits; for did-you-mean hints. Case is ignored.
std::vector<std::string> suggest_syscall(std::string_view misspelt);
// Same for groups; accepts the name with or without '@' and returns names with '@'.
std::vector<std::string> suggest_group(std::string_view misspelt);

} // namespace bw::syscalls
