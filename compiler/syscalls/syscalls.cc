#include "syscalls/syscalls.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>
#include <ranges>
#include <utility>

namespace bw::syscalls {

namespace {

struct ErrnoName {
    std::string_view name;
    int value;
    bool alias; // defined as another name (EWOULDBLOCK is EAGAIN)
};

// Defines generated_syscalls (sorted by name) and generated_errnos (sorted by name).
#include "syscalls/syscall_tables.inc"

static_assert(std::ranges::is_sorted(generated_syscalls, {}, &Syscall::name));
static_assert(std::ranges::is_sorted(generated_errnos, {}, &ErrnoName::name));

constexpr const Syscall* lookup_syscall(std::string_view name)
{
    const auto* it = std::ranges::lower_bound(generated_syscalls, name, {}, &Syscall::name);
    return it != std::ranges::end(generated_syscalls) && it->name == name ? it : nullptr;
}

// ---------------------------------------------------------------------------------------------------------------
// Groups, modelled on systemd's SystemCallFilter sets (systemd.exec(5)), restricted to names that exist on x86_64
// or aarch64 (the 32-bit-only and other architectures' names are left out). Two deliberate differences: @privileged
// also includes @mount (every mount-family syscall needs CAP_SYS_ADMIN), and quotactl_fd sits next to quotactl.

constexpr std::string_view kAio[] = {"io_cancel", "io_destroy", "io_getevents", "io_pgetevents", "io_setup",
    "io_submit", "io_uring_enter", "io_uring_register", "io_uring_setup"};
constexpr std::string_view kBasicIo[] = {"close", "dup", "dup2", "dup3", "lseek", "pread64", "preadv", "preadv2",
    "pwrite64", "pwritev", "pwritev2", "read", "readv", "write", "writev"};
constexpr std::string_view kChown[] = {"chown", "fchown", "fchownat", "lchown"};
constexpr std::string_view kClock[] = {"adjtimex", "clock_adjtime", "clock_settime", "settimeofday"};
constexpr std::string_view kCpuEmulation[] = {"modify_ldt"};
constexpr std::string_view kDebug[] = {"lookup_dcookie", "perf_event_open", "pidfd_getfd", "ptrace"};
constexpr std::string_view kFileSystem[] = {"access", "chdir", "chmod", "close", "creat", "faccessat", "faccessat2",
    "fallocate", "fchdir", "fchmod", "fchmodat", "fcntl", "fgetxattr", "flistxattr", "fremovexattr", "fsetxattr",
    "fstat", "fstatfs", "ftruncate", "futimesat", "getcwd", "getdents", "getdents64", "getxattr", "inotify_add_watch",
    "inotify_init", "inotify_init1", "inotify_rm_watch", "lgetxattr", "link", "linkat", "listxattr", "llistxattr",
    "lremovexattr", "lsetxattr", "lstat", "mkdir", "mkdirat", "mknod", "mknodat", "mmap", "munmap", "newfstatat",
    "open", "openat", "openat2", "readlink", "readlinkat", "removexattr", "rename", "renameat", "renameat2", "rmdir",
    "setxattr", "stat", "statfs", "statx", "symlink", "symlinkat", "truncate", "unlink", "unlinkat", "utime",
    "utimensat", "utimes"};
constexpr std::string_view kIoEvent[] = {"epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old",
    "epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2", "poll", "ppoll", "pselect6",
    "select"};
constexpr std::string_view kIpc[] = {"memfd_create", "mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive",
    "mq_timedsend", "mq_unlink", "msgctl", "msgget", "msgrcv", "msgsnd", "pipe", "pipe2", "process_vm_readv",
    "process_vm_writev", "semctl", "semget", "semop", "semtimedop", "shmat", "shmctl", "shmdt", "shmget"};
constexpr std::string_view kKeyring[] = {"add_key", "keyctl", "request_key"};
constexpr std::string_view kMemlock[] = {"mlock", "mlock2", "mlockall", "munlock", "munlockall"};
constexpr std::string_view kModule[] = {"delete_module", "finit_module", "init_module"};
constexpr std::string_view kMount[] = {"chroot", "fsconfig", "fsmount", "fsopen", "fspick", "mount",
    "mount_setattr", "move_mount", "open_tree", "pivot_root", "umount2"};
constexpr std::string_view kNetworkIo[] = {"accept", "accept4", "bind", "connect", "getpeername", "getsockname",
    "getsockopt", "listen", "recvfrom", "recvmmsg", "recvmsg", "sendmmsg", "sendmsg", "sendto", "setsockopt",
    "shutdown", "socket", "socketpair"};
constexpr std::string_view kObsolete[] = {"_sysctl", "afs_syscall", "create_module", "get_kernel_syms", "getpmsg",
    "putpmsg", "query_module", "security", "sysfs", "tuxcall", "uselib", "ustat", "vserver"};
constexpr std::string_view kPkey[] = {"pkey_alloc", "pkey_free", "pkey_mprotect"};
constexpr std::string_view kPrivileged[] = {"@chown", "@clock", "@module", "@mount", "@raw-io", "@reboot", "@swap",
    "_sysctl", "acct", "bpf", "capset", "chroot", "fanotify_init", "fanotify_mark", "nfsservctl",
    "open_by_handle_at", "pivot_root", "quotactl", "quotactl_fd", "setdomainname", "setfsuid", "setgroups",
    "sethostname", "setresuid", "setreuid", "setuid", "vhangup"};
constexpr std::string_view kProcess[] = {"arch_prctl", "capget", "clone", "clone3", "execveat", "fork", "getrusage",
    "kill", "pidfd_open", "pidfd_send_signal", "prctl", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "setns", "tgkill",
    "times", "tkill", "unshare", "vfork", "wait4", "waitid"};
constexpr std::string_view kRawIo[] = {"ioperm", "iopl"};
constexpr std::string_view kReboot[] = {"kexec_file_load", "kexec_load", "reboot"};
constexpr std::string_view kResources[] = {"ioprio_set", "mbind", "migrate_pages", "move_pages",
    "sched_setaffinity", "sched_setattr", "sched_setparam", "sched_setscheduler", "set_mempolicy",
    "set_mempolicy_home_node", "setpriority", "setrlimit"};
constexpr std::string_view kSetuid[] = {"setgid", "setgroups", "setregid", "setresgid", "setresuid", "setreuid",
    "setuid"};
constexpr std::string_view kSignal[] = {"rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigsuspend",
    "rt_sigtimedwait", "sigaltstack", "signalfd", "signalfd4"};
constexpr std::string_view kSwap[] = {"swapoff", "swapon"};
constexpr std::string_view kSync[] = {"fdatasync", "fsync", "msync", "sync", "sync_file_range", "syncfs"};
constexpr std::string_view kTimer[] = {"alarm", "getitimer", "setitimer", "timer_create", "timer_delete",
    "timer_getoverrun", "timer_gettime", "timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime",
    "times"};

constexpr Group kGroups[] = {
    {"aio", "asynchronous I/O", kAio},
    {"basic-io", "basic I/O on open file descriptors", kBasicIo},
    {"chown", "change the owner of files", kChown},
    {"clock", "set the system clock", kClock},
    {"cpu-emulation", "CPU emulation (x86 local descriptor tables)", kCpuEmulation},
    {"debug", "debugging, performance monitoring and tracing", kDebug},
    {"file-system", "file system operations", kFileSystem},
    {"io-event", "event loops", kIoEvent},
    {"ipc", "SysV IPC, POSIX message queues and other IPC", kIpc},
    {"keyring", "kernel keyring access", kKeyring},
    {"memlock", "lock memory", kMemlock},
    {"module", "load and unload kernel modules", kModule},
    {"mount", "mount and unmount file systems, change the root", kMount},
    {"network-io", "socket I/O, network and Unix", kNetworkIo},
    {"obsolete", "unusual, obsolete or unimplemented syscalls", kObsolete},
    {"pkey", "memory protection keys", kPkey},
    {"privileged", "syscalls that need superuser capabilities", kPrivileged},
    {"process", "process control, execution and namespaces", kProcess},
    {"raw-io", "raw I/O port access", kRawIo},
    {"reboot", "reboot and kexec", kReboot},
    {"resources", "change resource limits, priorities and memory placement", kResources},
    {"setuid", "change user and group credentials", kSetuid},
    {"signal", "signal handling", kSignal},
    {"swap", "enable and disable swap", kSwap},
    {"sync", "synchronise files and memory with storage", kSync},
    {"timer", "schedule operations by time", kTimer},
};

constexpr std::string_view strip_at(std::string_view name)
{
    return name.starts_with('@') ? name.substr(1) : name;
}

constexpr const Group* lookup_group(std::string_view name)
{
    const auto* it = std::ranges::find(kGroups, strip_at(name), &Group::name);
    return it != std::ranges::end(kGroups) ? it : nullptr;
}

// The table is hand-written, the names it uses are not: a member that neither architecture knows fails the build.
consteval bool group_members_known()
{
    for (const Group& group : kGroups) {
        for (std::string_view member : group.members) {
            const bool known = member.starts_with('@') ? lookup_group(member) != nullptr
                                                       : lookup_syscall(member) != nullptr;
            if (!known)
                return false;
        }
    }
    return true;
}
static_assert(group_members_known(), "a group names a syscall or group that is in neither generated table; "
                                     "the unit test `every group member is a known syscall` names it");

// ---------------------------------------------------------------------------------------------------------------
// Syscalls that an LSM hook covers, checked against the Debian 6.1 kernel source (linux-source-6.1 6.1.192).
// The path_* hooks exist only with CONFIG_SECURITY_PATH, which Debian's kernels have (AppArmor selects it).
//
// A syscall is listed only if every invocation that has an effect reaches the hook before the effect, and an
// error from the hook fails the syscall. Calls that change nothing may still return 0 without the hook
// (setresuid(-1, -1, -1), utimensat with both UTIME_OMIT, flock(LOCK_MAND), mprotect of length 0).
//
// Most hooks serve several syscalls (task_kill: kill, tkill, tgkill, and also rt_sigqueueinfo to another process;
// socket_sendmsg: sendto, sendmsg, sendmmsg and write(2) on a socket; inode_setattr: utimes and also chmod, chown,
// truncate). A program that denies one syscall but not its siblings must look at the current syscall number too.
//
// Left out on purpose (seccomp only):
//   ptrace              PTRACE_TRACEME goes through ptrace_traceme, not ptrace_access_check, and requests on an
//                       already traced process go through no hook, so denying live does not stop a running trace.
//   rt_sigqueueinfo,    a signal to the caller's own process with si_code >= 0 skips task_kill
//   rt_tgsigqueueinfo,  (check_kill_permission returns 0 for signals that are not "from user").
//   pidfd_send_signal
//   process_vm_readv/writev, pidfd_getfd, kcmp, move_pages
//                       ptrace_access_check / task_movememory are skipped for the caller's own process.
//   clock_settime,      a dynamic POSIX clock (PTP device) is set by the driver without the settime hook;
//   clock_adjtime,      adjtimex never calls it.
//   adjtimex
//   kexec_file_load     KEXEC_FILE_UNLOAD unloads without kernel_read_file.
//   prlimit64           reads pass no hook, and task_prlimit is skipped for the caller itself.
//   setfsuid, setfsgid  task_fix_set*id can refuse the change, but the syscall cannot report an error.
//   unlinkat            path_unlink or path_rmdir depending on AT_REMOVEDIR: no single hook.
//   open, openat,       O_PATH opens skip file_open.
//   openat2
//   creat               creates the file (path_mknod) before file_open can refuse it.
//   ftruncate           path_truncate in 6.1, file_truncate from 6.2 on (the 6.12 VM kernel).
//   msgrcv              msg_queue_msgrcv only hides messages, so a denial blocks instead of failing.
//   add_key, keyctl,    several hooks (key_alloc for new keys, key_permission for existing ones).
//   request_key
//   fsopen, fsconfig, fsmount, fspick, open_tree, mount_setattr
//                       no single hook (a tree they build is only attached by move_mount, which is listed).
//   unshare             userns_create sees only CLONE_NEWUSER.
//   delete_module, reboot, swapon, swapoff, sethostname, setdomainname, acct, setns: no hook.
struct LsmCoverage {
    std::string_view syscall;
    std::string_view hook;
};
constexpr LsmCoverage kLsmCoverage[] = {
    {"accept", "socket_accept"},
    {"accept4", "socket_accept"},
    {"bind", "socket_bind"},
    {"bpf", "bpf"},                                 // __sys_bpf, before any command
    {"capset", "capset"},
    {"chmod", "path_chmod"},                        // chmod_common
    {"chown", "path_chown"},                        // chown_common
    {"chroot", "path_chroot"},
    {"clone", "task_alloc"},                        // copy_process, threads included
    {"clone3", "task_alloc"},
    {"connect", "socket_connect"},
    {"execve", "bprm_creds_for_exec"},              // bprm_execve, once per exec, before the point of no return
    {"execveat", "bprm_creds_for_exec"},
    {"fchmod", "path_chmod"},
    {"fchmodat", "path_chmod"},
    {"fchown", "path_chown"},
    {"fchownat", "path_chown"},
    {"fcntl", "file_fcntl"},
    {"finit_module", "kernel_read_file"},           // READING_MODULE
    {"flock", "file_lock"},
    {"fork", "task_alloc"},
    {"futimesat", "inode_setattr"},                 // notify_change
    {"getpeername", "socket_getpeername"},
    {"getsockname", "socket_getsockname"},
    {"getsockopt", "socket_getsockopt"},
    {"init_module", "kernel_load_data"},            // LOADING_MODULE
    {"inotify_add_watch", "path_notify"},
    {"ioctl", "file_ioctl"},
    {"ioprio_set", "task_setioprio"},               // once per target task
    {"kexec_load", "kernel_load_data"},             // LOADING_KEXEC_IMAGE, unloading included
    {"kill", "task_kill"},                          // kill(-1, sig) denied for every target returns 0
    {"lchown", "path_chown"},
    {"link", "path_link"},
    {"linkat", "path_link"},
    {"listen", "socket_listen"},
    {"migrate_pages", "task_movememory"},
    {"mkdir", "path_mkdir"},
    {"mkdirat", "path_mkdir"},
    {"mknod", "path_mknod"},
    {"mknodat", "path_mknod"},
    {"mmap", "mmap_file"},                          // anonymous maps too (file is NULL)
    {"mount", "sb_mount"},                          // path_mount, every flavour: new, bind, move, remount
    {"move_mount", "move_mount"},
    {"mprotect", "file_mprotect"},                  // once per VMA
    {"msgsnd", "msg_queue_msgsnd"},
    {"perf_event_open", "perf_event_open"},
    {"pivot_root", "sb_pivotroot"},
    {"pkey_mprotect", "file_mprotect"},
    {"prctl", "task_prctl"},                        // the hook's pass value is -ENOSYS: returning 0 skips prctl
    {"quotactl", "quotactl"},                       // check_quotactl_permission; Q_SYNC without a device too
    {"quotactl_fd", "quotactl"},
    {"recvfrom", "socket_recvmsg"},
    {"recvmmsg", "socket_recvmsg"},                 // the first datagram; later ones skip the hook
    {"recvmsg", "socket_recvmsg"},
    {"rename", "path_rename"},
    {"renameat", "path_rename"},
    {"renameat2", "path_rename"},
    {"rmdir", "path_rmdir"},
    {"sched_setaffinity", "task_setscheduler"},
    {"sched_setattr", "task_setscheduler"},
    {"sched_setparam", "task_setscheduler"},
    {"sched_setscheduler", "task_setscheduler"},
    {"semop", "sem_semop"},
    {"semtimedop", "sem_semop"},
    {"sendmmsg", "socket_sendmsg"},                 // the first datagram; repeats to the same address skip it
    {"sendmsg", "socket_sendmsg"},
    {"sendto", "socket_sendmsg"},
    {"setgid", "task_fix_setgid"},
    {"setgroups", "task_fix_setgroups"},
    {"setpgid", "task_setpgid"},
    {"setpriority", "task_setnice"},                // once per target task
    {"setregid", "task_fix_setgid"},
    {"setresgid", "task_fix_setgid"},
    {"setresuid", "task_fix_setuid"},
    {"setreuid", "task_fix_setuid"},
    {"setrlimit", "task_setrlimit"},                // also reached by prlimit64 with a new limit
    {"setsockopt", "socket_setsockopt"},
    {"settimeofday", "settime"},                    // also when setting only the time zone
    {"setuid", "task_fix_setuid"},
    {"shmat", "shm_shmat"},
    {"shutdown", "socket_shutdown"},
    {"socket", "socket_create"},
    {"socketpair", "socket_create"},                // both sockets are created through __sock_create
    {"symlink", "path_symlink"},
    {"symlinkat", "path_symlink"},
    {"syslog", "syslog"},
    {"tgkill", "task_kill"},
    {"tkill", "task_kill"},
    {"truncate", "path_truncate"},                  // vfs_truncate, in 6.1 and 6.12 alike
    {"umount2", "sb_umount"},
    {"unlink", "path_unlink"},
    {"utime", "inode_setattr"},
    {"utimensat", "inode_setattr"},
    {"utimes", "inode_setattr"},
};

static_assert(std::ranges::is_sorted(kLsmCoverage, {}, &LsmCoverage::syscall));
static_assert(std::ranges::all_of(kLsmCoverage, [](const LsmCoverage& c) { return lookup_syscall(c.syscall) != nullptr; }),
              "the LSM coverage table names a syscall that is in neither generated table");

// ---------------------------------------------------------------------------------------------------------------
// Did-you-mean.

constexpr std::size_t kMaxSuggestions = 3;

// Optimal string alignment distance: Levenshtein plus transposition of two adjacent characters, the usual
// restricted form of Damerau-Levenshtein ("opnenat" is one edit from "openat" either way).
std::size_t edit_distance(std::string_view a, std::string_view b)
{
    // Row i of the matrix needs rows i-1 and, for transpositions, i-2.
    std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
    std::iota(previous.begin(), previous.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0u : 1u);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                current[j] = std::min(current[j], before[j - 2] + 1);
        }
        std::swap(before, previous);
        std::swap(previous, current);
    }
    return previous[b.size()];
}

