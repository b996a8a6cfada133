// bwrun: runs a program inside a bumblewrap sandbox. Loads the policy, creates the
// sandbox's cgroup, starts the program directly inside it (clone3 with
// CLONE_INTO_CGROUP: not one instruction runs unconfined), reports denials while it
// runs, and removes everything when it ends. Exits with the program's status.
#include "artifact/artifact.h"
#include "cgroup.h"
#include "denials.h"
#include "enforcer.h"
#include "failure.h"
#include "kernel_support.h"
#include "registry.h"
#include "version.h"

#include <bpf/libbpf.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <linux/sched.h>
#include <optional>
#include <span>
#include <string_view>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace bw;

// bwrun's own failures, distinct from the program's statuses (as env(1) and timeout(1)).
constexpr int kExitFailure = 125;
constexpr int kExitUsage = 2;
constexpr int kExitCannotExec = 126;
constexpr int kExitNotFound = 127;

struct Options {
    std::string artifact;
    std::string name;
    bool quiet = false;
    std::vector<char*> command; // null-terminated for execvp
};

void usage(std::FILE* out)
{
    std::fputs("usage: bwrun [--name NAME] [--quiet] POLICY.o [--] PROGRAM [ARGS...]\n"
               "\n"
               "Runs PROGRAM confined by POLICY.o (compiled by bwc). Denied accesses fail with\n"
               "EACCES and are reported on stderr with the rule that decided them.\n"
               "\n"
               "  --name NAME  sandbox name shown by `bwctl list` (default: POLICY-PID)\n"
               "  --quiet      do not report denials\n"
               "\n"
               "Exit status: PROGRAM's status, 128+N if it was killed by signal N, 125 if\n"
               "bwrun itself failed, 126/127 if PROGRAM could not be executed / found.\n",
               out);
}

std::optional<Options> parse_args(int argc, char** argv, int& exit_code)
{
    Options o;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            exit_code = 0;
            return std::nullopt;
        }
        if (a == "--version") {
            std::printf("bwrun %s\n", BW_VERSION_STRING);
            exit_code = 0;
            return std::nullopt;
        }
        if (a == "--quiet") {
            o.quiet = true;
        } else if (a == "--name" && i + 1 < argc) {
            o.name = argv[++i];
        } else if (a.starts_with("--name=")) {
            o.name = std::string(a.substr(7));
        } else if (a == "--") {
            ++i;
            break;
        } else if (a.starts_with("-")) {
            std::fprintf(stderr, "bwrun: unknown option `%s`\n", argv[i]);
            usage(stderr);
            exit_code = kExitUsage;
            return std::nullopt;
        } else if (o.artifact.empty()) {
            o.artifact = a;
        } else {
            break;
        }
    }
    if (o.artifact.empty() && i < argc)
        o.artifact = argv[i++];
    for (; i < argc; ++i)
        o.command.push_back(argv[i]);
    if (o.artifact.empty() || o.command.empty()) {
        std::fputs("bwrun: give a policy artifact and a program to run\n", stderr);
        usage(stderr);
        exit_code = kExitUsage;
        return std::nullopt;
    }
    o.command.push_back(nullptr);
    return o;
}

// Starts the program inside the cgroup. The child unblocks signals and execs; it never
// returns here.
pid_t spawn_in_cgroup(const rt::Cgroup& cgroup, char* const* argv, const sigset_t& old_mask, int& pidfd)
{
    clone_args args{};
    args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
    args.pidfd = reinterpret_cast<std::uintptr_t>(&pidfd);
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<std::uint64_t>(cgroup.fd());
    const long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0)
        rt::fail_errno("cannot start the program inside cgroup " + cgroup.path() + " (clone3 needs Linux 5.7+)");
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old_mask, nullptr);
        execvp(argv[0], argv);
        const int err = errno;
        std::fprintf(stderr, "bwrun: cannot run %s: %s\n", argv[0], std::strerror(err));
        _exit(err == ENOENT ? kExitNotFound : kExitCannotExec);
    }
    return static_cast<pid_t>(pid);
}

// Denials are reported a moment after they happen: the denied program usually prints its
// own error right then, and a report written in the middle of that line garbles both.
constexpr auto kReportDelay = std::chrono::milliseconds(100);

struct EventContext {
    const artifact::PolicyData* policy;
    bool quiet;
    std::size_t denials = 0;
    std::vector<std::string> pending;
    std::chrono::steady_clock::time_point flush_at;

    void flush()
    {
        for (const auto& line : pending)
            std::fprintf(stderr, "bwrun: %s\n", line.c_str());
        pending.clear();
    }
};

int on_event(void* ctx, void* data, std::size_t size)
{
    auto* c = static_cast<EventContext*>(ctx);
    if (size < offsetof(bw_event, path))
        return 0;
    ++c->denials;
    if (!c->quiet) {
        bw_event e{};
        std::memcpy(&e, data, std::min(size, sizeof e));
        if (c->pending.empty())
            c->flush_at = std::chrono::steady_clock::now() + kReportDelay;
        c->pending.push_back(rt::describe_denial(e, *c->policy));
    }
    return 0;
}

