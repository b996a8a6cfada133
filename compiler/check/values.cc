#include "check/values.h"

#include "bumblewrap.h"

#include <arpa/inet.h>
#include <array>
#include <charconv>
#include <climits>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bw {

namespace {

std::optional<std::uint64_t> parse_number(std::string_view s)
{
    int base = 10;
    if (s.starts_with("0x") || s.starts_with("0X")) {
        base = 16;
        s.remove_prefix(2);
    }
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

std::optional<ir::IdRange> parse_range(std::string_view s, std::uint64_t max)
{
    const auto dash = s.find('-');
    const auto lo = parse_number(s.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : parse_number(s.substr(dash + 1));
    if (!lo || !hi || *lo > *hi || *hi > max)
        return std::nullopt;
    return ir::IdRange{static_cast<std::uint32_t>(*lo), static_cast<std::uint32_t>(*hi)};
}

struct Named {
    std::string_view name;
    int value;
};

constexpr std::array kOpenFlags = {
    Named{"O_CREAT", O_CREAT},         Named{"O_EXCL", O_EXCL},     Named{"O_NOCTTY", O_NOCTTY},
    Named{"O_TRUNC", O_TRUNC},         Named{"O_APPEND", O_APPEND}, Named{"O_NONBLOCK", O_NONBLOCK},
    Named{"O_DSYNC", O_DSYNC},         Named{"O_DIRECT", O_DIRECT}, Named{"O_DIRECTORY", O_DIRECTORY},
    Named{"O_NOFOLLOW", O_NOFOLLOW},   Named{"O_NOATIME", O_NOATIME}, Named{"O_SYNC", O_SYNC},
    Named{"O_TMPFILE", O_TMPFILE},
};

constexpr std::array kFamilies = {
    Named{"unix", AF_UNIX},       Named{"inet", AF_INET},           Named{"inet6", AF_INET6},
    Named{"netlink", AF_NETLINK}, Named{"packet", AF_PACKET},       Named{"bluetooth", AF_BLUETOOTH},
    Named{"vsock", AF_VSOCK},     Named{"can", AF_CAN},             Named{"alg", AF_ALG},
    Named{"xdp", 44},             Named{"key", AF_KEY},             Named{"tipc", AF_TIPC},
    Named{"rds", AF_RDS},         Named{"x25", AF_X25},             Named{"ax25", AF_AX25},
    Named{"appletalk", AF_APPLETALK}, Named{"llc", AF_LLC},         Named{"ib", AF_IB},
    Named{"mpls", AF_MPLS},       Named{"smc", AF_SMC},             Named{"qipcrtr", AF_QIPCRTR},
    Named{"nfc", AF_NFC},         Named{"rxrpc", AF_RXRPC},         Named{"phonet", AF_PHONET},
    Named{"ieee802154", AF_IEEE802154}, Named{"caif", AF_CAIF},     Named{"kcm", AF_KCM},
    Named{"pppox", AF_PPPOX},     Named{"netrom", AF_NETROM},       Named{"rose", AF_ROSE},
    Named{"mctp", 45},
};

template <std::size_t N>
std::optional<int> lookup(const std::array<Named, N>& table, std::string_view name)
{
    for (const auto& n : table) {
        if (n.name == name)
            return n.value;
    }
    return std::nullopt;
}

template <std::size_t N>
std::vector<std::string> names_of(const std::array<Named, N>& table)
{
    std::vector<std::string> out;
    for (const auto& n : table)
        out.emplace_back(n.name);
    return out;
}

bool expand_braces(const std::string& s, std::vector<std::string>& out, std::size_t max)
{
    // The first `{` whose `}` closes it; alternatives split at top-level commas.
    const auto open = s.find('{');
    if (open == std::string::npos) {
        out.push_back(s);
        return out.size() <= max;
    }
    int depth = 0;
    std::vector<std::size_t> commas;
    std::size_t close = std::string::npos;
    for (std::size_t i = open; i < s.size(); ++i) {
        if (s[i] == '{')
            ++depth;
        else if (s[i] == '}' && --depth == 0) {
            close = i;
            break;
        } else if (s[i] == ',' && depth == 1)
            commas.push_back(i);
    }
    std::size_t start = open + 1;
    commas.push_back(close);
    for (const auto c : commas) {
        if (!expand_braces(s.substr(0, open) + s.substr(start, c - start) + s.substr(close + 1), out, max))
            return false;
        start = c + 1;
    }
    return true;
}

} // namespace

std::optional<std::tuple<int, int, int>> parse_kernel_version(std::string_view text)
{
    std::array<int, 3> parts{0, 0, 0};
    std::size_t n = 0;
    while (!text.empty() && n < parts.size()) {
        const auto dot = text.find('.');
        const auto part = text.substr(0, dot);
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), parts[n]);
        if (part.empty() || ec != std::errc{} || end != part.data() + part.size())
            return std::nullopt;
        ++n;
        if (dot == std::string_view::npos)
            text = {};
        else if ((text = text.substr(dot + 1)).empty())
            return std::nullopt;
    }
    if (n < 2 || !text.empty())
        return std::nullopt;
    return std::tuple{parts[0], parts[1], parts[2]};
}

