// Nesting: bwrun run inside a sandbox cannot load programs or create cgroups (the sandbox
// invariants forbid both), so it asks the bwrun that supervises the outermost sandbox, the
// broker, over a socket every process of that sandbox inherits. The broker puts the nested
// policy in a program of its own and gives the nested cgroup the enclosing sandboxes'
// entries too: every access must pass both policies (the intersection).
//
// One request, a SOCK_SEQPACKET message, carries three descriptors: the socket the broker
// answers on, the artifact, and a pidfd of the program, which waits to be moved into the
// nested cgroup. The broker answers with one NestReply, then forwards the nested sandbox's
// events (each message a struct bw_event, as the ring buffer gave it). When the requester
// shuts down its end for writing, the broker ends the nested sandbox and closes the socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/socket.h>

namespace bw::bwrun::nesting {

// The broker socket's descriptor number, in the sandboxed program's environment.
inline constexpr const char* kBrokerEnv = "BWRUN_BROKER";
// Sandboxes inside sandboxes: at most this many levels below the outermost one, and this
// many nested sandboxes at once under one broker.
inline constexpr int kMaxDepth = 4;
inline constexpr std::size_t kMaxNested = 64;
// Descriptors of a request, in this order.
enum RequestFd { kReplyFd, kArtifactFd, kPidFd, kRequestFds };

struct NestRequest {
    char name[65];      // the nested sandbox's name; empty: the broker names it
    char artifact[256]; // the artifact's path as given, for bwctl list
};

// A request as sent and received: the NestRequest, with room for its descriptors.
struct RequestMessage {
    NestRequest request{};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kRequestFds)] = {};
    iovec iov{&request, sizeof request};
    msghdr msg{};

    RequestMessage()
    {
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
    }
    RequestMessage(const RequestMessage&) = delete;
    RequestMessage& operator=(const RequestMessage&) = delete;
};

struct NestReply {
    std::int32_t ok;    // 1: the program is in its nested sandbox
    char name[65];      // the sandbox's name
    char message[512];  // when not ok: why
};

} // namespace bw::bwrun::nesting
