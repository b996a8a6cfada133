#include "broker.h"

#include "protocol.h"

#include "artifact/artifact.h"
#include "cgroup.h"
#include "cleanup.h"
#include "enforcer.h"
#include "failure.h"
#include "live_policy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace bw::bwrun::nesting {

namespace {

// Events forwarded but not yet read that a nested sandbox's socket holds before dropping more.
constexpr int kForwardBytes = 8 << 20;

// The pid a pidfd refers to; -1 once the process is gone or when `fd` is no pidfd.
pid_t pid_of(int pidfd)
{
    std::ifstream in(fmt::format("/proc/self/fdinfo/{}", pidfd));
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("Pid:"))
            return static_cast<pid_t>(std::stol(line.substr(4)));
    }
    return -1;
}

// The cgroup2 directory a process is in.
std::string cgroup_of(pid_t pid)
{
    std::ifstream in(fmt::format("/proc/{}/cgroup", pid));
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("0::"))
            return rt::find_cgroup2_mount() + line.substr(3);
    }
    throw rt::Failure("cannot tell which cgroup the program to nest is in");
}

void copy_text(char* to, std::size_t size, const std::string& text)
{
    const auto n = std::min(text.size(), size - 1);
    std::memcpy(to, text.data(), n);
    to[n] = '\0';
}

void answer(int reply, bool ok, const std::string& name, const std::string& message)
{
    NestReply r{};
    r.ok = ok ? 1 : 0;
    copy_text(r.name, sizeof r.name, name);
    copy_text(r.message, sizeof r.message, message);
    send(reply, &r, sizeof r, MSG_DONTWAIT | MSG_NOSIGNAL);
}

// Each event of the nested sandbox goes to its bwrun as it came. A requester that stops
// reading loses events rather than stalling the broker.
int forward(void* ctx, void* data, std::size_t size)
{
    send(*static_cast<int*>(ctx), data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    return 0;
}

} // namespace

Broker::Broker(const rt::SandboxRecord& top) : top_(top)
{
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
        rt::fail_errno("cannot create the nesting broker's socket");
    socket_ = fds[0];
    child_end_ = fds[1];
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    // The sandboxed program inherits its end, and every process it starts does.
    if (epoll_ < 0 || fcntl(child_end_, F_SETFD, 0) != 0) {
        const int err = errno;
        close(socket_);
        close(child_end_);
        if (epoll_ >= 0)
            close(epoll_);
        rt::fail_errno("cannot set up the nesting broker", err);
    }
    watch(socket_);
}

Broker::~Broker()
{
    end_all();
    close_child_end();
    close(socket_);
    close(epoll_);
}

void Broker::close_child_end()
{
    if (child_end_ >= 0)
        close(child_end_);
    child_end_ = -1;
}

void Broker::watch(int fd)
{
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0)
        rt::fail_errno("cannot watch a nested sandbox's socket");
}

void Broker::service()
{
    epoll_event ev[16];
    const int n = epoll_wait(epoll_, ev, 16, 0);
    for (int i = 0; i < n; ++i) {
        const int fd = ev[i].data.fd;
        if (fd == socket_) {
            serve_request();
            continue;
        }
        for (auto it = nested_.begin(); it != nested_.end(); ++it) {
            Nested& nested = **it;
            if (fd == nested.reply) {
                // The requester is done: its program ended (or it did).
                end(nested);
                nested_.erase(it);
                break;
            }
            if (nested.ring != nullptr && fd == ring_buffer__epoll_fd(nested.ring)) {
                ring_buffer__consume(nested.ring);
                break;
            }
        }
    }
}

void Broker::serve_request()
{
    RequestMessage m;
    auto& req = m.request;
    auto& msg = m.msg;
    const ssize_t got = recvmsg(socket_, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (got < 0)
        return;
    std::vector<int> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        const auto count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t k = 0; k < count; ++k) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
            fds.push_back(fd);
        }
    }
    auto close_fds = [&] {
        for (const int fd : fds) {
            if (fd >= 0)
                close(fd);
        }
    };
    if (got != sizeof req || fds.size() != kRequestFds || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
        if (!fds.empty())
            answer(fds[kReplyFd], false, "", "malformed nesting request (is this bwrun the same version?)");
        close_fds();
        return;
    }
    req.name[sizeof req.name - 1] = '\0';
    req.artifact[sizeof req.artifact - 1] = '\0';
    auto nested = std::make_unique<Nested>();
    nested->reply = fds[kReplyFd];
    fds[kReplyFd] = -1;
    try {
        open_nested(*nested, fds[kArtifactFd], fds[kPidFd], req);
        answer(nested->reply, true, nested->record.name, "");
        nested_.push_back(std::move(nested));
    } catch (const std::exception& e) {
        answer(nested->reply, false, nested->record.name, e.what());
        end(*nested);
    }
    close_fds();
}