std::vector<std::string> normalise_pattern(const std::string& p, const SourceLocation& loc,
                                           std::size_t max_alternatives, Diagnostics& diags)
{
    if (p.empty() || p.front() != '/') {
        diags.report(DiagKind::PathNotAbsolute, loc, p)
            .hints.push_back("rules match kernel-resolved paths, which start with `/` (or `${HOME}`, `${CWD}`)");
        return {};
    }
    if (p.size() >= BW_PATH_MAX) {
        diags.report(DiagKind::PathTooLong, loc, p.size(), BW_PATH_MAX - 1);
        return {};
    }
    for (const char c : p) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            diags.report(DiagKind::PathControlChar, loc, static_cast<unsigned>(byte));
            return {};
        }
    }
    int depth = 0;
    for (const char c : p) {
        depth += c == '{' ? 1 : c == '}' ? -1 : 0;
        if (depth < 0)
            break;
    }
    if (depth != 0) {
        diags.report(DiagKind::BadGlob, loc, fmt::format("unbalanced `{{` and `}}` in `{}`", p))
            .hints.push_back("alternatives are written `{a,b}`");
        return {};
    }
    std::vector<std::string> alternatives;
    if (!expand_braces(p, alternatives, max_alternatives)) {
        diags.report(DiagKind::TooManyAlternatives, loc, max_alternatives)
            .hints.push_back("split the rule, or use `*` where any name will do");
        return {};
    }
    std::vector<std::string> out;
    for (auto a : alternatives) {
        if (a.empty() || a.front() != '/') {
            diags.report(DiagKind::PathNotAbsolute, loc, a);
            return {};
        }
        // A trailing `/` means the directory and everything below it.
        if (a.back() == '/')
            a += "**";
        std::size_t start = 1;
        while (start <= a.size()) {
            auto end = a.find('/', start);
            if (end == std::string::npos)
                end = a.size();
            const std::string_view component(a.data() + start, end - start);
            if (component.empty()) {
                diags.report(DiagKind::PathEmptyComponent, loc, p).hints.push_back("remove the repeated `/`");
                return {};
            }
            if (component == "." || component == "..") {
                diags.report(DiagKind::PathDotComponent, loc, p, component)
                    .hints.push_back("the kernel resolves `.` and `..` before the check: write the path they lead to");
                return {};
            }
            const auto star2 = component.find("**");
            if (star2 != std::string_view::npos && component != "**") {
                diags.report(DiagKind::BadGlob, loc, fmt::format("`**` must be a whole path component in `{}`", p))
                    .hints.push_back("write `/dir/**/name` for any depth, or `*` within one name");
                return {};
            }
            for (std::size_t i = 0; i < component.size(); ++i) {
                if (component[i] != '[')
                    continue;
                const auto close = component.find(']', i + 2);
                if (close == std::string_view::npos) {
                    diags.report(DiagKind::BadGlob, loc, fmt::format("`[` without a closing `]` in `{}`", p))
                        .hints.push_back("a character class is written `[a-z]` or `[!0-9]`");
                    return {};
                }
                i = close;
            }
            start = end + 1;
        }
        out.push_back(std::move(a));
    }
    return out;
}

std::optional<SymlinkHit> symlink_on_path(const std::string& pattern)
{
    // Walk the components before the first wildcard.
    std::string prefix;
    std::size_t start = 1;
    while (start < pattern.size()) {
        auto end = pattern.find('/', start);
        if (end == std::string::npos)
            end = pattern.size();
        const auto component = pattern.substr(start, end - start);
        if (component.find_first_of("*?[") != std::string::npos)
            break;
        prefix += "/" + component;
        struct stat st{};
        if (lstat(prefix.c_str(), &st) != 0)
            return std::nullopt;
        if (S_ISLNK(st.st_mode)) {
            char resolved[PATH_MAX];
            if (realpath(prefix.c_str(), resolved) == nullptr)
                return std::nullopt;
            return SymlinkHit{prefix, resolved + pattern.substr(prefix.size())};
        }
        start = end + 1;
    }
    return std::nullopt;
}

