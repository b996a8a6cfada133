// The devices stage: a policy's device rules by number as the kernel's table (struct
// bw_device_rule from bpf-templates/bumblewrap.h), read by bpf-templates/hooks/devices.bpf.h
// under both backends.
//
// The rules are sorted by ir::evaluate_device's precedence (the policy's order among
// equals), so the first rule the kernel finds that matches a device node and an access kind
// is the one the evaluator picks. Rules by pattern or with conditions never get here: bwc
// refuses them (BW9003), as it does a rule with more than BW_DEVICE_IOCTLS ioctl ranges.
#pragma once

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

DeviceTables run_devices(const ir::Policy& policy);

// What the kernel's scan decides for an access kind on a device node: the user-space twin
// of hooks/devices.bpf.h. nullopt when no rule matches (the path rules decide).
struct DeviceAccess {
    char type = 'c';
    std::uint32_t major = 0;
    std::uint32_t minor = 0;
    ir::Access access = ir::Access::Read;
    std::uint32_t ioctl_command = 0;
};
std::optional<ir::Verdict> decide(const DeviceTables& tables, const DeviceAccess& query);

std::string dump(const DeviceTables& tables); // part of --emit=maps and `bwc inspect`

} // namespace bw
