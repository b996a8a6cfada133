// bwctl: inspects and controls running sandboxes.
#include "cgroup.h"
#include "cleanup.h"
#include "enforcer.h"
#include "failure.h"
#include "registry.h"
#include "version.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fmt/format.h>
#include <string_view>
#include <thread>
#include <unistd.h>

namespace {

using namespace bw;

void usage(std::FILE* out)
{
    std::fputs("usage: bwctl list\n"
               "       bwctl stop NAME\n"
               "       bwctl --version\n",
               out);
}

std::string uptime(std::int64_t started)
{
    const auto s = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::time(nullptr)) - started);
    if (s < 3600)
        return fmt::format("{}m{:02}s", s / 60, s % 60);
    return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

int cmd_list()
{
    // bwrun holds the lock from loading a sandbox's policy until its record is written, so
    // a sandbox whose program already runs is never missing from the list.
    const rt::StateLock lock;
    // A sandbox whose bwrun died (and whose watchdog did not end it) is ended here: its
    // processes killed, then its policy lifted. Those that survive SIGKILL stay, confined.
    for (const auto& name : rt::collect_orphans())
        std::fprintf(stderr, "bwctl: orphaned sandbox %s has processes that survive SIGKILL; it stays confined\n",
                     name.c_str());
    const auto sandboxes = rt::list_sandboxes();
    std::printf("%-24s %-8s %-8s %-16s %-8s %s\n", "NAME", "PID", "STATE", "POLICY", "UPTIME", "CGROUP");
    for (const auto& s : sandboxes) {
        const char* state = rt::supervisor_alive(s) ? "running" : "orphaned";
        std::printf("%-24s %-8d %-8s %-16s %-8s %s\n", s.name.c_str(), s.main_pid, state, s.policy.c_str(),
                    uptime(s.started).c_str(), s.cgroup.c_str());
    }
    return 0;
}

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
        if (!r) {
            std::fprintf(stderr, "bwctl: no sandbox named `%s` is running; `bwctl list` shows those that are\n",
                         name.c_str());
            return 1;
        }
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

} // namespace

int main(int argc, char** argv)
{
    const std::string_view cmd = argc > 1 ? argv[1] : "";
    if (cmd == "--version") {
        std::printf("bwctl %s\n", BW_VERSION_STRING);
        return 0;
    }
    if (cmd == "--help" || cmd == "-h") {
        usage(stdout);
        return 0;
    }
    const bool list = cmd == "list" && argc == 2;
    const bool stop = cmd == "stop" && argc == 3;
    if (list || stop) {
        if (geteuid() != 0) {
            std::fputs("bwctl: sandbox state is root-only; run bwctl as root\n", stderr);
            return 1;
        }
        try {
            return list ? cmd_list() : cmd_stop(argv[2]);
        } catch (const rt::Failure& e) {
            std::fprintf(stderr, "bwctl: %s\n", e.what());
            return 1;
        }
    }
    usage(stderr);
    return 2;
}