void Broker::open_nested(Nested& n, int artifact_fd, int pidfd, const NestRequest& req)
{
    const pid_t pid = pid_of(pidfd);
    if (pid <= 0)
        throw rt::Failure("the program to nest has ended (or a descriptor that is no pidfd was sent)");
    // The program must be in this sandbox, or in a sandbox nested in it: a request can
    // confine only what is confined already.
    const std::string where = cgroup_of(pid);
    const rt::SandboxRecord* parent = where == top_.cgroup ? &top_ : nullptr;
    n.depth = 1;
    for (const auto& other : nested_) {
        if (other->record.cgroup == where) {
            parent = &other->record;
            n.depth = other->depth + 1;
        }
    }
    if (parent == nullptr)
        throw rt::Failure("the program to nest is not in the sandbox that received the request");
    if (n.depth > kMaxDepth)
        throw rt::Failure(fmt::format("sandboxes nest at most {} levels deep", kMaxDepth));
    if (nested_.size() >= kMaxNested)
        throw rt::Failure(fmt::format("a sandbox holds at most {} nested sandboxes at once", kMaxNested));
    struct stat st{};
    if (fstat(artifact_fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<std::uint64_t>(st.st_size) > artifact::kMaxArtifactBytes)
        throw rt::Failure("the nested policy is not a regular file of a policy artifact's size");
    const auto read = artifact::read(fmt::format("/proc/self/fd/{}", artifact_fd));
    if (const auto* e = std::get_if<artifact::Error>(&read))
        throw rt::Failure(fmt::format("{}: {}", req.artifact, e->message));
    const auto& art = std::get<artifact::Artifact>(read);
    const std::string name = req.name[0] != '\0' ? req.name : rt::default_sandbox_name(art.policy.ir.name, pid);
    if (!rt::valid_sandbox_name(name))
        throw rt::Failure(fmt::format("invalid sandbox name `{}`: use 1-64 letters, digits, `.`, `_` or `-`", name));

    rt::StateLock lock;
    if (const auto r = rt::find_sandbox(name); r && rt::supervisor_alive(*r))
        throw rt::Failure(fmt::format("a sandbox named `{}` is already running; choose another --name", name));
    auto enforcer = rt::Enforcer::open_nested(n.depth, art.policy.kernel.min_kernel);
    n.cgroup.emplace(rt::Cgroup::create_in(parent->cgroup, name));
    std::vector<std::string> aliases{parent->pin_dir};
    aliases.insert(aliases.end(), parent->aliases.begin(), parent->aliases.end());
    n.record = {name,          n.cgroup->path(), n.cgroup->id(), pid, getpid(), art.policy.ir.name, req.artifact,
                enforcer.pin_dir(), static_cast<std::int64_t>(std::time(nullptr)), parent->name, aliases};
    n.events = enforcer.install(n.cgroup->id(), art.policy.tables);
    for (const auto& dir : aliases)
        rt::Enforcer::reopen(dir).install_alias(n.cgroup->id(), parent->cgroup_id);
    rt::register_sandbox(n.record);
    // Its policy in force, which bwctl edits; this bwrun, its supervisor, ends its grants.
    rt::write_live_policy(name, {0, req.artifact, art.policy.sources.empty() ? "" : art.policy.sources.front().sha256,
                                 "", 0, art.policy.ir, {}});
    std::ofstream procs(n.cgroup->path() + "/cgroup.procs");
    if (!(procs << pid << std::flush))
        rt::fail_errno("cannot move the program into its nested sandbox " + n.cgroup->path());
    // A process that has not been reaped keeps its pid: while the pidfd's process lives,
    // the pid written was its, and it was in this sandbox when its cgroup was read.
    if (syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) != 0)
        throw rt::Failure("the program to nest ended while it was being moved into its sandbox");
    // Room for a burst of events while the requester is busy (root may exceed wmem_max).
    const int room = kForwardBytes;
    setsockopt(n.reply, SOL_SOCKET, SO_SNDBUFFORCE, &room, sizeof room);
    n.ring = ring_buffer__new(n.events, forward, &n.reply, nullptr);
    if (n.ring == nullptr)
        rt::fail_errno("cannot read the nested sandbox's denial ring buffer");
    watch(n.reply);
    watch(ring_buffer__epoll_fd(n.ring));
}

void Broker::end(Nested& n)
{
    if (n.ring != nullptr)
        ring_buffer__consume(n.ring);
    // Its processes are killed (with those of sandboxes nested in it) and its policy lifted.
    if (n.cgroup && !rt::end_recorded_sandbox(n.record, false))
        std::fprintf(stderr, "bwrun: processes of nested sandbox %s survived SIGKILL; it stays confined\n",
                     n.record.name.c_str());
    if (n.ring != nullptr)
        ring_buffer__free(n.ring);
    n.ring = nullptr;
    if (n.events >= 0)
        close(n.events);
    n.events = -1;
    n.cgroup.reset();
    // The requester reads to this end, then reports and exits.
    if (n.reply >= 0)
        close(n.reply);
    n.reply = -1;
}

void Broker::end_all()
{
    // The latest first: a sandbox nested in another was opened after it.
    while (!nested_.empty()) {
        end(*nested_.back());
        nested_.pop_back();
    }
}

} // namespace bw::bwrun::nesting
