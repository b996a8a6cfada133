// bwrun: runs a program inside a bumblewrap sandbox. Loads the policy, creates the
// sandbox's cgroup, starts the program directly inside it, reports denials while it
// runs, and removes everything when it ends. Exits with the program's status.
//
// The parts: options (command line), credentials (whose the program runs as), spawn
// (clone3 into the cgroup, then exec), supervise (denials, signals), watchdog (fail closed
// when bwrun dies), setuid (the unprivileged path), vm (--vm), nesting (bwrun inside a
// sandbox: the outermost bwrun's broker, and the nested bwrun's requests to it).
#include "artifact/artifact.h"
#include "cgroup.h"
#include "cleanup.h"
#include "credentials.h"
#include "enforcer.h"
#include "failure.h"
#include "kernel_support.h"
#include "learn.h"
#include "live.h"
#include "live_policy.h"
#include "nesting/broker.h"
#include "nesting/client.h"
#include "options.h"
#include "registry.h"
#include "setuid.h"
#include "spawn.h"
#include "supervise.h"
#include "vm.h"
#include "watchdog.h"

#include <bpf/libbpf.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <sys/fsuid.h>
#include <sys/signalfd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace bw;
using namespace bw::bwrun;

struct Invocation {
    int argc;
    char** argv;
    bool setuid_mode;
    std::vector<std::string> caller_env;
    sigset_t original_mask;
    mode_t caller_umask;
};

bool kernel_lacks_bpf_lsm()
{
    const auto lsms = rt::active_lsms();
    return lsms && lsms->find("bpf") == std::string::npos;
}

// The audit file is the caller's: in setuid mode it is opened with the caller's rights.
std::unique_ptr<std::FILE, int (*)(std::FILE*)> open_audit(const std::string& path, bool setuid_mode)
{
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> none(nullptr, std::fclose);
    if (path.empty())
        return none;
    if (setuid_mode) {
        setfsgid(getgid());
        setfsuid(getuid());
    }
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    const int err = errno;
    if (setuid_mode) {
        setfsuid(0);
        setfsgid(0);
    }
    if (fd < 0)
        rt::fail_errno("cannot open the audit file " + path, err);
    std::FILE* f = fdopen(fd, "a");
    if (f == nullptr) {
        close(fd);
        rt::fail_errno("cannot open the audit file " + path);
    }
    return {f, std::fclose};
}

// Signals are read from a signalfd; the child restores the original mask before exec.
int block_forwarded_signals()
{
    sigset_t mask;
    sigemptyset(&mask);
    for (const int s : kForwardedSignals)
        sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    const int fd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (fd < 0)
        rt::fail_errno("signalfd");
    return fd;
}

void print_totals(const DenialReporter& reporter, const std::string& name, bool quiet)
{
    if (reporter.dropped() > 0 && !quiet)
        std::fprintf(stderr, "bwrun: %llu event%s not reported in sandbox %s: its denial ring buffer was full\n",
                     static_cast<unsigned long long>(reporter.dropped()), reporter.dropped() == 1 ? "" : "s",
                     name.c_str());
    if (reporter.denials() > 0 && !quiet)
        std::fprintf(stderr, "bwrun: %zu access%s denied in sandbox %s\n", reporter.denials(),
                     reporter.denials() == 1 ? "" : "es", name.c_str());
    if (reporter.recorded() > 0 && !quiet)
        std::fprintf(stderr, "bwrun: %zu access%s recorded by audit rules in sandbox %s\n", reporter.recorded(),
                     reporter.recorded() == 1 ? "" : "es", name.c_str());
}

// The nested sandbox's events, one a message, then the end of the stream once the broker
// has ended the sandbox. False at the end.
bool read_forwarded(int socket, DenialReporter& reporter)
{
    alignas(bw_event) std::byte buf[sizeof(bw_event)];
    for (;;) {
        const ssize_t n = recv(socket, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            DenialReporter::on_event(&reporter, buf, static_cast<std::size_t>(n));
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EINTR);
    }
}

