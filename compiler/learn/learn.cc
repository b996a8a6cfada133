#include "learn/learn.h"

#include "net/net.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fmt/format.h>
#include <netinet/in.h>
#include <regex>
#include <set>
#include <sstream>
#include <sys/socket.h>

namespace bw::learn {

namespace {

// A directory's files fold into `DIR/*` from this many on, its folded folders into
// `DIR/**` from this many on.
constexpr std::size_t kFoldFiles = 3;
constexpr std::size_t kFoldFolders = 2;
// An include is worth its line when it covers this many recorded paths.
constexpr std::size_t kIncludeMin = 3;

// Kinds a glob may grant beyond the files seen: none that changes a file.
constexpr ir::AccessMask kFoldable = ir::bit(ir::Access::Read) | ir::bit(ir::Access::Exec) |
                                     ir::bit(ir::Access::Metadata) | ir::bit(ir::Access::Ioctl);

bool needs_escape(unsigned char c)
{
    return c < 0x21 || c == 0x7f || c == '%';
}

std::string parent(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::size_t depth(const std::string& dir)
{
    return static_cast<std::size_t>(std::count(dir.begin(), dir.end(), '/'));
}

// Folders whose files stand for themselves: another file there is another matter (a
// different process's, a device, a secret of the system's, a user's own), and the top
// of the tree.
bool foldable_dir(const std::string& dir)
{
    for (const std::string_view never : {"/proc", "/sys", "/dev", "/run", "/etc", "/root"}) {
        if (dir == never || (dir.starts_with(never) && dir[never.size()] == '/'))
            return false;
    }
    return depth(dir) >= (dir.starts_with("/home/") ? 3u : 2u);
}

// Names that differ from run to run become globs: another run's /proc/PID, terminal.
std::string stable_name(const std::string& path)
{
    static const std::regex proc(R"(^/proc/[0-9]+(/task/[0-9]+)?(/|$))");
    static const std::regex pts(R"(^/dev/pts/[0-9]+$)");
    std::smatch m;
    if (std::regex_search(path, m, proc)) {
        const std::string task = m[1].matched ? "/task/[0-9]*" : "";
        const auto rest = path.substr(static_cast<std::size_t>(m.length(0)));
        return "/proc/[0-9]*" + task + (m[2].length() > 0 ? "/" : "") + rest;
    }
    if (std::regex_match(path, pts))
        return "/dev/pts/[0-9]*";
    return path;
}

// A recorded path as a pattern: glob characters cannot be escaped in the language, so
// each becomes `?`, which matches it (and any other character there).
std::string as_pattern(const std::string& path, bool& widened)
{
    std::string out = path;
    for (auto& c : out) {
        // A string cannot hold other control characters either.
        const bool control = static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t';
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}' || c == ',' || control) {
            c = '?';
            widened = true;
        }
    }
    return out;
}

bool allows(const ir::Policy& policy, const std::string& path, ir::AccessMask kinds)
{
    for (std::size_t k = 0; k < ir::kAccessKinds; ++k) {
        const auto access = static_cast<ir::Access>(k);
        if ((kinds & ir::bit(access)) == 0)
            continue;
        if (ir::evaluate(policy, {access, path, "", 0, 0, false, 0}).decision != ir::Decision::Allow)
            return false;
    }
    return true;
}

std::string plural(std::size_t n, const char* one, const char* many)
{
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

} // namespace

ir::Policy recording_policy()
{
    ir::Policy p;
    p.name = "learn";
    p.description = "everything allowed and recorded (bwrun --learn)";
    const ir::Provenance origin{"<learn>", 0, 0, "learn mode", {}};
    p.path_default = {ir::Decision::Allow, ir::kDefaultRuleId, origin};
    p.net_default = {ir::Decision::Allow, ir::kNetDefaultRuleId, origin};
    p.syscall_default = {ir::Decision::Allow, ir::kSyscallDefaultRuleId, origin};
    p.audits.push_back({ir::kFirstRuleId, ir::kAllAccesses, "/**", {}, origin});
    p.record_net = true;
    // Numbered after the policy's own rules, as the lower stage numbers them.
    ir::RuleId next = ir::kFirstRuleId + 1;
    for (auto& r : ir::invariant_rules(p.invariants())) {
        r.id = next++;
        p.rules.push_back(std::move(r));
    }
    return p;
}

namespace {

std::string escape(const std::string& text)
{
    std::string out;
    for (const char c : text) {
        if (needs_escape(static_cast<unsigned char>(c)))
            out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        else
            out += c;
    }
    return out;
}

// nullopt when a `%` is not followed by two hex digits.
std::optional<std::string> unescape(const std::string& text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
            !std::isxdigit(static_cast<unsigned char>(text[i + 2])))
            return std::nullopt;
        out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
        i += 2;
    }
    return out;
}

