#include "supervise.h"

#include "denials.h"
#include "failure.h"

#include <algorithm>
#include <fmt/format.h>
#include <cstring>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bw::bwrun {

namespace {

// Denials are reported a moment after they happen: the denied program usually prints its
// own error right then, and a report written in the middle of that line garbles both.
constexpr auto kReportDelay = std::chrono::milliseconds(100);
// A program denied in a loop must not bury its own output: at most this many lines a second.
constexpr std::size_t kLinesPerSecond = 20;

std::int64_t unix_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The process's executable, read when its event arrives: empty once the process has
// exited, and another process's should its pid have been reused by then.
std::string executable(std::uint32_t tgid)
{
    char buf[4096];
    const ssize_t n = readlink(fmt::format("/proc/{}/exe", tgid).c_str(), buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

int status_of(const siginfo_t& info)
{
    if (info.si_code == CLD_EXITED)
        return info.si_status;
    return 128 + info.si_status;
}

} // namespace

DenialReporter::DenialReporter(const artifact::PolicyData& policy, std::string sandbox, bool quiet, std::FILE* audit)
    : policy_(policy), sandbox_(std::move(sandbox)), quiet_(quiet), audit_(audit)
{
    unknown_version_.ir.name = policy.ir.name;
}

const artifact::PolicyData& DenialReporter::policy_for(std::uint32_t version) const
{
    if (version == 0)
        return policy_;
    const auto it = versions_.find(version);
    return it == versions_.end() ? unknown_version_ : it->second;
}

void DenialReporter::record(const std::string& json)
{
    if (audit_ != nullptr)
        std::fprintf(audit_, "%s}\n", json.c_str());
    if (log_ != nullptr)
        log_->append(json);
}

int DenialReporter::on_event(void* self, void* data, std::size_t size)
{
    auto* r = static_cast<DenialReporter*>(self);
    if (size < offsetof(bw_event, path))
        return 0;
    bw_event e{};
    std::memcpy(&e, data, std::min(size, sizeof e));
    // An event carries its path and no more: a path_len past what arrived is not believed.
    e.path_len = static_cast<std::uint32_t>(
        std::min<std::size_t>(e.path_len, std::min(size, sizeof e) - offsetof(bw_event, path)));
    if (r->observer_ && r->observer_(e))
        return 0;
    const bool denial = e.op != BW_OP_AUDIT;
    ++(denial ? r->denials_ : r->recorded_);
    const auto& policy = r->policy_for(e.version);
    const auto text = rt::describe_denial(e, policy);
    if (r->log_ != nullptr)
        r->log_->count(denial);
    if (r->audit_ != nullptr || r->log_ != nullptr) {
        auto json = rt::audit_json(e, rt::AuditContext{r->sandbox_, &policy}, unix_ns(), executable(e.tgid));
        json.pop_back();
        r->record(json + R"(,"text":)" + rt::quote(rt::printable(text)));
    }
    if (!r->quiet_)
        r->report(text);
    return 0;
}

void DenialReporter::policy_changed(const rt::LivePolicy& live)
{
    if (live.version == 0 || versions_.contains(live.version))
        return;
    artifact::PolicyData data;
    data.sources = {{live.source, live.sha256}};
    data.ir = live.policy;
    versions_.emplace(live.version, std::move(data));
    const auto text = fmt::format("policy version {}: {}", live.version, live.change);
    record(fmt::format(R"({{"time":{},"event":"policy","sandbox":{},"policy":{},"policy_sha256":{},)"
                       R"("policy_version":{},"change":{},"text":{})",
                       rt::quote(rt::timestamp(unix_ns())), rt::quote(sandbox_),
                       rt::quote(rt::printable(live.policy.name)), rt::quote(live.sha256), live.version,
                       rt::quote(rt::printable(live.change)), rt::quote(rt::printable(text))));
    if (!quiet_)
        report(text);
}

void DenialReporter::set_dropped(std::uint64_t dropped)
{
    if (dropped <= dropped_)
        return;
    const auto text = fmt::format("{} event{} dropped: the sandbox's denial ring buffer was full ({} in all)",
                                  dropped - dropped_, dropped - dropped_ == 1 ? "" : "s", dropped);
    dropped_ = dropped;
    if (log_ != nullptr)
        log_->set_dropped(dropped);
    record(fmt::format(R"({{"time":{},"event":"dropped","sandbox":{},"count":{},"text":{})",
                       rt::quote(rt::timestamp(unix_ns())), rt::quote(sandbox_), dropped, rt::quote(text)));
    if (!quiet_)
        report(text);
}

void DenialReporter::report(const std::string& line)
{
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= std::chrono::seconds(1)) {
        window_start_ = now;
        shown_in_window_ = 0;
    }
    if (shown_in_window_ == kLinesPerSecond) {
        ++suppressed_;
        return;
    }
    ++shown_in_window_;
    if (pending_.empty())
        flush_at_ = now + kReportDelay;
    pending_.push_back(line);
}

std::optional<std::chrono::steady_clock::time_point> DenialReporter::next_flush() const
{
    if (!pending_.empty())
        return flush_at_;
    if (suppressed_ > 0)
        return window_start_ + std::chrono::seconds(1);
    return std::nullopt;
}

void DenialReporter::flush(bool all)
{
    const auto now = std::chrono::steady_clock::now();
    if (all || now >= flush_at_) {
        for (const auto& line : pending_)
            std::fprintf(stderr, "bwrun: %s\n", line.c_str());
        pending_.clear();
    }
    if (suppressed_ > 0 && (all || now >= window_start_ + std::chrono::seconds(1))) {
        std::fprintf(stderr, "bwrun: %zu more report%s not shown (over %zu a second)%s\n", suppressed_,
                     suppressed_ == 1 ? "" : "s", kLinesPerSecond, audit_ ? "; the audit file has them all" : "");
        suppressed_ = 0;
    }
    if (audit_ != nullptr)
        std::fflush(audit_);
}

int supervise(pid_t pid, int pidfd, int signal_fd, const std::vector<EventSource>& sources,
              DenialReporter& reporter)
{
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        rt::fail_errno("epoll_create1");
    std::vector<int> fds{pidfd, signal_fd};
    for (const auto& source : sources)
        fds.push_back(source.fd);
    for (const int fd : fds) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
            rt::fail_errno("epoll_ctl");
    }
    for (;;) {
        int timeout_ms = -1;
        if (const auto at = reporter.next_flush()) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(*at - std::chrono::steady_clock::now());
            timeout_ms = static_cast<int>(std::max<std::int64_t>(0, left.count()));
        }
        epoll_event ev[8];
        const int n = epoll_wait(ep, ev, 8, timeout_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rt::fail_errno("epoll_wait");
        for (int i = 0; i < n; ++i) {
            const int fd = ev[i].data.fd;
            if (fd == signal_fd) {
                signalfd_siginfo si{};
                if (read(signal_fd, &si, sizeof si) == sizeof si && si.ssi_code != SI_KERNEL)
                    // Sent to bwrun by a process: pass it on. A terminal's signals already
                    // reach the program through its process group.
                    syscall(SYS_pidfd_send_signal, pidfd, si.ssi_signo, nullptr, 0);
            } else if (fd == pidfd) {
                siginfo_t info{};
                if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED) != 0)
                    rt::fail_errno("waitid");
                close(ep);
                return status_of(info);
            } else {
                const auto source = std::find_if(sources.begin(), sources.end(),
                                                 [&](const EventSource& s) { return s.fd == fd; });
                if (source != sources.end() && !source->ready())
                    epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
                reporter.flush(false);
            }
        }
        if (n == 0)
            reporter.flush(false);
    }
}

} // namespace bw::bwrun
