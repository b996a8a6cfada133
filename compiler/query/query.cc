#include "query/query.h"

#include "bumblewrap.h"
#include "check/values.h"
#include "diagnostics/suggest.h"
#include "syscalls/syscalls.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

namespace bw::query {

namespace {

std::vector<std::string> access_names()
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < ir::kAccessKinds; ++i)
        out.emplace_back(ir::name(static_cast<ir::Access>(i)));
    out.emplace_back("stat");
    return out;
}

// "; did you mean `x`?", or empty when nothing is close.
std::string hint(std::string_view word, const std::vector<std::string>& candidates)
{
    const auto text = did_you_mean(word, candidates);
    return text.empty() ? text : "; " + text;
}

std::optional<std::uint32_t> parse_u32(std::string_view s)
{
    std::uint32_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

// The lexically resolved form of a path, as the kernel would name the same file (symlinks aside).
std::string resolve_dots(const std::string& path)
{
    std::vector<std::string_view> parts;
    std::string_view rest(path);
    while (!rest.empty()) {
        const auto slash = rest.find('/');
        const auto part = rest.substr(0, slash);
        if (part == "..") {
            if (!parts.empty())
                parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    }
    std::string out;
    for (const auto p : parts)
        out += "/" + std::string(p);
    return out.empty() ? "/" : out;
}

// `--exe`, `--uid`, `--gid`, `--owner`, `--flags`, `--device`, `--ioctl` after the positional words;
// `path_only` are refused for sockets, which have no file.
struct Options {
    ir::PathQuery process;
    std::optional<ir::DeviceQuery> device;
    std::vector<std::string> path_only; // the path-only options that were given
};

// TYPE:MAJOR:MINOR, e.g. c:1:3 for /dev/null.
std::optional<ir::DeviceQuery> parse_device(std::string_view text)
{
    const auto first = text.find(':');
    const auto second = first == std::string_view::npos ? first : text.find(':', first + 1);
    if (second == std::string_view::npos || (text.substr(0, first) != "c" && text.substr(0, first) != "b"))
        return std::nullopt;
    const auto major = parse_u32(text.substr(first + 1, second - first - 1));
    const auto minor = parse_u32(text.substr(second + 1));
    if (!major || !minor)
        return std::nullopt;
    ir::DeviceQuery d;
    d.type = text[0];
    d.major = *major;
    d.minor = *minor;
    return d;
}

std::variant<Options, std::string> parse_options(std::span<const std::string> words)
{
    Options o;
    std::optional<std::uint32_t> ioctl_command;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i];
        if (w == "--owner") {
            o.process.owner = true;
            o.path_only.push_back(w);
            continue;
        }
        if (w != "--exe" && w != "--uid" && w != "--gid" && w != "--flags" && w != "--device" && w != "--ioctl")
            return w.starts_with("-") ? fmt::format("unknown option `{}` for query", w)
                                      : fmt::format("unexpected `{}` (options go after the query)", w);
        if (i + 1 >= words.size())
            return fmt::format("{} needs a value", w);
        const std::string& v = words[++i];
        if (w == "--exe") {
            if (auto e = kernel_path_error(v))
                return fmt::format("--exe: {}", *e);
            o.process.exe = v;
        } else if (w == "--uid" || w == "--gid") {
            const auto id = parse_u32(v);
            if (!id)
                return fmt::format("{} wants a number, not `{}`", w, v);
            (w == "--uid" ? o.process.uid : o.process.gid) = *id;
        } else if (w == "--flags") {
            o.path_only.push_back(w);
            std::string_view rest(v);
            while (true) {
                const auto comma = rest.find(',');
                const auto name = rest.substr(0, comma);
                const auto flag = open_flag(name);
                if (!flag)
                    return fmt::format("unknown open flag `{}`{}", name,
                                       hint(name, open_flag_names()));
                o.process.flags |= *flag;
                if (comma == std::string_view::npos)
                    break;
                rest = rest.substr(comma + 1);
            }
        } else {
            o.path_only.push_back(w);
            if (w == "--ioctl") {
                const auto command = parse_ioctl_range(v);
                if (!command || command->lo != command->hi)
                    return fmt::format("--ioctl wants one command number, e.g. 0x5401, not `{}`", v);
                ioctl_command = command->lo;
            } else if (!(o.device = parse_device(v))) {
                return fmt::format("--device wants TYPE:MAJOR:MINOR with TYPE c or b, e.g. c:1:3, not `{}`", v);
            }
        }
    }
    if (ioctl_command && !o.device)
        return std::string("--ioctl goes with --device: only device rules list ioctl commands");
    if (o.device)
        o.device->ioctl_command = ioctl_command.value_or(0);
    return o;
}

