// Fail closed when bwrun dies: a small process outside the sandbox, in its own session,
// waits for bwrun to end. If bwrun ends without saying it cleaned up (SIGKILL, a crash),
// the watchdog kills the sandbox and only then lifts its policy. Until then the sandbox
// stays enforced: its entry is in the kernel's map whether or not bwrun lives.
#pragma once

#include "registry.h"

namespace bw::bwrun {

class Watchdog {
public:
    // Forks the watchdog for the sandbox `record` describes. In setuid mode it takes root as
    // its real uid too, so that the caller cannot kill it.
    static Watchdog start(const rt::SandboxRecord& record, bool setuid_mode);
    Watchdog(Watchdog&&) noexcept;
    Watchdog& operator=(Watchdog&&) = delete;
    // Without dismiss(), the watchdog ends the sandbox when bwrun's last descriptor closes.
    ~Watchdog();

    // bwrun ended the sandbox itself: the watchdog unloads the program once it has
    // lingered unused for rt::kLinger, and exits.
    void dismiss();

private:
    explicit Watchdog(int fd) : fd_(fd) {}
    int fd_ = -1; // write end of the pipe the watchdog reads
};

} // namespace bw::bwrun
