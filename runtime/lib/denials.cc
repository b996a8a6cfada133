#include "denials.h"

#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fmt/format.h>

namespace bw::rt {

namespace {

// What a socket denial was about (a struct bw_net_object in the path buffer, see
// bumblewrap.h): "create socket netlink type 3 protocol 0", "connect tcp 10.0.0.1:443".
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
    const bool tcp = o.type == SOCK_STREAM && o.protocol == IPPROTO_TCP;
    const bool udp = o.type == SOCK_DGRAM && o.protocol == IPPROTO_UDP;
    const std::string protocol = tcp ? "tcp" : udp ? "udp" : fmt::format("type {} protocol {}", o.type, o.protocol);
    return fmt::format("{} {} {}", op, protocol, endpoint_text(o.family, o.addr, o.port));
}

// "denied connect tcp 10.0.0.1:443 by `net deny all` (file:line) [pid N comm]"
std::string describe_net_denial(const bw_event& e, const artifact::PolicyData& policy)
{
    std::string rule = fmt::format("rule #{}", e.rule_id);
    if (const auto* r = policy.rule(e.rule_id))
        rule = fmt::format("`{}` ({}:{})", r->text, r->file, r->line);
    const std::string comm(e.comm, strnlen(e.comm, sizeof e.comm));
    return fmt::format("denied {} by {} [pid {} {}]", describe_net_object(e), rule, e.pid, comm);
}

} // namespace

std::string describe_denial(const bw_event& e, const artifact::PolicyData& policy)
{
    if (e.access == BW_NET_EVENT)
        return describe_net_denial(e, policy);
    const std::string access =
        e.access < ir::kAccessKinds ? std::string(ir::name(static_cast<ir::Access>(e.access))) : "access";

    const std::string comm(e.comm, strnlen(e.comm, sizeof e.comm));
    std::string object;
    if (e.path_error != 0)
        object = fmt::format("a path the kernel could not resolve ({})", std::strerror(-e.path_error));
    else
        object = std::string(e.path, std::min<std::size_t>(e.path_len, sizeof e.path));

    std::string rule = fmt::format("rule #{}", e.rule_id);
    if (const auto* r = policy.rule(e.rule_id))
        rule = fmt::format("`{}` ({}:{})", r->text, r->file, r->line);
    return fmt::format("denied {} {} by {} [pid {} {}]", access, object, rule, e.pid, comm);
}

} // namespace bw::rt
