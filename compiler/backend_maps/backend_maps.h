// The map backend: the automaton laid out exactly as the generic BPF program reads it
// from its maps (structs from bpf-templates/bumblewrap.h).
#pragma once

#include "artifact/features.h"
#include "automata/automata.h"
#include "bumblewrap.h"
#include "devices/devices.h"
#include "ir/ir.h"
#include "net/net.h"
#include "syscall_bitmap/syscall_bitmap.h"

#include <cstddef>
#include <span>
#include <vector>

namespace bw::embedded {
// bpf-templates/generic.bpf.c, compiled at build time: the map backend's one program.
extern const std::span<const std::byte> generic_bpf;
} // namespace bw::embedded

namespace bw {

struct MapTables {
    bw_sandbox sandbox{};
    std::vector<std::uint32_t> trans;
    std::vector<bw_accept> accepts;
    std::vector<bw_link> links; // decision chains, conditions inlined; [0] is in none
    NetTables net;
    DeviceTables devices;
    bw_syscall_policy syscalls{}; // the live syscall rules, for syscalls::kHostArch
};

MapTables run_backend_maps(const ir::Policy& policy, const Automaton& automaton);

// What bpf-templates/generic.bpf.c needs of the kernel; keep it in step with that file.
artifact::KernelRequirements kernel_requirements();

std::string dump(const MapTables& tables); // --emit=maps

} // namespace bw
