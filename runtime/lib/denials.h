// Renders denial events from the kernel for people: what, where, who, and which rule; and
// audit records, which say the same of an access an audit rule recorded.
#pragma once

#include "artifact/artifact.h"
#include "bumblewrap.h"

#include <string>

namespace bw::rt {

std::string describe_denial(const bw_event& event, const artifact::PolicyData& policy);

// What a socket denial (access BW_NET_EVENT, a struct bw_net_object in the path buffer)
// was about: "create socket netlink type 3 protocol 0", "connect tcp 10.0.0.1:443".
std::string describe_net_object(const bw_event& event);

// The syscall a live syscall denial (op BW_OP_SYSCALL) stopped: "kill", or "number N".
std::string syscall_name(const bw_event& event);

} // namespace bw::rt
