#include "live.h"

#include "enforcer.h"
#include "failure.h"
#include "paths.h"
#include "registry.h"

#include "live/live.h"
#include "source/source.h"

#include <algorithm>
#include <ctime>
#include <fmt/format.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <unistd.h>

namespace bw::bwrun {

LiveWatch::LiveWatch(std::string name, DenialReporter& reporter) : name_(std::move(name)), reporter_(reporter)
{
    inotify_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotify_ < 0 || inotify_add_watch(inotify_, rt::kLiveDir, IN_MOVED_TO) < 0)
        rt::fail_errno(std::string("cannot watch ") + rt::kLiveDir + " for live edits");
    timer_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    const itimerspec every_second{{1, 0}, {1, 0}};
    if (timer_ < 0 || timerfd_settime(timer_, 0, &every_second, nullptr) != 0)
        rt::fail_errno("cannot start the timer of timed grants");
}

LiveWatch::~LiveWatch()
{
    for (const int fd : {inotify_, timer_}) {
        if (fd >= 0)
            close(fd);
    }
}

std::vector<EventSource> LiveWatch::sources()
{
    return {{inotify_,
             [this] {
                 on_change();
                 return true;
             }},
            {timer_, [this] {
                 on_tick();
                 return true;
             }}};
}

void LiveWatch::on_change()
{
    alignas(inotify_event) char buf[4096];
    std::vector<std::string> changed;
    ssize_t n;
    while ((n = read(inotify_, buf, sizeof buf)) > 0) {
        for (ssize_t at = 0; at < n;) {
            const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
            if (ev->len > 0 && std::find(changed.begin(), changed.end(), ev->name) == changed.end())
                changed.emplace_back(ev->name);
            at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
        }
    }
    for (const auto& name : changed)
        reread(name);
}

void LiveWatch::reread(const std::string& name)
{
    // Ours, or one nested in ours (this bwrun is the supervisor of both).
    const auto record = rt::find_sandbox(name);
    if (!record || record->supervisor_pid != getpid())
        return;
    try {
        const auto live = rt::read_live_policy(name);
        if (!live)
            return;
        if (name == name_)
            reporter_.policy_changed(*live);
        expiries_.erase(name);
        for (const auto& g : live->grants) {
            const auto [it, added] = expiries_.emplace(name, g.expires);
            it->second = std::min(it->second, g.expires);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bwrun: %s\n", e.what());
    }
}

void LiveWatch::on_tick()
{
    std::uint64_t ticks = 0;
    if (read(timer_, &ticks, sizeof ticks) != sizeof ticks)
        return;
    check_dropped();
    const std::int64_t now = std::time(nullptr);
    std::vector<std::string> due;
    for (const auto& [name, at] : expiries_) {
        if (now >= at)
            due.push_back(name);
    }
    for (const auto& name : due)
        expire(name, now);
}

void LiveWatch::check_dropped()
{
    // The program that decides the sandbox now: bwctl may have moved it.
    if (const auto record = rt::find_sandbox(name_); record && record->supervisor_pid == getpid()) {
        try {
            reporter_.set_dropped(rt::Enforcer::reopen(record->pin_dir).dropped(record->cgroup_id));
        } catch (const rt::Failure&) {
            // The sandbox is ending: its program went with it.
        }
    }
}

void LiveWatch::expire(const std::string& name, std::int64_t now)
{
    // Learnt again from the file the expiry writes; an expiry that fails is not retried.
    expiries_.erase(name);
    try {
        const rt::StateLock lock;
        auto record = rt::find_sandbox(name);
        const auto current = rt::read_live_policy(name);
        if (!record || record->supervisor_pid != getpid() || !current)
            return;
        auto next = *current;
        const auto expired = rt::expire_grants(next, now);
        if (expired.empty() && next.grants.size() == current->grants.size())
            return;
        std::string what;
        for (const auto id : expired) {
            const auto* origin = ir::find_origin(current->policy, id);
            what += fmt::format("{}#{} `{}`", what.empty() ? "" : ", ", id, origin ? origin->text : "");
        }
        next.version = current->version + 1;
        next.change = fmt::format("grant expired: {}", what.empty() ? "its rules were already removed" : what);
        SourceManager sources;
        Diagnostics diags(sources);
        if (!rt::put_in_force(*record, *current, next, diags)) {
            diags.print(stderr, false);
            std::fprintf(stderr, "bwrun: the policy of sandbox %s without its expired grant does not compile; "
                                 "the grant stays\n",
                         name.c_str());
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bwrun: cannot end an expired grant in sandbox %s: %s\n", name.c_str(), e.what());
    }
}

} // namespace bw::bwrun