std::variant<Query, std::string> parse_net(std::span<const std::string> words)
{
    const bool create = words[0] == "socket";
    const std::size_t positional = create ? 2 : 3;
    if (words.size() < positional)
        return create ? std::string("socket wants a family, e.g. `socket inet6`")
                      : fmt::format("{0} wants a protocol and an address, e.g. `{0} tcp 10.0.0.1:443`", words[0]);
    auto options = parse_options(words.subspan(positional));
    if (auto* e = std::get_if<std::string>(&options))
        return *e;
    const auto& o = std::get<Options>(options);
    if (!o.path_only.empty())
        return fmt::format("{} applies to file accesses only", o.path_only.front());
    ir::NetQuery q;
    q.process = o.process;
    if (create) {
        const auto family = socket_family(words[1]);
        if (!family)
            return fmt::format("unknown socket family `{}`{}", words[1], hint(words[1], socket_family_names()));
        q.op = ir::NetQuery::Op::Create;
        q.family = *family;
        return Query{q};
    }
    q.op = words[0] == "bind" ? ir::NetQuery::Op::Bind : ir::NetQuery::Op::Connect;
    if (words[1] != "tcp" && words[1] != "udp")
        return fmt::format("the protocol is tcp or udp, not `{}`", words[1]);
    q.protocol = words[1] == "tcp" ? IPPROTO_TCP : IPPROTO_UDP;
    // One address and one port, as a connect or bind names them: no prefixes, ranges or `any`.
    const std::string& text = words[2];
    const auto parsed = text.find('/') == std::string::npos ? parse_endpoint(text)
                                                             : std::variant<std::vector<ir::NetEndpoint>, std::string>(
                                                                   std::string("give one address, not a prefix"));
    if (const auto* e = std::get_if<std::string>(&parsed))
        return fmt::format("malformed address `{}`: {}", text, *e);
    const auto& endpoints = std::get<std::vector<ir::NetEndpoint>>(parsed);
    if (endpoints.size() != 1)
        return fmt::format("malformed address `{}`: give one address, not `any`", text);
    const auto& e = endpoints.front();
    if (e.port_lo != e.port_hi)
        return fmt::format("malformed address `{}`: give one port, e.g. `10.0.0.1:443` or `[::1]:53`", text);
    q.family = e.family;
    q.address = e.address;
    q.port = e.port_lo;
    return Query{q};
}

std::string where(const ir::Policy& policy, ir::RuleId rule)
{
    const auto* origin = ir::find_origin(policy, rule);
    const bool is_default =
        rule == ir::kDefaultRuleId || rule == ir::kNetDefaultRuleId || rule == ir::kSyscallDefaultRuleId;
    // A default the policy does not state (no `syscalls default`, say) has no line.
    if (origin == nullptr || origin->line == 0)
        return is_default ? std::string("  by the implicit default (the policy states none)\n")
                          : fmt::format("  by rule #{}\n", rule);
    const std::string place = fmt::format("{}:{}", origin->file, origin->line);
    if (is_default)
        return fmt::format("  by the default ({})\n", place);
    return fmt::format("  by `{}` ({}), rule #{}\n", origin->text, place, rule);
}

std::string net_target(const ir::NetQuery& q)
{
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(q.family, q.address.data(), text, sizeof text);
    return q.family == AF_INET6 ? fmt::format("[{}]:{}", text, q.port) : fmt::format("{}:{}", text, q.port);
}

} // namespace

std::optional<std::string> kernel_path_error(const std::string& path)
{
    if (!path.starts_with("/"))
        return fmt::format("`{}` is not absolute: the kernel checks absolute, resolved paths", path);
    if (path.size() >= BW_PATH_MAX)
        return fmt::format("the path is {} bytes long; the kernel's paths are shorter than {}", path.size(),
                           BW_PATH_MAX);
    const std::string resolved = resolve_dots(path);
    if (resolved != path)
        return fmt::format("the kernel checks resolved paths (no `.`, `..`, repeated or trailing `/`): query `{}`",
                           resolved);
    return std::nullopt;
}

