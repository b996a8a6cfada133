// The devices stage: a policy's device rules as the kernel's table (struct bw_device_rule
// from bpf-templates/bumblewrap.h), read by bpf-templates/hooks/devices.bpf.h under both
// backends.
//
// The rules are sorted by ir::evaluate_device's precedence (the policy's order among
// equals), so the first rule the kernel finds that matches a device node and an access kind
// is the one the evaluator picks. A rule by path pattern names its pattern by the bit the
// automaton gives it (Automaton::device_patterns), which the state the node's path ends in
// carries. A rule's conditions are a link's (bw_link_holds decides them, `when exe` by the
// automaton's exe patterns). bwc refuses a rule with more than BW_DEVICE_IOCTLS ioctl
// ranges (BW9003).
#pragma once

#include "automata/automata.h"
#include "bumblewrap.h"
#include "ir/ir.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bw {

struct DeviceTables {
    std::vector<bw_device_rule> rules; // first match decides
};

DeviceTables run_devices(const ir::Policy& policy, const Automaton& automaton);

// What the kernel's scan decides for an access kind on a device node: the user-space twin
// of hooks/devices.bpf.h. nullopt when no rule matches (the path rules decide).
struct DeviceAccess {
    std::uint32_t patterns = 0; // the device patterns the node's path matches
    char type = 'c';
    std::uint32_t major = 0;
    std::uint32_t minor = 0;
    ir::Access access = ir::Access::Read;
    std::uint32_t ioctl_command = 0;
    // What conditions see (bw_chain_init): the task's fsuid and fsgid, whether it owns the
    // node, the open's flags and the `when exe` patterns of its executable.
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    bool owner = false;
    std::uint32_t open_flags = 0;
    std::uint32_t exe = 0;
};
std::optional<ir::Verdict> decide(const DeviceTables& tables, const DeviceAccess& query);

std::string dump(const DeviceTables& tables); // part of --emit=maps and `bwc inspect`

} // namespace bw
