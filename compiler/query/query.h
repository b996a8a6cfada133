// `bwc query`: one access, syscall or socket operation decided by the reference evaluator
// (ir::evaluate and its siblings), with the rule that decided it. The words of a query are
// parsed here, so that the command line only dispatches.
#pragma once

#include "ir/ir.h"

#include <optional>
#include <span>
#include <string>
#include <variant>

namespace bw::query {

struct SyscallQuery {
    std::string name;
};

// A device node: decided by the device rules first (ir::evaluate_device).
struct DeviceQuery {
    ir::DeviceQuery device;
};

using Query = std::variant<ir::PathQuery, DeviceQuery, ir::NetQuery, SyscallQuery>;

// The words after the policy file, e.g. {"read", "/etc/passwd", "--uid", "1000"},
// {"ioctl", "/dev/tty", "--device", "c:5:0", "--ioctl", "0x5401"}, {"syscall", "ptrace"},
// {"connect", "tcp", "10.0.0.1:443"} or {"socket", "inet6"}.
// The error says what is wrong, for a usage message.
std::variant<Query, std::string> parse(std::span<const std::string> words);

// Why `path` is not what the kernel would hand the policy (it checks absolute paths with
// `.`, `..`, repeated and trailing slashes resolved); nullopt when it is.
std::optional<std::string> kernel_path_error(const std::string& path);

// The verdict and the rule behind it, e.g.
//   deny read /home/user/.ssh/id_rsa
//     by `deny all $secrets` (stdlib-policies/deny-secrets.bwp:35), rule #12
// followed by notes on what this build's kernel side does not enforce.
std::string answer(const ir::Policy& policy, const Query& query);

} // namespace bw::query