template <typename Names>
std::vector<std::string> closest(std::string_view misspelt, const Names& names, std::string_view prefix)
{
    std::string wanted(misspelt);
    std::ranges::transform(wanted, wanted.begin(),
                           [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    const std::size_t limit = std::max<std::size_t>(1, wanted.size() / 3);

    std::vector<std::pair<std::size_t, std::string_view>> ranked;
    for (std::string_view name : names) {
        // The distance is at least the difference in length: skip the matrix when that alone is too far.
        const std::size_t length_gap = name.size() > wanted.size() ? name.size() - wanted.size()
                                                                   : wanted.size() - name.size();
        if (length_gap > limit)
            continue;
        if (const std::size_t distance = edit_distance(wanted, name); distance <= limit)
            ranked.emplace_back(distance, name);
    }
    std::ranges::sort(ranked);
    std::vector<std::string> suggestions;
    for (const auto& [distance, name] : ranked | std::views::take(kMaxSuggestions))
        suggestions.push_back(std::string(prefix) + std::string(name));
    return suggestions;
}

} // namespace

std::span<const Syscall> all()
{
    return generated_syscalls;
}

const Syscall* find(std::string_view name)
{
    return lookup_syscall(name);
}

std::optional<int> number(const Syscall& syscall, Arch arch)
{
    const int n = arch == Arch::X86_64 ? syscall.x86_64 : syscall.aarch64;
    return n >= 0 ? std::optional<int>(n) : std::nullopt;
}

std::span<const Group> groups()
{
    return kGroups;
}

const Group* find_group(std::string_view name)
{
    return lookup_group(name);
}

std::vector<std::string_view> expand_group(const Group& group)
{
    std::vector<std::string_view> syscalls;
    // Groups may share nested groups (and could even name each other): expand each group once.
    std::vector<const Group*> expanded = {&group};
    std::vector<const Group*> pending = {&group};
    while (!pending.empty()) {
        const Group* current = pending.back();
        pending.pop_back();
        for (std::string_view member : current->members) {
            if (!member.starts_with('@')) {
                syscalls.push_back(member);
                continue;
            }
            const Group* nested = lookup_group(member);
            if (std::ranges::find(expanded, nested) == expanded.end()) {
                expanded.push_back(nested);
                pending.push_back(nested);
            }
        }
    }
    std::ranges::sort(syscalls);
    const auto duplicates = std::ranges::unique(syscalls);
    syscalls.erase(duplicates.begin(), duplicates.end());
    return syscalls;
}

const Syscall* by_number(int nr, Arch arch)
{
    const auto table = all();
    const auto it = std::ranges::find_if(table, [&](const Syscall& s) { return number(s, arch) == nr; });
    return it != table.end() ? &*it : nullptr;
}

std::string_view lsm_hook(std::string_view syscall)
{
    const auto* it = std::ranges::lower_bound(kLsmCoverage, syscall, {}, &LsmCoverage::syscall);
    return it != std::ranges::end(kLsmCoverage) && it->syscall == syscall ? it->hook : std::string_view();
}

std::optional<int> errno_value(std::string_view name)
{
    const auto* it = std::ranges::lower_bound(generated_errnos, name, {}, &ErrnoName::name);
    if (it == std::ranges::end(generated_errnos) || it->name != name)
        return std::nullopt;
    return it->value;
}

std::string_view errno_name(int value)
{
    const auto* it = std::ranges::find_if(generated_errnos, [value](const ErrnoName& e) {
        return e.value == value && !e.alias;
    });
    return it != std::ranges::end(generated_errnos) ? it->name : std::string_view();
}

std::vector<std::string> suggest_syscall(std::string_view misspelt)
{
    return closest(misspelt, generated_syscalls | std::views::transform(&Syscall::name), "");
}

std::vector<std::string> suggest_group(std::string_view misspelt)
{
    return closest(strip_at(misspelt), kGroups | std::views::transform(&Group::name), "@");
}

// The hooks that bpf-templates/hooks/syscalls.bpf.h attaches a program to, which denies the current syscall
// when the sandbox's live table says so. Hooks on hot paths (send, receive, mmap, ioctl, the path hooks but
// chmod and chown) and those whose pass value is not 0 (task_prctl) are left to seccomp.
constexpr std::array<std::string_view, 25> kLiveHooks{
    "bpf",           "kernel_load_data", "kernel_read_file", "move_mount",         "path_chmod",
    "path_chown",    "path_chroot",      "perf_event_open",  "quotactl",           "sb_mount",
    "sb_pivotroot",  "sb_umount",        "settime",          "socket_accept",      "socket_bind",
    "socket_connect", "socket_create",   "socket_getpeername", "socket_getsockname", "socket_getsockopt",
    "socket_listen", "socket_setsockopt", "socket_shutdown", "syslog",             "task_kill",
};

std::span<const std::string_view> live_hooks()
{
    return kLiveHooks;
}

std::string_view live_hook(std::string_view syscall)
{
    const auto hook = lsm_hook(syscall);
    return std::ranges::find(kLiveHooks, hook) == kLiveHooks.end() ? std::string_view{} : hook;
}

} // namespace bw::syscalls
