#include "artifact/ir_codec.h"

#include <fmt/format.h>

namespace bw::artifact {

namespace {

// Every encoded list item starts with at least a u32 (an id, a length or a bound).
constexpr std::size_t kMinItemBytes = 4;

// The list items, declared ahead for the list templates.
void put(Writer& w, const ir::PathRule& r);
void put(Writer& w, const ir::AuditRule& r);
void put(Writer& w, const ir::SyscallRule& r);
void put(Writer& w, const ir::NetRule& r);
void put(Writer& w, const ir::DeviceRule& r);
void get(Reader& r, ir::PathRule& rule);
void get(Reader& r, ir::AuditRule& rule);
void get(Reader& r, ir::SyscallRule& rule);
void get(Reader& r, ir::NetRule& rule);
void get(Reader& r, ir::DeviceRule& rule);
void get(Reader& r, std::string& s);
void get(Reader& r, ir::IdRange& range);

// --- encoding ---------------------------------------------------------------------------

void put(Writer& w, const std::string& s)
{
    w.str(s);
}

void put(Writer& w, const ir::IdRange& r)
{
    w.u32(r.lo);
    w.u32(r.hi);
}

template <typename T>
void put(Writer& w, const std::vector<T>& items)
{
    w.count(items.size());
    for (const auto& item : items)
        put(w, item);
}

void put(Writer& w, const std::optional<ir::IdRange>& r)
{
    w.num(static_cast<std::uint8_t>(r.has_value()));
    if (r)
        put(w, *r);
}

void put(Writer& w, ir::Decision d)
{
    w.num(static_cast<std::uint8_t>(d));
}

void put(Writer& w, const ir::Provenance& p)
{
    w.str(p.file);
    w.u32(p.line);
    w.u32(p.column);
    w.str(p.text);
}

void put(Writer& w, const ir::Conditions& c)
{
    put(w, c.exe);
    put(w, c.uid);
    put(w, c.gid);
    w.num(static_cast<std::uint8_t>(c.owner));
    w.u32(c.open_flags);
}

void put(Writer& w, const ir::SyscallAction& a)
{
    w.num(static_cast<std::uint8_t>(a.kind));
    w.num(static_cast<std::int32_t>(a.errno_value));
}

void put(Writer& w, const ir::Default& d)
{
    put(w, d.decision);
    w.u32(d.id);
    put(w, d.origin);
}

void put(Writer& w, const ir::PathRule& r)
{
    w.u32(r.id);
    put(w, r.decision);
    w.num(r.accesses);
    w.str(r.pattern);
    put(w, r.conditions);
    put(w, r.origin);
    w.num(static_cast<std::uint8_t>(r.invariant));
}

void put(Writer& w, const ir::AuditRule& r)
{
    w.u32(r.id);
    w.num(r.accesses);
    w.str(r.pattern);
    put(w, r.conditions);
    put(w, r.origin);
}

void put(Writer& w, const ir::SyscallRule& r)
{
    w.u32(r.id);
    put(w, r.decision);
    w.str(r.syscall);
    w.num(static_cast<std::uint8_t>(r.from_group));
    put(w, r.action);
    put(w, r.origin);
}

void put(Writer& w, const ir::NetEndpoint& e)
{
    w.num(static_cast<std::int32_t>(e.family));
    w.bytes(e.address.data(), e.address.size());
    w.num(e.prefix);
    w.num(e.port_lo);
    w.num(e.port_hi);
}

void put(Writer& w, const ir::NetRule& r)
{
    w.u32(r.id);
    w.num(static_cast<std::uint8_t>(r.kind));
    put(w, r.decision);
    w.num(static_cast<std::int32_t>(r.family));
    w.num(static_cast<std::int32_t>(r.protocol));
    w.num(static_cast<std::uint8_t>(r.bind));
    put(w, r.endpoint);
    put(w, r.conditions);
    put(w, r.origin);
}

void put(Writer& w, const ir::DeviceRule& r)
{
    w.u32(r.id);
    put(w, r.decision);
    w.num(r.accesses);
    w.str(r.pattern);
    w.num(static_cast<std::uint8_t>(r.type));
    put(w, r.major);
    put(w, r.minor);
    w.num(static_cast<std::uint8_t>(r.ioctl_any));
    put(w, r.ioctl_commands);
    put(w, r.conditions);
    put(w, r.origin);
}

// --- decoding ---------------------------------------------------------------------------

// The evaluator relies on what the check stage guarantees of a glob: every `[` closes with
// a `]` at least two bytes on, within its path component. Without it matching never ends.
bool brackets_close(std::string_view glob)
{
    for (std::size_t i = 0; i < glob.size(); ++i) {
        if (glob[i] != '[')
            continue;
        const auto close = glob.find(']', i + 2);
        if (close == std::string_view::npos || glob.find('/', i) < close)
            return false;
        i = close;
    }
    return true;
}

std::string glob(Reader& r)
{
    auto s = r.str();
    if (!brackets_close(s))
        r.fail(fmt::format("glob {:?} has a `[` without its `]`", s));
    return s;
}

void get(Reader& r, std::string& s)
{
    s = r.str();
}

void get(Reader& r, ir::IdRange& range)
{
    range.lo = r.u32();
    range.hi = r.u32();
}

template <typename T>
void get(Reader& r, std::vector<T>& items)
{
    for (auto n = r.count(kMinItemBytes); n > 0 && r.ok(); --n)
        get(r, items.emplace_back());
}

void get(Reader& r, std::optional<ir::IdRange>& range)
{
    if (r.boolean())
        get(r, range.emplace());
}

void get(Reader& r, ir::Decision& d)
{
    const auto v = r.num<std::uint8_t>();
    if (v != static_cast<std::uint8_t>(ir::Decision::Allow) && v != static_cast<std::uint8_t>(ir::Decision::Deny))
        r.fail(fmt::format("decision {} is out of range", v));
    d = static_cast<ir::Decision>(v);
}

ir::AccessMask accesses(Reader& r)
{
    const auto mask = r.num<ir::AccessMask>();
    if (mask & ~ir::kAllAccesses)
        r.fail(fmt::format("access mask 0x{:x} names unknown accesses", mask));
    return mask;
}

void get(Reader& r, ir::Provenance& p)
{
    p.file = r.str();
    p.line = r.u32();
    p.column = r.u32();
    p.text = r.str();
}

void get(Reader& r, ir::Conditions& c)
{
    for (auto n = r.count(kMinItemBytes); n > 0 && r.ok(); --n)
        c.exe.push_back(glob(r));
    get(r, c.uid);
    get(r, c.gid);
    c.owner = r.boolean();
    c.open_flags = r.u32();
}

void get(Reader& r, ir::SyscallAction& a)
{
    const auto kind = r.num<std::uint8_t>();
    if (kind > static_cast<std::uint8_t>(ir::SyscallAction::Kind::Kill))
        r.fail(fmt::format("syscall action {} is out of range", kind));
    a.kind = static_cast<ir::SyscallAction::Kind>(kind);
    a.errno_value = r.num<std::int32_t>();
}

void get(Reader& r, ir::Default& d)
{
    get(r, d.decision);
    d.id = r.u32();
    get(r, d.origin);
}

void get(Reader& r, ir::PathRule& rule)
{
    rule.id = r.u32();
    get(r, rule.decision);
    rule.accesses = accesses(r);
    rule.pattern = glob(r);
    get(r, rule.conditions);
    get(r, rule.origin);
    rule.invariant = r.boolean();
}

void get(Reader& r, ir::AuditRule& rule)
{
    rule.id = r.u32();
    rule.accesses = accesses(r);
    rule.pattern = glob(r);
    get(r, rule.conditions);
    get(r, rule.origin);
}

void get(Reader& r, ir::SyscallRule& rule)
{
    rule.id = r.u32();
    get(r, rule.decision);
    rule.syscall = r.str();
    rule.from_group = r.boolean();
    get(r, rule.action);
    get(r, rule.origin);
}

void get(Reader& r, ir::NetEndpoint& e)
{
    e.family = r.num<std::int32_t>();
    r.bytes(e.address.data(), e.address.size());
    e.prefix = r.num<std::uint8_t>();
    // The evaluator compares `prefix` bits of the 16-byte address.
    if (e.prefix > 8 * e.address.size())
        r.fail(fmt::format("address prefix /{} is out of range", e.prefix));
    e.port_lo = r.num<std::uint16_t>();
    e.port_hi = r.num<std::uint16_t>();
}

void get(Reader& r, ir::NetRule& rule)
{
    rule.id = r.u32();
    const auto kind = r.num<std::uint8_t>();
    if (kind > static_cast<std::uint8_t>(ir::NetRule::Kind::Endpoint))
        r.fail(fmt::format("network rule kind {} is out of range", kind));
    rule.kind = static_cast<ir::NetRule::Kind>(kind);
    get(r, rule.decision);
    rule.family = r.num<std::int32_t>();
    rule.protocol = r.num<std::int32_t>();
    rule.bind = r.boolean();
    get(r, rule.endpoint);
    get(r, rule.conditions);
    get(r, rule.origin);
}

void get(Reader& r, ir::DeviceRule& rule)
{
    rule.id = r.u32();
    get(r, rule.decision);
    rule.accesses = accesses(r);
    rule.pattern = glob(r);
    const auto type = static_cast<char>(r.num<std::uint8_t>());
    if (type != 0 && type != 'c' && type != 'b')
        r.fail(fmt::format("device type {} is out of range", static_cast<int>(type)));
    rule.type = type;
    get(r, rule.major);
    get(r, rule.minor);
    rule.ioctl_any = r.boolean();
    get(r, rule.ioctl_commands);
    get(r, rule.conditions);
    get(r, rule.origin);
}

} // namespace

std::vector<std::byte> encode_ir(const ir::Policy& p)
{
    Writer w;
    w.str(p.name);
    w.str(p.description);
    w.str(p.version);
    w.str(p.min_kernel);
    put(w, p.features);
    put(w, p.files);
    w.count(p.bindings.size());
    for (const auto& [name, value] : p.bindings) {
        w.str(name);
        w.str(value);
    }
    put(w, p.path_default);
    put(w, p.net_default);
    put(w, p.syscall_default);
    put(w, p.syscall_default_action);
    w.u32(p.unsafe);
    put(w, p.rules);
    put(w, p.audits);
    put(w, p.syscalls);
    put(w, p.net);
    w.u32(p.record_net ? 1 : 0);
    put(w, p.devices);
    return w.take();
}

std::variant<ir::Policy, Error> decode_ir(std::span<const std::byte> bytes)
{
    Reader r(bytes);
    ir::Policy p;
    p.name = r.str();
    p.description = r.str();
    p.version = r.str();
    p.min_kernel = r.str();
    get(r, p.features);
    get(r, p.files);
    for (auto n = r.count(2 * kMinItemBytes); n > 0 && r.ok(); --n) {
        auto name = r.str();
        // The encoder writes a map: names ascending, each once.
        if (!p.bindings.empty() && name <= p.bindings.rbegin()->first)
            r.fail(fmt::format("binding {:?} is out of order", name));
        p.bindings.emplace_hint(p.bindings.end(), std::move(name), r.str());
    }
    get(r, p.path_default);
    get(r, p.net_default);
    get(r, p.syscall_default);
    get(r, p.syscall_default_action);
    p.unsafe = r.u32();
    if (p.unsafe & ~ir::kAllInvariants)
        r.fail(fmt::format("unsafe mask 0x{:x} names unknown invariants", p.unsafe));
    else if (p.unsafe & static_cast<ir::InvariantMask>(ir::Invariant::Self))
        r.fail("the policy loosens bumblewrap's own state, which no policy can");
    get(r, p.rules);
    get(r, p.audits);
    get(r, p.syscalls);
    get(r, p.net);
    if (const auto record = r.u32(); record > 1)
        r.fail(fmt::format("record_net is {}, not 0 or 1", record));
    else
        p.record_net = record == 1;
    get(r, p.devices);
    if (r.ok() && !r.at_end())
        r.fail("trailing bytes");
    if (!r.ok())
        return Error{fmt::format("policy IR is corrupt ({})", r.error())};
    return p;
}

} // namespace bw::artifact