int status_of(const siginfo_t& info)
{
    if (info.si_code == CLD_EXITED)
        return info.si_status;
    return 128 + info.si_status;
}

// Waits for the program while reporting denials and relaying signals sent to bwrun.
int supervise(pid_t pid, int pidfd, int signal_fd, ring_buffer* ring, EventContext& events)
{
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        rt::fail_errno("epoll_create1");
    for (const int fd : {pidfd, signal_fd, ring_buffer__epoll_fd(ring)}) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
            rt::fail_errno("epoll_ctl");
    }
    for (;;) {
        int timeout_ms = -1;
        if (!events.pending.empty()) {
            const auto left = events.flush_at - std::chrono::steady_clock::now();
            timeout_ms = static_cast<int>(
                std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(left).count()));
        }
        epoll_event ev[4];
        const int n = epoll_wait(ep, ev, 4, timeout_ms);
        if (n == 0)
            events.flush();
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
                ring_buffer__consume(ring);
            }
        }
    }
}

int run(const Options& o)
{
    // The artifact first: one from another format version is named as such, whoever runs
    // bwrun and whatever the kernel supports.
    const auto read = artifact::read(o.artifact);
    if (const auto* e = std::get_if<artifact::Error>(&read))
        throw rt::Failure(e->message);
    const auto& art = std::get<artifact::Artifact>(read);
    if (geteuid() != 0)
        throw rt::Failure("bwrun must run as root: it loads BPF programs and creates cgroups");
    if (const auto lsms = rt::active_lsms(); lsms && lsms->find("bpf") == std::string::npos)
        throw rt::Failure(rt::bpf_lsm_missing_message(lsms));

    const std::string name = o.name.empty() ? rt::default_sandbox_name(art.policy.ir.name, getpid()) : o.name;
    if (!rt::valid_sandbox_name(name))
        throw rt::Failure(fmt::format("invalid sandbox name `{}`: use 1-64 letters, digits, `.`, `_` or `-`", name));

    // Signals are read from a signalfd; the child restores the old mask before exec.
    sigset_t mask, old_mask;
    sigemptyset(&mask);
    for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
        sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, &old_mask);
    const int signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (signal_fd < 0)
        rt::fail_errno("signalfd");

    std::optional<rt::StateLock> lock;
    lock.emplace();
    auto enforcer = rt::Enforcer::open(art);
    std::optional<rt::Cgroup> cgroup;
    try {
        cgroup.emplace(rt::Cgroup::create(name));
    } catch (...) {
        // The first sandbox may have just loaded the program: leave nothing attached.
        enforcer.unload_if_unused();
        throw;
    }
    int events_fd = -1;
    pid_t pid = -1;
    int pidfd = -1;
    EventContext ctx{&art.policy, o.quiet, 0, {}, {}};
    ring_buffer* ring = nullptr;
    bool registered = false;

    // Whatever happens from here, the sandbox ends with bwrun and leaves nothing behind.
    auto teardown = [&] {
        // Processes that survive SIGKILL keep their policy: never lift it from a live sandbox.
        const bool empty = pid <= 0 || cgroup->kill_all(std::chrono::seconds(10));
        if (ring != nullptr) {
            ring_buffer__consume(ring);
            ring_buffer__free(ring);
        }
        ctx.flush();
        if (!empty) {
            std::fprintf(stderr, "bwrun: processes of %s survived SIGKILL; the sandbox stays confined\n",
                         cgroup->path().c_str());
            return;
        }
        if (!lock)
            lock.emplace();
        enforcer.uninstall(cgroup->id());
        if (events_fd >= 0)
            close(events_fd);
        cgroup->remove();
        if (registered)
            rt::unregister_sandbox(name);
        enforcer.unload_if_unused();
        lock.reset();
    };

    int status = kExitFailure;
    try {
        events_fd = enforcer.install(cgroup->id(), art.policy.tables);
        ring = ring_buffer__new(events_fd, on_event, &ctx, nullptr);
        if (ring == nullptr)
            rt::fail_errno("cannot read the sandbox's denial ring buffer");
        pid = spawn_in_cgroup(*cgroup, o.command.data(), old_mask, pidfd);
        rt::register_sandbox(rt::SandboxRecord{name, cgroup->path(), cgroup->id(), pid, getpid(),
                                               art.policy.ir.name, o.artifact,
                                               static_cast<std::int64_t>(std::time(nullptr))});
        registered = true;
        lock.reset();
        status = supervise(pid, pidfd, signal_fd, ring, ctx);
    } catch (...) {
        teardown();
        throw;
    }
    teardown();
    if (ctx.denials > 0 && !o.quiet)
        std::fprintf(stderr, "bwrun: %zu access%s denied in sandbox %s\n", ctx.denials,
                     ctx.denials == 1 ? "" : "es", name.c_str());
    return status;
}

} // namespace

int main(int argc, char** argv)
{
    int exit_code = 0;
    const auto options = parse_args(argc, argv, exit_code);
    if (!options)
        return exit_code;
    // libbpf's own messages only help when debugging; failures are reported by us.
    if (std::getenv("LIBBPF_LOG") == nullptr)
        libbpf_set_print(nullptr);
    try {
        return run(*options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bwrun: %s\n", e.what());
        return kExitFailure;
    }
}
