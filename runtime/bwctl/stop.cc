// bwctl stop: ends a running sandbox as its bwrun would, from outside.
#include "commands.h"

#include "cgroup.h"
#include "cleanup.h"
#include "enforcer.h"
#include "registry.h"

#include <chrono>
#include <cstdio>
#include <thread>

namespace bw::ctl {

int cmd_stop(const std::string& name)
{
    auto stays_confined = [&] {
        std::fprintf(stderr, "bwctl: sandbox %s has processes that survive SIGKILL; it stays confined\n",
                     name.c_str());
        return 1;
    };
    pid_t supervisor = 0;
    {
        // Under the lock, as an orphan is ended: bwrun, seeing its program die, waits for the
        // lock to lift the policy, which it does only once the cgroup is empty.
        const rt::StateLock lock;
        const auto r = rt::find_sandbox(name);
        if (!r)
            return no_such_sandbox(name);
        if (!rt::supervisor_alive(*r)) {
            if (!rt::end_recorded_sandbox(*r, true))
                return stays_confined();
            std::printf("stopped %s\n", name.c_str());
            return 0;
        }
        // cgroup.kill reaches the sandboxes nested in it too.
        auto cgroup = rt::Cgroup::open_existing(r->cgroup, r->cgroup_id, !r->parent.empty());
        if (cgroup && !cgroup->kill_all(rt::kKillTimeout))
            return stays_confined();
        supervisor = r->supervisor_pid;
    }
    // Its bwrun now reports the program's end and removes the sandbox; should it die
    // meanwhile, the sandbox is ended here instead.
    const auto deadline = std::chrono::steady_clock::now() + rt::kKillTimeout;
    for (;;) {
        const auto r = rt::find_sandbox(name);
        if (!r || r->supervisor_pid != supervisor)
            break;
        if (!rt::supervisor_alive(*r)) {
            if (rt::end_recorded_sandbox(*r, false))
                break;
            return stays_confined();
        }
        if (std::chrono::steady_clock::now() > deadline) {
            std::fprintf(stderr,
                         "bwctl: sandbox %s's processes are gone, but its bwrun (pid %d) has not ended it after "
                         "%lld s; bwctl list ends it once that bwrun exits\n",
                         name.c_str(), supervisor, static_cast<long long>(rt::kKillTimeout.count()));
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::printf("stopped %s\n", name.c_str());
    return 0;
}

} // namespace bw::ctl