// Learn mode's end: the policy of what the program did, written by bwc. The program's
// status stays bwrun's, unless the policy could not be written.
int learn_from(Recorder& recorder, const DenialReporter& reporter, const Options& o, const Launch& launch, int status)
{
    auto& recording = recorder.recording();
    for (const auto& arg : launch.argv)
        recording.program += (recording.program.empty() ? "" : " ") + arg;
    recording.dropped = reporter.dropped();
    std::string program = launch.argv.empty() ? "program" : launch.argv.front();
    program = program.substr(program.rfind('/') + 1);
    const int written = write_learned_policy(recording, o.learn, "learned-" + program);
    if (written != 0) {
        std::fprintf(stderr, "bwrun: the learned policy could not be written to %s\n", o.learn.c_str());
        return kExitFailure;
    }
    std::fprintf(stderr, "bwrun: learned policy written to %s (%zu paths recorded%s)\n", o.learn.c_str(),
                 recording.paths.size(),
                 recording.dropped ? fmt::format(", {} events lost: review it", recording.dropped).c_str() : "");
    return status;
}

// bwrun inside a sandbox: the program runs in a nested sandbox that the outermost bwrun
// (the broker) sets up, under both policies. Needs no privilege.
int run_nested(const Options& o, const Invocation& inv, int broker)
{
    // The broker does what needs privilege: only root (not setuid) changes the program's
    // ids, and a setuid bwrun gives up root before it opens anything the caller names.
    const auto credentials = decide_credentials(o, inv.setuid_mode);
    const bool change_credentials = getuid() == 0 && geteuid() == 0;
    if (!change_credentials && (credentials.uid != getuid() || credentials.gid != getgid()))
        throw rt::Failure("inside a sandbox, only root can run the program as another user");
    if (inv.setuid_mode && drop_to(credentials) != nullptr)
        rt::fail_errno("cannot give up the setuid root rights");
    const auto read = artifact::read(o.artifact);
    if (const auto* e = std::get_if<artifact::Error>(&read))
        throw rt::Failure(e->message);
    const auto& art = std::get<artifact::Artifact>(read);
    if (!o.name.empty() && !rt::valid_sandbox_name(o.name))
        throw rt::Failure(fmt::format("invalid sandbox name `{}`: use 1-64 letters, digits, `.`, `_` or `-`", o.name));
    Launch launch{credentials, o.cwd, apply_env_rules(inv.caller_env, o.env), {}, inv.caller_umask,
                  native_seccomp_filter(art.policy)};
    launch.argv = program_argv(o, launch);
    launch.change_credentials = change_credentials;
    nesting::set_broker_env(launch.env, broker);
    const auto audit = open_audit(o.audit, false);
    const int signal_fd = block_forwarded_signals();

    nesting::NestedStart child(launch, inv.original_mask);
    const auto granted = nesting::request(broker, o.name, o.artifact, child);
    DenialReporter reporter(art.policy, granted.name, o.quiet, audit.get());
    child.release();
    std::vector<EventSource> sources{{granted.socket, [&] { return read_forwarded(granted.socket, reporter); }}};
    const int status = supervise(child.pid(), child.pidfd(), signal_fd, sources, reporter);
    // The broker ends the sandbox, sends what events are left and closes its end.
    shutdown(granted.socket, SHUT_WR);
    pollfd pfd{granted.socket, POLLIN, 0};
    while (poll(&pfd, 1, -1) > 0 && read_forwarded(granted.socket, reporter)) {
    }
    close(granted.socket);
    reporter.flush(true);
    print_totals(reporter, granted.name, o.quiet);
    return status;
}