constexpr std::array<std::pair<ir::NetQuery::Op, std::string_view>, 3> kSocketOps{
    {{ir::NetQuery::Op::Create, "create"}, {ir::NetQuery::Op::Connect, "connect"}, {ir::NetQuery::Op::Bind, "bind"}}};

std::string_view op_name(ir::NetQuery::Op op)
{
    for (const auto& [o, name] : kSocketOps) {
        if (o == op)
            return name;
    }
    return "create";
}

// "net OP FAMILY PROTOCOL ADDRESS PORT TIMES" (see encode), or nullopt.
std::optional<std::pair<SocketUse, std::uint64_t>> decode_socket(const std::string& line)
{
    std::istringstream in(line);
    std::string net, op, address;
    unsigned family = 0, protocol = 0, port = 0;
    std::uint64_t times = 0;
    if (!(in >> net >> op >> family >> protocol >> address >> port >> times) || net != "net" || !in.eof())
        return std::nullopt;
    SocketUse use;
    const auto o = std::find_if(kSocketOps.begin(), kSocketOps.end(), [&](const auto& p) { return p.second == op; });
    if (o == kSocketOps.end() || family > 0xffff || protocol > 0xff || port > 0xffff || times == 0 ||
        address.size() != 2 * use.address.size() ||
        !std::all_of(address.begin(), address.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
        return std::nullopt;
    use.op = o->first;
    use.family = static_cast<int>(family);
    use.protocol = static_cast<int>(protocol);
    for (std::size_t i = 0; i < use.address.size(); ++i)
        use.address[i] = static_cast<std::uint8_t>(std::stoi(address.substr(2 * i, 2), nullptr, 16));
    use.port = static_cast<std::uint16_t>(port);
    return std::pair{use, times};
}

} // namespace

ir::NetQuery net_query(const SocketUse& use)
{
    ir::NetQuery q;
    q.op = use.op;
    q.family = use.family;
    q.protocol = use.protocol;
    q.address = use.address;
    q.port = use.port;
    return q;
}

std::string encode(const Recording& r)
{
    std::string out = "program " + escape(r.program) + "\ndropped " + std::to_string(r.dropped) + "\n";
    for (const auto& [path, kinds] : r.paths)
        out += std::to_string(kinds) + " " + escape(path) + "\n";
    for (const auto& [use, times] : r.sockets) {
        std::string address;
        for (const auto byte : use.address)
            address += fmt::format("{:02x}", byte);
        out += fmt::format("net {} {} {} {} {} {}\n", op_name(use.op), use.family, use.protocol, address, use.port,
                           times);
    }
    return out;
}

std::optional<Recording> decode(const std::string& text, std::string& error)
{
    Recording r;
    std::istringstream in(text);
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        const auto space = line.find(' ');
        const std::string head = line.substr(0, space);
        const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
        if (head == "program") {
            const auto program = unescape(rest);
            if (!program) {
                error = fmt::format("line {}: a `%` not followed by two hex digits", number);
                return std::nullopt;
            }
            r.program = *program;
            continue;
        }
        const bool numeric = !head.empty() && std::all_of(head.begin(), head.end(), ::isdigit) && head.size() < 12;
        const bool count = !rest.empty() && std::all_of(rest.begin(), rest.end(), ::isdigit) && rest.size() < 20;
        if (head == "dropped" && count) {
            r.dropped = std::stoull(rest);
            continue;
        }
        if (head == "net") {
            const auto use = decode_socket(line);
            if (!use) {
                error = fmt::format("line {} is not `net OP FAMILY PROTOCOL ADDRESS PORT TIMES`", number);
                return std::nullopt;
            }
            r.sockets[use->first] += use->second;
            continue;
        }
        if (!numeric || !rest.starts_with("/")) {
            error = fmt::format("line {} is not `KINDS PATH`", number);
            return std::nullopt;
        }
        const auto kinds = std::stoul(head);
        if (kinds == 0 || kinds > ir::kAllAccesses) {
            error = fmt::format("line {}: {} is no set of access kinds", number, head);
            return std::nullopt;
        }
        const auto path = unescape(rest);
        if (!path) {
            error = fmt::format("line {}: a `%` not followed by two hex digits", number);
            return std::nullopt;
        }
        r.paths[*path] |= static_cast<ir::AccessMask>(kinds);
    }
    return r;
}

