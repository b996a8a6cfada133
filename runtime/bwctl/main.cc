// bwctl: inspects and controls running sandboxes.
#include "cleanup.h"
#include "enforcer.h"
#include "failure.h"
#include "registry.h"
#include "version.h"

#include <cstdio>
#include <ctime>
#include <fmt/format.h>
#include <string_view>
#include <unistd.h>

namespace {

using namespace bw;

void usage(std::FILE* out)
{
    std::fputs("usage: bwctl list\n"
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
    if (cmd == "list" && argc == 2) {
        if (geteuid() != 0) {
            std::fputs("bwctl: sandbox state is root-only; run bwctl as root\n", stderr);
            return 1;
        }
        try {
            return cmd_list();
        } catch (const rt::Failure& e) {
            std::fprintf(stderr, "bwctl: %s\n", e.what());
            return 1;
        }
    }
    usage(stderr);
    return 2;
}
