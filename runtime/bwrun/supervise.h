// While the program runs: denials to stderr (delayed a little, rate-limited) and to the
// audit file (all of them, at once), and signals sent to bwrun passed on to the program.
#pragma once

#include "artifact/artifact.h"
#include "audit.h"

#include <bpf/libbpf.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
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

    // When the next stderr report is due, if one is pending.
    std::optional<std::chrono::steady_clock::time_point> next_flush() const;
    // Writes the reports that are due (all of them when `all`).
    void flush(bool all);
    std::size_t denials() const { return denials_; }
    std::size_t recorded() const { return recorded_; } // by audit rules

private:
    void report(const std::string& line);

    const artifact::PolicyData& policy_;
    rt::AuditContext audit_context_;
    bool quiet_;
    std::FILE* audit_;
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