namespace {

bool is_inet(int family)
{
    return family == AF_INET || family == AF_INET6;
}

// Whether the library's own net rules deny a recorded socket operation: including it would
// take that operation away.
bool denies_a_socket(const Library& library, const Recording& recording)
{
    for (const auto& [use, times] : recording.sockets) {
        const auto v = ir::evaluate_net(library.policy, net_query(use));
        if (v.decision == ir::Decision::Deny && v.rule != library.policy.net_default.id)
            return true;
    }
    return false;
}

// An endpoint rule for each TCP or UDP address connected to (or sent to) and bound, a
// family rule for the other operations; creating an inet socket needs no family rule when
// an endpoint of its family is allowed.
std::vector<NetLine> net_lines(const Recording& recording)
{
    std::map<std::string, std::uint64_t> endpoints;
    std::map<int, std::uint64_t> families, inet_creates;
    std::set<int> with_endpoint;
    for (const auto& [use, times] : recording.sockets) {
        if (!is_inet(use.family) || (use.op != ir::NetQuery::Op::Create && use.protocol == 0)) {
            families[use.family] += times;
        } else if (use.op == ir::NetQuery::Op::Create) {
            inet_creates[use.family] += times;
        } else {
            __u32 address[4];
            std::memcpy(address, use.address.data(), sizeof address);
            endpoints[fmt::format("allow {} {} {}", protocol_name(use.protocol),
                                  use.op == ir::NetQuery::Op::Bind ? "bind" : "connect",
                                  endpoint_text(use.family, address, use.port))] += times;
            with_endpoint.insert(use.family);
        }
    }
    for (const auto& [family, times] : inet_creates) {
        if (!with_endpoint.contains(family))
            families[family] += times;
    }
    std::vector<NetLine> out;
    for (const auto& [family, times] : families) {
        const auto count = plural(times, "operation", "operations");
        const bool wide = is_inet(family) || family == AF_PACKET;
        out.push_back({"allow family " + family_name(family),
                       wide ? fmt::format("review: any address of the family ({})", count) : count});
    }
    for (const auto& [rule, times] : endpoints)
        out.push_back({rule, plural(times, "time", "times")});
    return out;
}

} // namespace