std::variant<Query, std::string> parse(std::span<const std::string> words)
{
    if (words.empty())
        return std::string("query wants ACCESS PATH, `syscall NAME`, `connect|bind tcp|udp ADDR:PORT` or "
                           "`socket FAMILY`");
    const std::string& kind = words[0];
    if (kind == "connect" || kind == "bind" || kind == "socket")
        return parse_net(words);
    if (kind == "syscall") {
        if (words.size() != 2)
            return std::string("syscall wants one name, e.g. `syscall ptrace`");
        // A misspelt name would quietly get the default: refuse it instead.
        if (syscalls::find(words[1]) == nullptr) {
            const auto close = syscalls::suggest_syscall(words[1]);
            return fmt::format("unknown syscall `{}`{}", words[1],
                               close.empty() ? "" : fmt::format("; did you mean `{}`?", close.front()));
        }
        return Query{SyscallQuery{words[1]}};
    }
    const auto access = ir::parse_access(kind);
    if (!access)
        return fmt::format("unknown access `{}`: queries start with {}, syscall, connect, bind or socket{}", kind,
                           fmt::join(access_names(), ", "), hint(kind, access_names()));
    if (words.size() < 2)
        return fmt::format("{} wants a path, e.g. `{} /etc/passwd`", kind, kind);
    if (auto e = kernel_path_error(words[1]))
        return *e;
    auto options = parse_options(words.subspan(2));
    if (auto* e = std::get_if<std::string>(&options))
        return *e;
    auto& o = std::get<Options>(options);
    o.process.access = *access;
    o.process.path = words[1];
    if (o.device) {
        o.device->access = o.process;
        return Query{DeviceQuery{*o.device}};
    }
    return Query{o.process};
}

std::string answer(const ir::Policy& policy, const Query& query)
{
    if (const auto* s = std::get_if<SyscallQuery>(&query)) {
        const auto v = ir::evaluate_syscall(policy, s->name);
        const std::string action = v.decision == ir::Decision::Allow ? ""
                                   : v.action.kind == ir::SyscallAction::Kind::Kill
                                       ? " with kill"
                                       : fmt::format(" with errno({})", v.action.errno_value);
        return fmt::format("{} syscall {}{}\n{}", ir::to_string(v.decision), s->name, action, where(policy, v.rule));
    }
    if (const auto* n = std::get_if<ir::NetQuery>(&query)) {
        const auto v = ir::evaluate_net(policy, *n);
        const auto family = [&] {
            for (const auto& name : socket_family_names()) {
                if (socket_family(name) == n->family)
                    return name;
            }
            return std::to_string(n->family);
        };
        const std::string what =
            n->op == ir::NetQuery::Op::Create
                ? fmt::format("socket {}", family())
                : fmt::format("{} {} {}", n->op == ir::NetQuery::Op::Bind ? "bind" : "connect",
                              n->protocol == IPPROTO_TCP ? "tcp" : "udp", net_target(*n));
        return fmt::format("{} {}\n{}", ir::to_string(v.decision), what, where(policy, v.rule));
    }
    const auto* d = std::get_if<DeviceQuery>(&query);
    const auto& p = d ? d->device.access : std::get<ir::PathQuery>(query);
    // The kernel passes these before any rule (bpf-templates/hooks/ioctl.bpf.h).
    constexpr std::uint32_t kDescriptorIoctls[] = {FIOCLEX, FIONCLEX, FIONBIO, FIOASYNC};
    if (d && p.access == ir::Access::Ioctl && std::ranges::count(kDescriptorIoctls, d->device.ioctl_command) != 0)
        return fmt::format("allow ioctl {}\n  not an access to the file: command 0x{:x} sets the descriptor's flags, "
                           "as fcntl does\n",
                           p.path, d->device.ioctl_command);
    const auto v = d ? ir::evaluate_device(policy, d->device) : ir::evaluate(policy, p);
    std::string out =
        fmt::format("{} {} {}\n{}", ir::to_string(v.decision), ir::name(p.access), p.path, where(policy, v.rule));
    if (const auto audit = ir::evaluate_audit(policy, p); audit != 0 && v.decision == ir::Decision::Allow)
        out += "recorded\n" + where(policy, audit);
    if (!d && !policy.devices.empty() && p.path.starts_with("/dev/"))
        out += "note: the policy has device rules; give --device TYPE:MAJOR:MINOR to have them decide\n";
    return out;
}

} // namespace bw::query