std::optional<std::uint32_t> open_flag(std::string_view name)
{
    if (const auto v = lookup(kOpenFlags, name))
        return static_cast<std::uint32_t>(*v);
    return std::nullopt;
}

std::vector<std::string> open_flag_names()
{
    return names_of(kOpenFlags);
}

std::optional<ir::IdRange> parse_id_range(std::string_view text)
{
    return parse_range(text, UINT32_MAX - 1);
}

std::optional<int> socket_family(std::string_view name)
{
    return lookup(kFamilies, name);
}

std::vector<std::string> socket_family_names()
{
    return names_of(kFamilies);
}

std::variant<std::vector<ir::NetEndpoint>, std::string> parse_endpoint(std::string_view text)
{
    std::string_view address = text;
    std::string_view ports;
    if (text.starts_with("[")) {
        const auto close = text.find(']');
        if (close == std::string_view::npos)
            return std::string("`[` without `]`");
        address = text.substr(1, close - 1);
        const auto rest = text.substr(close + 1);
        if (!rest.empty() && !rest.starts_with(":"))
            return std::string("expected `:PORT` after `]`");
        ports = rest.empty() ? rest : rest.substr(1);
    } else if (const auto colon = text.find(':'); colon != std::string_view::npos) {
        address = text.substr(0, colon);
        ports = text.substr(colon + 1);
        if (address.find(':') != std::string_view::npos || ports.find(':') != std::string_view::npos)
            return std::string("IPv6 addresses go in brackets: `[::1]:53`");
    }
    ir::NetEndpoint e;
    if (!ports.empty() || text.ends_with(":")) {
        const auto range = parse_range(ports, 65535);
        if (!range)
            return std::string("the port must be 0-65535 or a range `1024-65535`");
        e.port_lo = static_cast<std::uint16_t>(range->lo);
        e.port_hi = static_cast<std::uint16_t>(range->hi);
    }
    if (address == "any" || address == "*") {
        auto v6 = e;
        e.family = AF_INET;
        v6.family = AF_INET6;
        return std::vector<ir::NetEndpoint>{e, v6};
    }
    std::string addr(address);
    int prefix = -1;
    if (const auto slash = addr.find('/'); slash != std::string::npos) {
        const auto bits = parse_number(std::string_view(addr).substr(slash + 1));
        if (!bits)
            return std::string("the prefix length after `/` must be a number");
        prefix = static_cast<int>(*bits);
        addr.resize(slash);
    }
    if (inet_pton(AF_INET, addr.c_str(), e.address.data()) == 1) {
        e.family = AF_INET;
        if (prefix > 32)
            return std::string("an IPv4 prefix is at most /32");
        e.prefix = static_cast<std::uint8_t>(prefix < 0 ? 32 : prefix);
    } else if (inet_pton(AF_INET6, addr.c_str(), e.address.data()) == 1) {
        e.family = AF_INET6;
        if (prefix > 128)
            return std::string("an IPv6 prefix is at most /128");
        e.prefix = static_cast<std::uint8_t>(prefix < 0 ? 128 : prefix);
    } else {
        return std::string("not an IPv4 or IPv6 address");
    }
    // Bits beyond the prefix are ignored when matching; clear them for one spelling.
    for (std::size_t bit = e.prefix; bit < 128; ++bit)
        e.address[bit / 8] = static_cast<std::uint8_t>(e.address[bit / 8] & ~(0x80u >> (bit % 8)));
    return std::vector<ir::NetEndpoint>{e};
}

std::optional<ir::IdRange> parse_ioctl_range(std::string_view text)
{
    return parse_range(text, UINT32_MAX);
}

std::variant<std::pair<ir::IdRange, ir::IdRange>, std::string> parse_device_number(std::string_view text)
{
    const auto colon = text.find(':');
    if (colon == std::string_view::npos)
        return std::string("expected MAJOR:MINOR");
    auto part = [](std::string_view s, std::uint32_t max) -> std::optional<ir::IdRange> {
        if (s == "*")
            return ir::IdRange{0, max};
        return parse_range(s, max);
    };
    const auto major = part(text.substr(0, colon), 4095);
    const auto minor = part(text.substr(colon + 1), (1u << 20) - 1);
    if (!major)
        return std::string("the major number must be 0-4095, a range or `*`");
    if (!minor)
        return std::string("the minor number must be 0-1048575, a range or `*`");
    return std::pair{*major, *minor};
}

} // namespace bw