int run(const Options& o, const Invocation& inv)
{
    if (const int broker = nesting::broker_socket(inv.caller_env); broker >= 0)
        return run_nested(o, inv, broker);
    if (const auto outer = nesting::enclosing_sandbox())
        throw rt::Failure(fmt::format("bwrun runs inside sandbox {}, but {} is not set: a nested bwrun reaches its "
                                      "sandbox's bwrun through the socket that names (was it removed from the "
                                      "environment?)",
                                      *outer, nesting::kBrokerEnv));
    if (o.vm && inv.setuid_mode)
        throw rt::Failure("--vm is refused when bwrun runs setuid root: it would start the VM runner, a script, "
                          "with root's rights; run scripts/bwvm -- bwrun ... yourself");
    if (o.vm && (geteuid() != 0 || kernel_lacks_bpf_lsm()))
        rerun_in_vm(o, inv.argc, inv.argv, inv.original_mask);
    if (!o.learn.empty() && inv.setuid_mode)
        throw rt::Failure("--learn is refused when bwrun runs setuid root: run it as root");
    // The artifact first: one from another format version is named as such, whoever runs
    // bwrun and whatever the kernel supports. Learn mode makes its own.
    artifact::Artifact art;
    if (o.learn.empty()) {
        const std::string artifact_path = inv.setuid_mode ? open_trusted_artifact(o.artifact) : o.artifact;
        auto read = artifact::read(artifact_path);
        if (const auto* e = std::get_if<artifact::Error>(&read))
            throw rt::Failure(e->message);
        art = std::move(std::get<artifact::Artifact>(read));
    } else {
        art = learn_artifact();
    }
    if (geteuid() != 0)
        throw rt::Failure("bwrun must run as root: it loads BPF programs and creates cgroups");
    if (kernel_lacks_bpf_lsm())
        throw rt::CannotEnforce(rt::bpf_lsm_missing_message(rt::active_lsms()));

    const std::string name = o.name.empty() ? rt::default_sandbox_name(art.policy.ir.name, getpid()) : o.name;
    if (!rt::valid_sandbox_name(name))
        throw rt::Failure(fmt::format("invalid sandbox name `{}`: use 1-64 letters, digits, `.`, `_` or `-`", name));

    Launch launch{decide_credentials(o, inv.setuid_mode), o.cwd, apply_env_rules(inv.caller_env, o.env), {},
                  inv.caller_umask, native_seccomp_filter(art.policy)};
    launch.argv = program_argv(o, launch);
    const auto audit = open_audit(o.audit, inv.setuid_mode);
    const int signal_fd = block_forwarded_signals();

    std::optional<rt::StateLock> lock;
    lock.emplace();
    for (const auto& stuck : rt::collect_orphans())
        std::fprintf(stderr, "bwrun: warning: orphaned sandbox %s has processes that survive SIGKILL\n",
                     stuck.c_str());
    // Before anything is written under the name: another sandbox's files carry it.
    rt::ensure_name_free(name);
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
    int pidfd = -1;
    DenialReporter reporter(art.policy, name, o.quiet, audit.get());
    Recorder recorder;
    if (!o.learn.empty())
        reporter.set_observer([&](const bw_event& e) { return recorder.record(e); });
    ring_buffer* ring = nullptr;
    std::optional<rt::SandboxLog> log;
    std::optional<LiveWatch> live;
    bool registered = false;
    std::optional<Watchdog> watchdog;
    std::optional<nesting::Broker> broker;
    rt::SandboxRecord record{name, cgroup->path(), cgroup->id(), 0, getpid(), art.policy.ir.name, o.artifact,
                             enforcer.pin_dir(), static_cast<std::int64_t>(std::time(nullptr)), {}, {}};

    // Whatever happens from here, the sandbox ends with bwrun and leaves nothing behind.
    auto teardown = [&] {
        // Nested sandboxes first: their policies sit in the programs this one's ending may unload.
        if (broker)
            broker->end_all();
        if (live)
            live->check_dropped();
        const bool ended = rt::end_sandbox(enforcer, *cgroup, name, record.supervisor_pid, lock.has_value());
        lock.reset();
        if (ring != nullptr) {
            ring_buffer__consume(ring);
            ring_buffer__free(ring);
        }
        reporter.flush(true);
        live.reset();
        if (!registered)
            rt::remove_sandbox_files(name); // unregistering left them
        if (events_fd >= 0)
            close(events_fd);
        if (!ended) {
            // The watchdog tries again once bwrun is gone; until then the sandbox stays confined.
            std::fprintf(stderr, "bwrun: processes of %s survived SIGKILL; the sandbox stays confined\n",
                         cgroup->path().c_str());
            return;
        }
        // The watchdog unloads the program once it has lingered unused; without one, now.
        if (watchdog)
            watchdog->dismiss();
        else
            rt::unload_if_unused(enforcer.pin_dir(), std::chrono::seconds(0));
    };

    int status = kExitFailure;
    try {
        events_fd = enforcer.install(cgroup->id(), art.policy.tables);
        ring = ring_buffer__new(events_fd, DenialReporter::on_event, &reporter, nullptr);
        if (ring == nullptr)
            rt::fail_errno("cannot read the sandbox's denial ring buffer");
        // The policy in force, which bwctl edits; and the log that `bwctl log` reads.
        rt::write_live_policy(name, {0, o.artifact, art.policy.sources.empty() ? "" : art.policy.sources.front().sha256,
                                     "", 0, art.policy.ir, {}});
        log.emplace(name);
        reporter.set_log(&*log);
        live.emplace(name, reporter);
        watchdog.emplace(Watchdog::start(record, inv.setuid_mode));
        // After the watchdog's fork: only the program inherits the broker's socket.
        if (o.nesting) {
            broker.emplace(record);
            nesting::set_broker_env(launch.env, broker->child_end());
        }
        record.main_pid = spawn_in_cgroup(*cgroup, launch, inv.original_mask, pidfd);
        std::vector<EventSource> sources{
            {ring_buffer__epoll_fd(ring), [&] { return ring_buffer__consume(ring) >= 0; }}};
        for (auto& source : live->sources())
            sources.push_back(std::move(source));
        if (broker) {
            broker->close_child_end();
            sources.push_back({broker->poll_fd(), [&] {
                                   broker->service();
                                   return true;
                               }});
        }
        rt::register_sandbox(record);
        registered = true;
        lock.reset();
        status = supervise(record.main_pid, pidfd, signal_fd, sources, reporter);
    } catch (...) {
        teardown();
        throw;
    }
    teardown();
    print_totals(reporter, name, o.quiet);
    if (!o.learn.empty())
        return learn_from(recorder, reporter, o, launch, status);
    return status;
}

} // namespace

int main(int argc, char** argv)
{
    Invocation inv{argc, argv, setuid_mode(), {}, {}, 0};
    // Before anything reads the environment: in setuid mode it is the caller's to control.
    inv.caller_env = take_environment(inv.setuid_mode);
    // The caller's umask is the program's; with root's rights bwrun creates files with its own.
    inv.caller_umask = umask(022);
    if (!inv.setuid_mode)
        umask(inv.caller_umask);
    sigprocmask(SIG_SETMASK, nullptr, &inv.original_mask);
    int exit_code = 0;
    const auto options = parse_args(argc, argv, exit_code);
    if (!options)
        return exit_code;
    // libbpf's own messages only help when debugging; failures are reported by us.
    if (std::getenv("LIBBPF_LOG") == nullptr)
        libbpf_set_print(nullptr);
    try {
        try {
            return run(*options, inv);
        } catch (const rt::CannotEnforce&) {
            if (!options->vm || inv.setuid_mode)
                throw;
        }
        rerun_in_vm(*options, argc, argv, inv.original_mask);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bwrun: %s\n", e.what());
        return kExitFailure;
    }
}
