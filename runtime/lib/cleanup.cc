#include "cleanup.h"

#include "paths.h"

#include <algorithm>
#include <ctime>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace bw::rt {

namespace {

// When a sandbox of the program pinned at pin_dir last ended: the mtime of a stamp file.
std::string ended_stamp(const std::string& pin_dir)
{
    return std::string(kStateDir) + "/ended-" + pin_dir.substr(pin_dir.rfind('/') + 1);
}

void touch_ended_stamp(const std::string& pin_dir)
{
    const int fd = open(ended_stamp(pin_dir).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
        futimens(fd, nullptr);
        close(fd);
    }
}

std::optional<std::chrono::nanoseconds> ended_stamp_age(const std::string& pin_dir)
{
    struct stat st{};
    if (stat(ended_stamp(pin_dir).c_str(), &st) != 0)
        return std::nullopt;
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return std::chrono::seconds(now.tv_sec - st.st_mtim.tv_sec) +
           std::chrono::nanoseconds(now.tv_nsec - st.st_mtim.tv_nsec);
}

} // namespace

bool end_sandbox(Enforcer& enforcer, Cgroup& cgroup, const std::string& name, pid_t supervisor_pid,
                 bool lock_held)
{
    // Processes that survive SIGKILL keep their policy: never lift it from a live sandbox.
    if (!cgroup.kill_all(kKillTimeout))
        return false;
    std::optional<StateLock> lock;
    if (!lock_held)
        lock.emplace();
    // A live edit may have moved the sandbox to the generic program.
    const auto r = find_sandbox(name);
    if (r && r->supervisor_pid == supervisor_pid && r->pin_dir != enforcer.pin_dir()) {
        try {
            Enforcer::reopen(r->pin_dir).uninstall(cgroup.id());
            touch_ended_stamp(r->pin_dir);
        } catch (const Failure&) {
            // That program is no longer pinned: it holds no policy.
        }
    }
    enforcer.uninstall(cgroup.id());
    cgroup.remove();
    unregister_sandbox(name, supervisor_pid);
    touch_ended_stamp(enforcer.pin_dir());
    return true;
}

void unload_if_unused(const std::string& pin_dir, std::chrono::seconds linger)
{
    StateLock lock;
    // A sandbox that ended since then lingers on its own account: its watchdog decides.
    if (const auto age = ended_stamp_age(pin_dir); age && *age < linger)
        return;
    try {
        Enforcer::reopen(pin_dir).unload_if_unused();
    } catch (const Failure&) {
        // Another sandbox's ending unpinned it already.
    }
    if (access(pin_dir.c_str(), F_OK) != 0)
        unlink(ended_stamp(pin_dir).c_str());
}

namespace {

// Removes the sandbox's entries from its program, and a nested one's aliases from its
// enclosing sandboxes' programs; unloads its program if no sandbox is left there.
void lift_policy(const SandboxRecord& r)
{
    for (const auto& alias : r.aliases) {
        try {
            Enforcer::reopen(alias).uninstall(r.cgroup_id);
        } catch (const Failure&) {
            // That program is no longer pinned: it holds no alias.
        }
    }
    try {
        auto enforcer = Enforcer::reopen(r.pin_dir);
        enforcer.uninstall(r.cgroup_id);
        enforcer.unload_if_unused();
    } catch (const Failure&) {
        // Its program is no longer pinned: nothing holds a policy to lift.
    }
}

// The recorded sandboxes nested in `r`, deepest first.
std::vector<SandboxRecord> nested_in(const SandboxRecord& r)
{
    std::vector<SandboxRecord> out;
    for (auto& other : list_sandboxes()) {
        if (other.cgroup.size() > r.cgroup.size() && other.cgroup.starts_with(r.cgroup + "/"))
            out.push_back(std::move(other));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.cgroup.size() > b.cgroup.size(); });
    return out;
}

} // namespace

bool end_recorded_sandbox(const SandboxRecord& r, bool lock_held)
{
    // No cgroup (or another sandbox's under that name): none of its processes runs. The
    // kill reaches the processes of the sandboxes nested in it too.
    auto cgroup = Cgroup::open_existing(r.cgroup, r.cgroup_id, !r.parent.empty());
    if (cgroup && !cgroup->kill_all(kKillTimeout))
        return false;
    std::optional<StateLock> lock;
    if (!lock_held)
        lock.emplace();
    for (const auto& nested : nested_in(r)) {
        lift_policy(nested);
        if (auto inner = Cgroup::open_existing(nested.cgroup, nested.cgroup_id, true))
            inner->remove();
        unregister_sandbox(nested.name, nested.supervisor_pid);
    }
    // A live edit may have moved the policy since `r` was read: its own, or its enclosing
    // sandbox's, which carries this one's alias along. The registry says where they are now.
    const auto now = find_sandbox(r.name);
    lift_policy(now && now->supervisor_pid == r.supervisor_pid && now->cgroup_id == r.cgroup_id ? *now : r);
    if (cgroup)
        cgroup->remove();
    unregister_sandbox(r.name, r.supervisor_pid);
    return true;
}

std::vector<std::string> collect_orphans()
{
    std::vector<std::string> stuck;
    for (const auto& r : list_sandboxes()) {
        if (!supervisor_alive(r) && !end_recorded_sandbox(r, true))
            stuck.push_back(r.name);
    }
    return stuck;
}

} // namespace bw::rt
