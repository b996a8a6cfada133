#include "spawn.h"

#include "failure.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <linux/audit.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char** environ;

namespace bw::bwrun {

namespace {

bool has_name(const std::string& entry, const std::string& name)
{
    return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=';
}

std::vector<char*> pointers(const std::vector<std::string>& strings)
{
    std::vector<char*> out;
    for (const auto& s : strings)
        out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

// In the child, which must not run bwrun's exit handlers or flush its stdio buffers.
[[noreturn]] void child_fail(const std::string& what, int err, int status)
{
    const std::string line = "bwrun: " + what + ": " + std::strerror(err) + "\n";
    [[maybe_unused]] const auto written = write(STDERR_FILENO, line.data(), line.size());
    _exit(status);
}

// Without no_new_privs, which would stop setuid programs the policy allows: the caller (root, euid 0) has
// CAP_SYS_ADMIN, which the kernel accepts instead. Single-threaded, so no SECCOMP_FILTER_FLAG_TSYNC.
int install_seccomp(const std::vector<sock_filter>& code)
{
    sock_fprog program{static_cast<unsigned short>(code.size()), const_cast<sock_filter*>(code.data())};
    return static_cast<int>(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program));
}

} // namespace

std::vector<sock_filter> native_seccomp_filter(const artifact::PolicyData& policy)
{
#if defined(__x86_64__)
    constexpr std::uint32_t native = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    constexpr std::uint32_t native = AUDIT_ARCH_AARCH64;
#else
#error "bwrun knows the seccomp architecture of x86_64 and aarch64 only"
#endif
    if (policy.seccomp.empty())
        return {};
    for (const auto& f : policy.seccomp) {
        if (f.audit_arch == native)
            return f.code;
    }
    throw rt::Failure("the policy has syscall rules but no seccomp filter for this architecture; recompile it "
                      "with this bwc");
}

std::vector<std::string> apply_env_rules(std::vector<std::string> env, const std::vector<EnvRule>& rules)
{
    for (const auto& r : rules) {
        if (r.kind == EnvRule::Kind::Clear) {
            env.clear();
            continue;
        }
        const auto it = std::find_if(env.begin(), env.end(), [&](const auto& e) { return has_name(e, r.name); });
        if (r.kind == EnvRule::Kind::Unset) {
            if (it != env.end())
                env.erase(it);
        } else if (it != env.end()) {
            *it = r.name + "=" + r.value;
        } else {
            env.push_back(r.name + "=" + r.value);
        }
    }
    return env;
}

std::vector<std::string> program_argv(const Options& o, const Launch& launch)
{
    std::vector<std::string> argv;
    for (const char* a : o.command) {
        if (a != nullptr)
            argv.emplace_back(a);
    }
    if (!argv.empty())
        return argv;
    for (const auto& e : launch.env) {
        if (has_name(e, "SHELL") && e.size() > 6)
            return {e.substr(6)};
    }
    if (!launch.credentials.shell.empty())
        return {launch.credentials.shell};
    return {"/bin/sh"};
}

void exec_program(const Launch& launch, const sigset_t& old_mask)
{
    auto argv = pointers(launch.argv);
    auto env = pointers(launch.env);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    umask(launch.umask);
    // Without CAP_SYS_ADMIN (a nested bwrun run by a user), a filter needs no_new_privs.
    if (!launch.seccomp.empty() && !launch.change_credentials && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        child_fail("cannot set no_new_privs for the policy's seccomp filter", errno, kExitFailure);
    // Before the drop: afterwards the child lacks CAP_SYS_ADMIN. The filter then applies to the drop and the exec.
    if (!launch.seccomp.empty() && install_seccomp(launch.seccomp) != 0)
        child_fail("cannot install the policy's seccomp filter", errno, kExitFailure);
    if (const char* err = launch.change_credentials ? drop_to(launch.credentials) : nullptr) {
        const int drop_errno = errno;
        child_fail(launch.seccomp.empty() ? std::string(err)
                                          : std::string(err) + " (the policy's syscall rules apply from here)",
                   drop_errno, kExitFailure);
    }
    // Entered as the program's user: it sees only the folders that user may enter.
    if (!launch.cwd.empty() && chdir(launch.cwd.c_str()) != 0)
        child_fail("cannot enter the working directory " + launch.cwd, errno, kExitFailure);
    // execvp searches the program's PATH, as the program's user, never bwrun's.
    environ = env.data();
    execvp(argv[0], argv.data());
    const int err = errno;
    child_fail(std::string("cannot run ") + argv[0], err, err == ENOENT ? kExitNotFound : kExitCannotExec);
}

pid_t spawn_in_cgroup(const rt::Cgroup& cgroup, const Launch& launch, const sigset_t& old_mask, int& pidfd)
{
    clone_args args{};
    args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
    args.pidfd = reinterpret_cast<std::uintptr_t>(&pidfd);
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<std::uint64_t>(cgroup.fd());
    const long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0)
        rt::fail_errno("cannot start the program inside cgroup " + cgroup.path() + " (clone3 needs Linux 5.7+)");
    if (pid != 0)
        return static_cast<pid_t>(pid);
    exec_program(launch, old_mask);
}

} // namespace bw::bwrun
