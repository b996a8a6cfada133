// While the program runs: denials to stderr (delayed a little, rate-limited) and to the
// audit file (all of them, at once), and signals sent to bwrun passed on to the program.
#pragma once

#include "artifact/artifact.h"
#include "audit.h"
#include "live_policy.h"
#include "sandbox_log.h"

#include <bpf/libbpf.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace bw::bwrun {

// Signals that bwrun passes on. TSTP, TTIN and TTOU are not among them: job control stops
// bwrun and the program together through their process group.
inline constexpr int kForwardedSignals[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1,
                                            SIGUSR2, SIGALRM, SIGWINCH, SIGCONT};

class DenialReporter {
public:
    // `audit` may be null; the reporter does not own it.
    DenialReporter(const artifact::PolicyData& policy, std::string sandbox, bool quiet, std::FILE* audit);

    // ring_buffer callback
    static int on_event(void* self, void* data, std::size_t size);

    // The sandbox's log (bwctl log), when bwrun keeps one; the reporter does not own it.
    void set_log(rt::SandboxLog* log) { log_ = log; }
    // A version of the policy that bwctl put in force: reports of its events name its
    // rules, and the change is reported.
    void policy_changed(const rt::LivePolicy& live);
    // Sees every event first; one it returns true for goes no further (learn mode's
    // recording takes the audit records).
    void set_observer(std::function<bool(const bw_event&)> observer) { observer_ = std::move(observer); }
    // The ring buffer's count of events it had no room for: new ones are reported.
    void set_dropped(std::uint64_t dropped);
    std::uint64_t dropped() const { return dropped_; }

    // When the next stderr report is due, if one is pending.
    std::optional<std::chrono::steady_clock::time_point> next_flush() const;
    // Writes the reports that are due (all of them when `all`).
    void flush(bool all);
    std::size_t denials() const { return denials_; }
    std::size_t recorded() const { return recorded_; } // by audit rules

private:
    void report(const std::string& line);
    // A line for the audit file and the log, `json` without its closing brace.
    void record(const std::string& json);
    // The policy whose rules an event of this version names.
    const artifact::PolicyData& policy_for(std::uint32_t version) const;

    const artifact::PolicyData& policy_;
    // Versions bwctl put in force since the sandbox started; an event of a version bwrun
    // never saw (two edits in quick succession) names its rule by number.
    std::map<std::uint32_t, artifact::PolicyData> versions_;
    artifact::PolicyData unknown_version_;
    std::string sandbox_;
    bool quiet_;
    std::FILE* audit_;
    rt::SandboxLog* log_ = nullptr;
    std::function<bool(const bw_event&)> observer_;
    std::uint64_t dropped_ = 0;
    std::size_t denials_ = 0;
    std::size_t recorded_ = 0;
    std::vector<std::string> pending_;
    std::chrono::steady_clock::time_point flush_at_{};
    // Rate limit: lines shown in the current one-second window, and those held back.
    std::chrono::steady_clock::time_point window_start_{};
    std::size_t shown_in_window_ = 0;
    std::size_t suppressed_ = 0;
};

// A descriptor that supervise() watches besides the program and the signals: a ring buffer,
// the nesting broker, a nested sandbox's events. `ready` serves it when it is readable and
// returns false once it has ended, to be watched no more.
struct EventSource {
    int fd;
    std::function<bool()> ready;
};

// Waits for the program while serving `sources`, reporting denials and relaying signals
// sent to bwrun. Returns the program's status as a shell reports it (128+N when killed by
// signal N).
int supervise(pid_t pid, int pidfd, int signal_fd, const std::vector<EventSource>& sources,
              DenialReporter& reporter);

} // namespace bw::bwrun
