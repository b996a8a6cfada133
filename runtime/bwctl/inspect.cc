// The verbs that only look: list, show, log.
#include "commands.h"

#include "cleanup.h"
#include "enforcer.h"
#include "live_policy.h"
#include "registry.h"
#include "sandbox_log.h"

#include "live/live.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace bw::ctl {

namespace {

std::string uptime(std::int64_t started)
{
    const auto s = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::time(nullptr)) - started);
    if (s < 3600)
        return fmt::format("{}m{:02}s", s / 60, s % 60);
    return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

// Processes in the sandbox's own cgroup (those of nested sandboxes are in theirs).
std::size_t process_count(const std::string& cgroup)
{
    std::ifstream in(cgroup + "/cgroup.procs");
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
        n += line.empty() ? 0 : 1;
    return n;
}

std::string rule_line(const ir::PathRule& r)
{
    std::string out = fmt::format("#{:<5} {} {} \"{}\"", r.id, ir::to_string(r.decision), ir::to_string(r.accesses),
                                  r.pattern);
    if (r.conditions.count() > 0)
        out += fmt::format(" (conditional: `{}`)", r.origin.text);
    return out;
}

} // namespace

std::string where(const ir::Provenance& p)
{
    return p.line == 0 ? p.file : fmt::format("{}:{}", p.file, p.line);
}

int no_such_sandbox(const std::string& name)
{
    std::fprintf(stderr, "bwctl: no sandbox named `%s` is running; `bwctl list` shows those that are\n", name.c_str());
    return 1;
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
    std::printf("%-24s %-8s %-5s %-8s %-16s %-12s %-7s %-7s %-8s %s\n", "NAME", "PID", "PROCS", "STATE", "POLICY",
                "SHA256", "VERSION", "DENIALS", "UPTIME", "CGROUP");
    for (const auto& s : rt::list_sandboxes()) {
        const char* state = rt::supervisor_alive(s) ? "running" : "orphaned";
        std::optional<rt::LivePolicy> live;
        try {
            live = rt::read_live_policy(s.name);
        } catch (const rt::Failure&) {
            // Shown as unknown: the list still lists it.
        }
        const auto totals = rt::read_log_totals(s.name);
        const std::string version = live ? std::to_string(live->version) : "-";
        const std::string hash = live ? live->sha256.substr(0, 12) : "-";
        const std::string denials = totals ? std::to_string(totals->denials) : "-";
        std::printf("%-24s %-8d %-5zu %-8s %-16s %-12s %-7s %-7s %-8s %s\n", s.name.c_str(), s.main_pid,
                    process_count(s.cgroup), state, s.policy.c_str(), hash.c_str(), version.c_str(), denials.c_str(),
                    uptime(s.started).c_str(), s.cgroup.c_str());
    }
    return 0;
}

int cmd_show(const std::string& name)
{
    std::optional<rt::LivePolicy> live;
    {
        const rt::StateLock lock;
        const auto record = rt::find_sandbox(name);
        if (!record)
            return no_such_sandbox(name);
        live = rt::read_live_policy(name);
        if (!live) {
            std::fprintf(stderr, "bwctl: sandbox %s keeps no policy to show (it was started by another bwrun "
                                 "version)\n",
                         name.c_str());
            return 1;
        }
    }
    const auto& p = live->policy;
    std::printf("sandbox %s: policy `%s` version %u, from %s (sha256 %s)\n", name.c_str(), p.name.c_str(),
                live->version, live->source.c_str(), live->sha256.c_str());
    if (!live->change.empty())
        std::printf("last change: %s\n", live->change.c_str());
    std::printf("invariants in force: %s\n", ir::invariant_names(p.invariants()).c_str());
    std::printf("#%-5u default %s  (%s)\n", p.path_default.id, ir::to_string(p.path_default.decision).c_str(),
                where(p.path_default.origin).c_str());
    std::printf("#%-5u net default %s  (%s)\n", p.net_default.id, ir::to_string(p.net_default.decision).c_str(),
                where(p.net_default.origin).c_str());
    std::printf("#%-5u syscall default %s  (%s)\n", p.syscall_default.id,
                ir::to_string(p.syscall_default.decision).c_str(), where(p.syscall_default.origin).c_str());
    auto expiry = [&](ir::RuleId id) -> std::string {
        for (const auto& g : live->grants) {
            if (std::find(g.rules.begin(), g.rules.end(), id) != g.rules.end())
                return fmt::format("; expires in {} s", std::max<std::int64_t>(0, g.expires - std::time(nullptr)));
        }
        return "";
    };
    for (const auto& r : p.rules) {
        if (!r.invariant)
            std::printf("%s  (%s%s)\n", rule_line(r).c_str(), where(r.origin).c_str(), expiry(r.id).c_str());
    }
    auto others = [&](const auto& rules, const char* kind) {
        for (const auto& r : rules)
            std::printf("#%-5u %s `%s`  (%s)\n", r.id, kind, r.origin.text.c_str(), where(r.origin).c_str());
    };
    others(p.audits, "audit");
    others(p.devices, "device");
    others(p.net, "net");
    others(p.syscalls, "syscall");
    return 0;
}

int cmd_log(const std::string& name, bool follow, bool json)
{
    const auto path = rt::sandbox_log_path(name);
    if (!rt::find_sandbox(name))
        return no_such_sandbox(name);
    std::string pending;
    auto emit = [&](const std::string& line) {
        if (json) {
            std::printf("%s\n", line.c_str());
        } else {
            const auto time = rt::json_field(line, "time");
            const auto text = rt::json_field(line, "text");
            std::printf("%s %s\n", time.value_or("-").c_str(), text.value_or(line).c_str());
        }
    };
    // Prints what fd holds from where it is to its end, line by line.
    auto drain = [&](int fd) {
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) {
            pending.append(buf, static_cast<std::size_t>(n));
            for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
                emit(pending.substr(0, nl));
                pending.erase(0, nl + 1);
            }
        }
        std::fflush(stdout);
    };
    // The older half first, when the log has filled once.
    if (const int old = open((path + ".1").c_str(), O_RDONLY | O_CLOEXEC); old >= 0) {
        drain(old);
        close(old);
    }
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        std::fprintf(stderr, "bwctl: sandbox %s has no log (a nested sandbox's events reach only its own bwrun; "
                             "or it was started by another bwrun version)\n",
                     name.c_str());
        return 1;
    }
    drain(fd);
    while (follow) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        drain(fd);
        // bwrun moved the full log to NAME.1 and started a new one: what was left of the
        // old one is read through fd, then the new one.
        struct stat now{}, ours{};
        const bool moved = stat(path.c_str(), &now) != 0 || (fstat(fd, &ours) == 0 && now.st_ino != ours.st_ino);
        if (moved) {
            drain(fd);
            const int next = open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (next < 0)
                break; // the sandbox ended and its log went with it
            close(fd);
            fd = next;
        }
        if (!rt::find_sandbox(name)) {
            drain(fd);
            break;
        }
    }
    close(fd);
    return 0;
}

} // namespace bw::ctl
