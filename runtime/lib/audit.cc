#include "audit.h"
#include "denials.h"

#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <string_view>

namespace bw::rt {

namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 when it is not well formed.
std::size_t utf8_length(std::string_view s, std::size_t i)
{
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80)
            return 0;
    }
    return n;
}

bool valid_utf8(std::string_view s)
{
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_length(s, i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

} // namespace

// Callers pass valid UTF-8 (paths that are not go out as hex).
std::string quote(std::string_view s)
{
    std::string out = "\"";
    for (const char c : s) {
        const auto b = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\')
            out += {'\\', c};
        else if (b < 0x20)
            out += fmt::format("\\u{:04x}", b);
        else
            out += c;
    }
    return out + "\"";
}

namespace {

std::string hex(std::string_view s)
{
    std::string out;
    for (const char c : s)
        out += fmt::format("{:02x}", static_cast<unsigned char>(c));
    return out;
}

} // namespace

std::string timestamp(std::int64_t unix_ns)
{
    const std::time_t secs = static_cast<std::time_t>(unix_ns / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:06}Z", date, unix_ns % 1'000'000'000 / 1000);
}

// A comm that is not UTF-8 (a program may name itself anything) keeps its valid bytes.
std::string printable(std::string_view s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_length(s, i);
        if (n == 0) {
            out += '?';
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string audit_json(const bw_event& e, const AuditContext& c, std::int64_t unix_ns, const std::string& exe)
{
    const auto& policy = *c.policy;
    const std::string access = e.op == BW_OP_SYSCALL ? "syscall"
                               : e.access < ir::kAccessKinds ? std::string(ir::name(static_cast<ir::Access>(e.access)))
                               : e.access == BW_NET_EVENT    ? "net"
                                                             : "access";
    const std::string_view comm(e.comm, strnlen(e.comm, sizeof e.comm));
    const std::string hash = policy.sources.empty() ? "" : policy.sources.front().sha256;

    std::string out = fmt::format(R"({{"time":{},"event":{},"sandbox":{},"policy":{},"policy_sha256":{},"pid":{},)"
                                  R"("tgid":{},"comm":{},"access":{},)",
                                  quote(timestamp(unix_ns)), quote(e.op == BW_OP_AUDIT ? "audit" : "denial"),
                                  quote(c.sandbox), quote(printable(policy.ir.name)), quote(hash), e.pid, e.tgid,
                                  quote(printable(comm)), quote(access));
    // A socket denial's path buffer holds a binary struct bw_net_object, not a path.
    if (e.op == BW_OP_SYSCALL) {
        out += fmt::format(R"("syscall":{},)", quote(e.target != 0 ? "another ABI's" : syscall_name(e)));
    } else if (e.access == BW_NET_EVENT) {
        out += fmt::format(R"("net":{},)", quote(describe_net_object(e)));
    } else if (e.path_error != 0) {
        out += fmt::format(R"("path_error":{},)", quote(std::strerror(-e.path_error)));
    } else {
        const std::string_view path(e.path, std::min<std::size_t>(e.path_len, sizeof e.path));
        // JSON text is UTF-8; a file name may be any bytes, which must not be altered.
        if (valid_utf8(path))
            out += fmt::format(R"("path":{},)", quote(path));
        else
            out += fmt::format(R"("path_hex":"{}",)", hex(path));
    }
    out += fmt::format(R"("rule_id":{})", e.rule_id);
    if (const auto* r = policy.rule(e.rule_id))
        out += fmt::format(R"(,"rule_file":{},"rule_line":{},"rule":{})", quote(printable(r->file)), r->line,
                           quote(printable(r->text)));
    // Last, so that the fields before keep their order for readers that match on it.
    out += fmt::format(R"(,"policy_version":{})", e.version);
    if (!exe.empty())
        out += fmt::format(R"(,"exe":{})", valid_utf8(exe) ? quote(exe) : quote(printable(exe)));
    return out + "}";
}

} // namespace bw::rt
