#include "denials.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
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
        return "a path the kernel could not resolve (its mount is outside the sandbox's mount namespace)";
    case ENODEV:
        return "a path the kernel could not resolve (a pipe, socket or memfd: no path names it)";
    case ELOOP:
        return "a path the kernel could not resolve (more components than the walk's bound)";
    default:
        return fmt::format("a path the kernel could not resolve ({})", std::strerror(-error));
    }
}

} // namespace

std::string describe_denial(const bw_event& e, const artifact::PolicyData& policy)
{
    const std::string access =
        e.access < ir::kAccessKinds ? std::string(ir::name(static_cast<ir::Access>(e.access))) : "access";

    const std::string comm(e.comm, strnlen(e.comm, sizeof e.comm));
    std::string object;
    if (e.path_error != 0)
        object = unresolved(e.path_error);
    else
        object = std::string(e.path, std::min<std::size_t>(e.path_len, sizeof e.path));

    std::string rule = fmt::format("rule #{}", e.rule_id);
    if (const auto* r = policy.rule(e.rule_id))
        rule = fmt::format("`{}` ({}:{})", r->text, r->file, r->line);
    return fmt::format("denied {} {} by {} [pid {} {}]", access, object, rule, e.pid, comm);
}

} // namespace bw::rt
