#include "live_policy.h"

#include "enforcer.h"
#include "failure.h"
#include "paths.h"

#include "artifact/codec.h"
#include "artifact/ir_codec.h"
#include "live/live.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bw::rt {

namespace {

// Bumped when the layout below changes; a file of another layout is refused, not guessed.
constexpr std::uint32_t kLiveFormat = 1;

std::vector<std::byte> encode(const LivePolicy& live)
{
    artifact::Writer w;
    w.u32(kLiveFormat);
    w.u32(live.version);
    w.str(live.source);
    w.str(live.sha256);
    w.str(live.change);
    w.u32(live.next_rule);
    w.count(live.grants.size());
    for (const auto& g : live.grants) {
        w.num<std::int64_t>(g.expires);
        w.count(g.rules.size());
        for (const auto id : g.rules)
            w.u32(id);
    }
    w.blob(artifact::encode_ir(live.policy));
    return w.take();
}

LivePolicy decode(std::span<const std::byte> bytes, const std::string& path)
{
    artifact::Reader r(bytes);
    if (r.u32() != kLiveFormat)
        throw Failure(fmt::format("{} was written by another bumblewrap version", path));
    LivePolicy live;
    live.version = r.u32();
    live.source = r.str();
    live.sha256 = r.str();
    live.change = r.str();
    live.next_rule = r.u32();
    const auto grants = r.count(12);
    for (std::uint32_t i = 0; i < grants && r.ok(); ++i) {
        Grant g;
        g.expires = r.num<std::int64_t>();
        const auto n = r.count(4);
        for (std::uint32_t j = 0; j < n && r.ok(); ++j)
            g.rules.push_back(r.u32());
        live.grants.push_back(std::move(g));
    }
    const auto ir = r.blob();
    if (!r.ok() || !r.at_end())
        throw Failure(fmt::format("{} is damaged ({})", path, r.ok() ? "trailing bytes" : r.error()));
    auto policy = artifact::decode_ir(ir);
    if (const auto* e = std::get_if<artifact::Error>(&policy))
        throw Failure(fmt::format("{} is damaged: {}", path, e->message));
    live.policy = std::move(std::get<ir::Policy>(policy));
    return live;
}

// The nested sandboxes whose aliases sit in the program at `pin_dir`, for `record`.
std::vector<SandboxRecord> aliased_in(const std::string& pin_dir, const SandboxRecord& record)
{
    std::vector<SandboxRecord> out;
    for (auto& r : list_sandboxes()) {
        if (r.cgroup.starts_with(record.cgroup + "/") &&
            std::find(r.aliases.begin(), r.aliases.end(), pin_dir) != r.aliases.end())
            out.push_back(std::move(r));
    }
    return out;
}

// Moves the sandbox (and the aliases of those nested in it) from the specialised program
// `from` to the generic one, with the policy it has now: until `from` lets it go, both
// programs decide it alike.
Enforcer move_to_generic(SandboxRecord& record, Enforcer& from, const MapTables& tables)
{
    const auto entry = from.entry(record.cgroup_id);
    if (!entry)
        throw Failure(fmt::format("the program in {} no longer holds sandbox {}", from.pin_dir(), record.name));
    auto generic = Enforcer::open_generic(kernel_requirements().min_kernel);
    const int ring = from.ring(record.cgroup_id);
    try {
        generic.adopt(record.cgroup_id, tables, *entry, ring);
    } catch (...) {
        close(ring);
        throw;
    }
    close(ring);
    for (auto& nested : aliased_in(from.pin_dir(), record)) {
        generic.install_alias(nested.cgroup_id, record.cgroup_id);
        from.uninstall(nested.cgroup_id);
        std::replace(nested.aliases.begin(), nested.aliases.end(), from.pin_dir(), generic.pin_dir());
        update_sandbox(nested);
    }
    from.uninstall(record.cgroup_id);
    record.pin_dir = generic.pin_dir();
    update_sandbox(record);
    return generic;
}

// Writes the file beside its place; commit() renames it there.
struct StagedFile {
    std::string tmp;
    std::string path;

    void commit() const
    {
        if (rename(tmp.c_str(), path.c_str()) != 0) {
            const int err = errno;
            unlink(tmp.c_str());
            fail_errno("cannot write " + path, err);
        }
    }
};

StagedFile stage(const std::string& name, const LivePolicy& live)
{
    if (mkdir(kLiveDir, 0700) != 0 && errno != EEXIST)
        fail_errno(std::string("cannot create ") + kLiveDir);
    StagedFile f{live_policy_path(name) + ".tmp", live_policy_path(name)};
    const auto bytes = encode(live);
    const int fd = open(f.tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        fail_errno("cannot write " + f.tmp);
    const bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    const int err = errno;
    close(fd);
    if (!ok) {
        unlink(f.tmp.c_str());
        fail_errno("cannot write " + f.tmp, err);
    }
    return f;
}

} // namespace

void write_live_policy(const std::string& name, const LivePolicy& live)
{
    stage(name, live).commit();
}

std::optional<LivePolicy> read_live_policy(const std::string& name)
{
    const auto path = live_policy_path(name);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return std::nullopt;
    if (fd < 0)
        fail_errno("cannot read " + path);
    std::vector<std::byte> bytes;
    std::byte buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        bytes.insert(bytes.end(), buf, buf + n);
    const int err = errno;
    close(fd);
    if (n < 0)
        fail_errno("cannot read " + path, err);
    return decode(bytes, path);
}

bool put_in_force(SandboxRecord& record, const LivePolicy& current, const LivePolicy& next, Diagnostics& diags)
{
    const auto tables = live::compile_tables(next.policy, diags);
    if (!tables)
        return false;
    std::optional<Enforcer> enforcer;
    enforcer.emplace(Enforcer::reopen(record.pin_dir));
    if (!enforcer->replaceable()) {
        const auto now = live::compile_tables(current.policy, diags);
        if (!now)
            return false;
        auto generic = move_to_generic(record, *enforcer, *now);
        enforcer.reset();
        enforcer.emplace(std::move(generic));
    }
    // Staged first, so that a policy put in force is never missing from the file.
    const auto file = stage(record.name, next);
    try {
        enforcer->replace(record.cgroup_id, *tables, next.version);
    } catch (...) {
        unlink(file.tmp.c_str());
        throw;
    }
    file.commit();
    return true;
}

std::vector<ir::RuleId> expire_grants(LivePolicy& live, std::int64_t now)
{
    std::vector<ir::RuleId> expired;
    std::erase_if(live.grants, [&](const Grant& g) {
        if (g.expires > now)
            return false;
        for (const auto id : g.rules) {
            // A rule removed by hand before its grant expired is gone already.
            if (live::remove_rule(live.policy, id))
                expired.push_back(id);
        }
        return true;
    });
    return expired;
}

} // namespace bw::rt
