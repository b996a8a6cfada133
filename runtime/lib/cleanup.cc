#include "cleanup.h"

#include <optional>

namespace bw::rt {

bool end_sandbox(Enforcer& enforcer, Cgroup& cgroup, const std::string& name, pid_t supervisor_pid,
                 bool lock_held)
{
    // Processes that survive SIGKILL keep their policy: never lift it from a live sandbox.
    if (!cgroup.kill_all(kKillTimeout))
        return false;
    std::optional<StateLock> lock;
    if (!lock_held)
        lock.emplace();
    enforcer.uninstall(cgroup.id());
    cgroup.remove();
    unregister_sandbox(name, supervisor_pid);
    enforcer.unload_if_unused();
    return true;
}

bool end_abandoned_sandbox(const SandboxRecord& r, bool lock_held)
{
    // No cgroup (or another sandbox's under that name): none of its processes runs.
    auto cgroup = Cgroup::open_existing(r.cgroup, r.cgroup_id);
    if (cgroup && !cgroup->kill_all(kKillTimeout))
        return false;
    std::optional<StateLock> lock;
    if (!lock_held)
        lock.emplace();
    try {
        auto enforcer = Enforcer::reopen(r.pin_dir);
        enforcer.uninstall(r.cgroup_id);
        if (cgroup)
            cgroup->remove();
        enforcer.unload_if_unused();
    } catch (const Failure&) {
        // Its program is no longer pinned: nothing holds a policy to lift.
        if (cgroup)
            cgroup->remove();
    }
    unregister_sandbox(r.name, r.supervisor_pid);
    return true;
}

std::vector<std::string> collect_orphans()
{
    std::vector<std::string> stuck;
    for (const auto& r : list_sandboxes()) {
        if (!supervisor_alive(r) && !end_abandoned_sandbox(r, true))
            stuck.push_back(r.name);
    }
    return stuck;
}

} // namespace bw::rt
