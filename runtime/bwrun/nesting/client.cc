#include "client.h"

#include "protocol.h"

#include "failure.h"
#include "paths.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <linux/sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bw::bwrun::nesting {

int broker_socket(const std::vector<std::string>& env)
{
    const std::string prefix = std::string(kBrokerEnv) + "=";
    const auto entry =
        std::find_if(env.begin(), env.end(), [&](const std::string& e) { return e.starts_with(prefix); });
    if (entry == env.end())
        return -1;
    const char* value = entry->c_str() + prefix.size();
    char* end = nullptr;
    const long fd = std::strtol(value, &end, 10);
    int type = 0;
    socklen_t len = sizeof type;
    if (*value == '\0' || *end != '\0' || fd < 0 || fd > 65535 ||
        getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET)
        throw rt::Failure(fmt::format("{}={} names no nesting broker's socket: bwrun inside a sandbox needs the one "
                                      "its sandbox's bwrun gave it (a program that closes inherited descriptors "
                                      "loses it)",
                                      kBrokerEnv, value));
    return static_cast<int>(fd);
}

void set_broker_env(std::vector<std::string>& env, int fd)
{
    const std::string prefix = std::string(kBrokerEnv) + "=";
    std::erase_if(env, [&](const std::string& e) { return e.starts_with(prefix); });
    env.push_back(prefix + std::to_string(fd));
}

std::optional<std::string> enclosing_sandbox()
{
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    const std::string marker = std::string("/") + rt::kCgroupParent + "/";
    while (std::getline(in, line)) {
        const auto at = line.find(marker);
        if (line.starts_with("0::") && at != std::string::npos) {
            const auto name = line.substr(at + marker.size());
            return name.substr(0, name.find('/'));
        }
    }
    return std::nullopt;
}

NestedStart::NestedStart(const Launch& launch, const sigset_t& old_mask)
{
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0)
        rt::fail_errno("cannot create a pipe for the nested program");
    clone_args args{};
    args.flags = CLONE_PIDFD;
    args.pidfd = reinterpret_cast<std::uintptr_t>(&pidfd_);
    args.exit_signal = SIGCHLD;
    const long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0) {
        const int err = errno;
        close(go[0]);
        close(go[1]);
        rt::fail_errno("cannot start the nested program", err);
    }
    if (pid == 0) {
        close(go[1]);
        char byte = 0;
        // EOF: bwrun failed before the program was in its sandbox.
        if (read(go[0], &byte, 1) != 1)
            _exit(kExitFailure);
        close(go[0]);
        exec_program(launch, old_mask);
    }
    close(go[0]);
    pid_ = static_cast<pid_t>(pid);
    go_ = go[1];
}

NestedStart::~NestedStart()
{
    if (go_ >= 0) {
        close(go_);
        siginfo_t info{};
        waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED);
    }
    close(pidfd_);
}

void NestedStart::release()
{
    const char byte = 1;
    if (write(go_, &byte, 1) != 1)
        rt::fail_errno("cannot start the nested program");
    close(go_);
    go_ = -1;
}

Granted request(int broker, const std::string& name, const std::string& artifact_path, const NestedStart& child)
{
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        rt::fail_errno("cannot create the nested sandbox's socket");
    Granted granted{pair[0], {}};
    const int artifact = open(artifact_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (artifact < 0) {
        const int err = errno;
        close(pair[0]);
        close(pair[1]);
        rt::fail_errno("cannot open " + artifact_path, err);
    }
    RequestMessage m;
    std::strncpy(m.request.name, name.c_str(), sizeof m.request.name - 1);
    std::strncpy(m.request.artifact, artifact_path.c_str(), sizeof m.request.artifact - 1);
    int fds[kRequestFds];
    fds[kReplyFd] = pair[1];
    fds[kArtifactFd] = artifact;
    fds[kPidFd] = child.pidfd();
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(c), fds, sizeof fds);
    const ssize_t sent = sendmsg(broker, &m.msg, MSG_NOSIGNAL);
    const int err = errno;
    close(pair[1]);
    close(artifact);
    NestReply reply{};
    if (sent != static_cast<ssize_t>(sizeof m.request) || recv(granted.socket, &reply, sizeof reply, 0) != sizeof reply) {
        close(granted.socket);
        if (sent < 0)
            rt::fail_errno("cannot reach the nesting broker (has the enclosing sandbox's bwrun ended?)", err);
        throw rt::Failure("the nesting broker ended without an answer");
    }
    reply.name[sizeof reply.name - 1] = '\0';
    reply.message[sizeof reply.message - 1] = '\0';
    if (reply.ok != 1) {
        close(granted.socket);
        throw rt::Failure(std::string("the enclosing sandbox's bwrun refused a nested sandbox: ") + reply.message);
    }
    granted.name = reply.name;
    return granted;
}

} // namespace bw::bwrun::nesting