Draft run_learn(const Recording& recording, const std::vector<Library>& libraries, const Library* secrets,
                const std::string& name)
{
    Draft d;
    d.name = name;
    std::uint64_t operations = 0;
    for (const auto& [use, times] : recording.sockets)
        operations += times;
    d.header = fmt::format("Learned by `bwrun --learn` from: {}\n{} and {} recorded.", recording.program,
                           plural(recording.paths.size(), "path", "paths"),
                           plural(operations, "socket operation", "socket operations"));
    if (recording.dropped > 0)
        d.header += fmt::format("\nreview: {} lost while recording (the ring buffer was full): run the "
                                "program again under this policy and add what it is denied.",
                                plural(recording.dropped, "event was", "events were"));
    d.header += "\nReview every line marked `review:` before relying on this policy.";

    // Patterns from here on: names made stable, glob characters made `?`.
    std::map<std::string, ir::AccessMask> left;
    std::set<std::string> widened;
    for (const auto& [path, kinds] : recording.paths) {
        bool wide = false;
        const auto pattern = stable_name(as_pattern(path, wide));
        left[pattern] |= kinds;
        if (wide)
            widened.insert(pattern);
    }

    // Sensitive: what the deny-secrets layer denies. Exact rules, flagged.
    bool touched_secrets = false;
    if (secrets != nullptr) {
        for (auto it = left.begin(); it != left.end();) {
            if (allows(secrets->policy, it->first, it->second)) {
                ++it;
                continue;
            }
            d.rules.push_back({it->second, it->first, "review: sensitive (deny-secrets denies it)", true});
            touched_secrets = true;
            it = left.erase(it);
        }
    }

    // Includes, greedily: the library that covers most of what is left, while one covers enough.
    std::vector<const Library*> candidates;
    for (const auto& lib : libraries) {
        if (!denies_a_socket(lib, recording))
            candidates.push_back(&lib);
    }
    for (;;) {
        const Library* best = nullptr;
        std::vector<std::string> best_paths;
        for (const auto* lib : candidates) {
            std::vector<std::string> paths;
            for (const auto& [path, kinds] : left) {
                if (allows(lib->policy, path, kinds))
                    paths.push_back(path);
            }
            // On a tie, the smaller library: it grants less besides.
            const bool tie = best != nullptr && paths.size() == best_paths.size() &&
                             lib->policy.rules.size() < best->policy.rules.size();
            if (paths.size() > best_paths.size() || tie) {
                best = lib;
                best_paths = std::move(paths);
            }
        }
        if (best == nullptr || best_paths.size() < kIncludeMin)
            break;
        d.includes.emplace_back(best->name, fmt::format("covers {}", plural(best_paths.size(), "path", "paths")));
        for (const auto& p : best_paths)
            left.erase(p);
        std::erase(candidates, best);
    }
    if (secrets != nullptr && !touched_secrets)
        d.includes.emplace_back(secrets->name, "keys, credentials and histories stay denied");

    // Files of one folder with read-only kinds fold into DIR/*, then folders into DIR/**.
    std::map<std::string, std::vector<std::string>> by_dir;
    for (const auto& [path, kinds] : left) {
        if ((kinds & ~kFoldable) == 0 && foldable_dir(parent(path)) && path.find_first_of("*?[") == std::string::npos)
            by_dir[parent(path)].push_back(path);
    }
    std::map<std::string, std::pair<ir::AccessMask, std::size_t>> folded; // dir -> kinds, files
    for (const auto& [dir, files] : by_dir) {
        if (files.size() < kFoldFiles)
            continue;
        ir::AccessMask kinds = 0;
        for (const auto& f : files) {
            kinds |= left[f];
            left.erase(f);
        }
        folded[dir] = {kinds, files.size()};
    }
    std::map<std::string, std::vector<std::string>> by_parent;
    for (const auto& [dir, info] : folded) {
        if (foldable_dir(parent(dir)))
            by_parent[parent(dir)].push_back(dir);
    }
    for (const auto& [dir, children] : by_parent) {
        if (children.size() < kFoldFolders)
            continue;
        ir::AccessMask kinds = 0;
        std::size_t files = 0;
        for (const auto& c : children) {
            kinds |= folded[c].first;
            files += folded[c].second;
            folded.erase(c);
        }
        // The folder's own files, folded or not, go with it.
        if (const auto own = folded.find(dir); own != folded.end()) {
            kinds |= own->second.first;
            files += own->second.second;
            folded.erase(own);
        }
        for (auto it = left.lower_bound(dir + "/"); it != left.end() && it->first.starts_with(dir + "/");) {
            if ((it->second & ~kFoldable) != 0) {
                ++it;
                continue;
            }
            kinds |= it->second;
            ++files;
            it = left.erase(it);
        }
        d.rules.push_back({kinds, dir + "/**",
                           fmt::format("{} in {}", plural(files, "file", "files"),
                                       plural(children.size(), "folder", "folders")),
                           false});
    }
    for (const auto& [dir, info] : folded)
        d.rules.push_back({info.first, dir + "/*", plural(info.second, "file", "files"), false});

    for (const auto& [pattern, kinds] : left) {
        std::string comment;
        bool review = false;
        if (widened.contains(pattern)) {
            comment = "review: glob characters in the name became `?`";
            review = true;
        } else if ((kinds & ~kFoldable) != 0 && !pattern.starts_with("/tmp/") && !pattern.starts_with("/dev/")) {
            comment = "review: it changes this file";
            review = true;
        }
        d.rules.push_back({kinds, pattern, comment, review});
    }
    std::sort(d.rules.begin(), d.rules.end(), [](const Rule& a, const Rule& b) { return a.pattern < b.pattern; });
    d.net = net_lines(recording);
    return d;
}

void add_exact(Draft& draft, const std::map<std::string, ir::AccessMask>& denied)
{
    for (const auto& [path, kinds] : denied) {
        bool widened = false;
        draft.rules.push_back({kinds, as_pattern(path, widened),
                               "exact: a broader rule or an include decides this path otherwise", false});
    }
}

std::string render(const Draft& d)
{
    std::string out;
    std::istringstream header(d.header);
    for (std::string line; std::getline(header, line);)
        out += "# " + line + "\n";
    out += fmt::format("policy {} {{\n    default deny\n", ir::string_literal(d.name));
    for (const auto& [name, comment] : d.includes)
        out += fmt::format("    include {}  # {}\n", ir::string_literal(name), comment);
    if (!d.includes.empty() && !d.rules.empty())
        out += "\n";
    for (const auto& r : d.rules) {
        out += fmt::format("    allow {} {}", ir::to_string(r.kinds), ir::string_literal(r.pattern));
        out += r.comment.empty() ? "\n" : fmt::format("  # {}\n", r.comment);
    }
    if (!d.net.empty() && (!d.includes.empty() || !d.rules.empty()))
        out += "\n";
    for (const auto& n : d.net)
        out += fmt::format("    net {}  # {}\n", n.rule, n.comment);
    return out + "}\n";
}

} // namespace bw::learn
