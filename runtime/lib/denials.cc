#include "denials.h"

#include "syscalls/syscalls.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <fmt/format.h>

namespace bw::rt {

namespace {

// Why the path resolver (bpf-templates/path.bpf.h) could not name the file.
std::string unresolved(std::int32_t error)
{
    switch (-error) {
    case ENAMETOOLONG:
        return "a path the kernel could not resolve (longer than PATH_MAX)";
    case EXDEV:
        return "a path the kernel could not resolve (no name in the sandbox's mount namespace)";
    case ENODEV:
        return "a path the kernel could not resolve (a pipe, socket, memfd, or a file system the sandbox mounted: no path names it)";
    case ELOOP:
        return "a path the kernel could not resolve (more components than the walk's bound)";
    case E2BIG:
        return "a path the kernel could not resolve (its file system has more mounts than the search looks at)";
    default:
        return fmt::format("a path the kernel could not resolve ({})", std::strerror(-error));
    }
}

std::string fixed_string(const char* s, std::size_t n)
{
    return std::string(s, strnlen(s, n));
}

std::string invariant_name(std::uint32_t bit)
{
    return std::string(ir::name(static_cast<ir::Invariant>(bit)));
}

// What a denial without a path rule tried, in words: "signal 9 to pid 12 (sleep)".
std::string describe_operation(const bw_event& e)
{
    const auto target_comm = fixed_string(e.target_comm, sizeof e.target_comm);
    const auto path = std::string(e.path, std::min<std::size_t>(e.path_len, sizeof e.path));
    const auto major = static_cast<unsigned>(e.target >> 20), minor = static_cast<unsigned>(e.target & 0xfffff);
    switch (e.op) {
    case BW_OP_SIGNAL: return fmt::format("signal {} to pid {} ({})", e.arg, e.target, target_comm);
    case BW_OP_PTRACE:
        return e.arg == 0 ? fmt::format("ptrace traceme by pid {} ({})", e.target, target_comm)
                          : fmt::format("ptrace of pid {} ({})", e.target, target_comm);
    case BW_OP_MOUNT:
        return target_comm.empty() ? fmt::format("move_mount onto {}", path)
                                   : fmt::format("mount of {} on {}", target_comm, path);
    case BW_OP_UMOUNT: return "umount";
    case BW_OP_PIVOT_ROOT: return fmt::format("pivot_root to {}", path);
    case BW_OP_CHROOT: return fmt::format("chroot to {}", path);
    case BW_OP_BPF: return fmt::format("bpf command {}", e.arg);
    case BW_OP_PERF: return "perf event";
    case BW_OP_MODULE:
        return path.empty() ? fmt::format("kernel image load (id {})", e.arg)
                            : fmt::format("module request for {}", path);
    case BW_OP_MKDIR: return fmt::format("mkdir {} on file system 0x{:x}", path, e.arg);
    case BW_OP_DEVICE: return fmt::format("open of device {}:{} ({})", major, minor, path);
    case BW_OP_MKNOD: return fmt::format("mknod of device {}:{} ({})", major, minor, path);
    case BW_OP_OPEN: return fmt::format("open of {} on file system 0x{:x}", path, e.target);
    case BW_OP_TTY:
        return fmt::format("ioctl {} on terminal {}:{} ({})", e.arg == TIOCSTI ? "TIOCSTI" : "TIOCLINUX", major,
                           minor, path);
    case BW_OP_USERNS: return "a new user namespace";
    case BW_OP_NEW_FS: return fmt::format("a new {} file system", target_comm);
    default: return fmt::format("operation {}", e.op);
    }
}

// A path rule's name, or the invariant's when the lower stage added the rule.
std::string rule_name(std::uint32_t id, const artifact::PolicyData& policy)
{
    const auto* r = policy.rule(id);
    if (r == nullptr)
        return fmt::format("rule #{}", id);
    if (r->file == ir::kInvariantFile)
        return fmt::format("invariant {}", r->text.substr(r->text.find(' ') + 1));
    // A live edit's rule has no line: its "file" says who made it and when.
    if (r->line == 0)
        return fmt::format("`{}` ({})", r->text, r->file);
    return fmt::format("`{}` ({}:{})", r->text, r->file, r->line);
}

} // namespace

std::string syscall_name(const bw_event& e)
{
    const auto* s = syscalls::by_number(static_cast<int>(e.arg), syscalls::kHostArch);
    return s != nullptr ? std::string(s->name) : fmt::format("number {}", e.arg);
}

std::string describe_net_object(const bw_event& e)
{
    if (e.path_len != sizeof(bw_net_object))
        return "a socket operation (malformed report)";
    bw_net_object o{};
    std::memcpy(&o, e.path, sizeof o);
    if (o.op == BW_NET_CREATE)
        return fmt::format("create socket {} type {} protocol {}", family_name(o.family), o.type, o.protocol);
    const char* op = o.op == BW_NET_BIND ? "bind" : o.op == BW_NET_SEND ? "send" : "connect";
    if (o.family != AF_INET && o.family != AF_INET6)
        return fmt::format("{} on a {} socket", op, family_name(o.family));
    const int rules_see = endpoint_protocol(o.type, o.protocol);
    const std::string protocol =
        rules_see != 0 ? protocol_name(rules_see) : fmt::format("type {} protocol {}", o.type, o.protocol);
    return fmt::format("{} {} {}", op, protocol, endpoint_text(o.family, o.addr, o.port));
}

namespace {

// "denied connect tcp 10.0.0.1:443 by `net deny all` (file:line) [pid N comm]"; "audit ..."
// for learn mode's record of an allowed one.
std::string describe_net_denial(const bw_event& e, const artifact::PolicyData& policy)
{
    return fmt::format("{} {} by {} [pid {} {}]", e.op == BW_OP_AUDIT ? "audit" : "denied", describe_net_object(e),
                       rule_name(e.rule_id, policy), e.pid, fixed_string(e.comm, sizeof e.comm));
}

// "denied ioctl 0x5401 on /dev/pts/0 (device 136:0) by `device allow ...` (file:line) [pid N comm]"
std::string describe_device_denial(const bw_event& e, const artifact::PolicyData& policy)
{
    const auto access = e.access < ir::kAccessKinds ? std::string(ir::name(static_cast<ir::Access>(e.access)))
                                                    : std::string("access");
    const auto what = e.access == BW_ACCESS_IOCTL ? fmt::format("ioctl {:#x} on", e.arg) : access;
    const auto path = e.path_error != 0 ? unresolved(e.path_error)
                                        : std::string(e.path, std::min<std::size_t>(e.path_len, sizeof e.path));
    return fmt::format("denied {} {} (device {}:{}) by {} [pid {} {}]", what, path, e.target >> 20,
                       e.target & 0xfffff, rule_name(e.rule_id, policy), e.pid, fixed_string(e.comm, sizeof e.comm));
}

} // namespace

std::string describe_denial(const bw_event& e, const artifact::PolicyData& policy)
{
    const std::string comm = fixed_string(e.comm, sizeof e.comm);
    if (e.op == BW_OP_DEVICE_RULE)
        return describe_device_denial(e, policy);
    if (e.op == BW_OP_SYSCALL && e.target != 0)
        return fmt::format("denied a syscall of another ABI (i386 or x32), as the sandbox denies live syscalls, "
                           "whose numbers are this machine's own [pid {} {}]",
                           e.pid, comm);
    if (e.op == BW_OP_SYSCALL)
        return fmt::format("denied syscall {} by {} [pid {} {}]", syscall_name(e), rule_name(e.rule_id, policy), e.pid,
                           comm);
    if (e.op != BW_OP_PATH && e.op != BW_OP_AUDIT)
        return fmt::format("denied {} by invariant {} [pid {} {}]", describe_operation(e), invariant_name(e.invariant),
                           e.pid, comm);

    if (e.access == BW_NET_EVENT)
        return describe_net_denial(e, policy);
    const std::string access =
        e.access < ir::kAccessKinds ? std::string(ir::name(static_cast<ir::Access>(e.access))) : "access";
    std::string object;
    if (e.path_error != 0)
        object = unresolved(e.path_error);
    else
        object = std::string(e.path, std::min<std::size_t>(e.path_len, sizeof e.path));
    return fmt::format("{} {} {} by {} [pid {} {}]", e.op == BW_OP_AUDIT ? "audit" : "denied", access, object,
                       rule_name(e.rule_id, policy), e.pid, comm);
}

} // namespace bw::rt
