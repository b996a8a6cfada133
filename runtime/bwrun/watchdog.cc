#include "watchdog.h"

#include "cleanup.h"
#include "failure.h"

#include <cerrno>

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace bw::bwrun {

namespace {

constexpr char kDismissed = 'd';

[[noreturn]] void watch(int read_fd, const rt::SandboxRecord& record, bool setuid_mode)
{
    // Nothing of bwrun's stays open here: above all not the StateLock's descriptor, which
    // would keep the lock held after bwrun releases it.
    if (dup2(read_fd, 3) != 3)
        _exit(1);
    close_range(4, ~0U, 0);
    // Its own session: a terminal's ^C or hangup for bwrun's process group spares it.
    setsid();
    for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
        signal(s, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (setuid_mode && setresuid(0, 0, 0) != 0)
        _exit(1);
    // Keep stderr for one line of explanation; a pipeline reading stdout need not wait on us.
    if (const int null = open("/dev/null", O_RDWR | O_CLOEXEC); null >= 0) {
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
    }
    char c = 0;
    ssize_t n;
    while ((n = read(3, &c, 1)) < 0 && errno == EINTR) {
    }
    if (n == 1 && c == kDismissed) {
        // bwrun ended the sandbox: the program lingers for the next one, then goes if unused.
        std::this_thread::sleep_for(rt::kLinger);
        // A live edit may have moved the sandbox to the generic program: it goes too, if unused.
        for (const auto& dir : {record.pin_dir, rt::Enforcer::generic_pin_dir()}) {
            try {
                rt::unload_if_unused(dir, rt::kLinger);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "bwrun watchdog: cannot unload the program in %s: %s\n", dir.c_str(), e.what());
                _exit(1);
            }
        }
        _exit(0);
    }
    // bwrun is gone without cleaning up.
    try {
        if (!rt::end_recorded_sandbox(record, false)) {
            std::fprintf(stderr, "bwrun watchdog: bwrun died and processes of %s survived SIGKILL; the sandbox "
                                 "stays confined\n",
                         record.cgroup.c_str());
            _exit(1);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bwrun watchdog: bwrun died; cannot end sandbox %s: %s\n", record.name.c_str(),
                     e.what());
        _exit(1);
    }
    std::fprintf(stderr, "bwrun watchdog: bwrun died; sandbox %s killed and removed\n", record.name.c_str());
    _exit(0);
}

} // namespace

Watchdog Watchdog::start(const rt::SandboxRecord& record, bool setuid_mode)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        rt::fail_errno("cannot create the watchdog's pipe");
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        const int err = errno;
        close(fds[0]);
        close(fds[1]);
        rt::fail_errno("cannot start the watchdog", err);
    }
    if (pid == 0) {
        close(fds[1]);
        watch(fds[0], record, setuid_mode);
    }
    close(fds[0]);
    return Watchdog(fds[1]);
}

Watchdog::Watchdog(Watchdog&& o) noexcept : fd_(o.fd_)
{
    o.fd_ = -1;
}

Watchdog::~Watchdog()
{
    if (fd_ >= 0)
        close(fd_);
}

void Watchdog::dismiss()
{
    if (fd_ < 0)
        return;
    [[maybe_unused]] const auto written = write(fd_, &kDismissed, 1);
    close(fd_);
    fd_ = -1;
}

} // namespace bw::bwrun
