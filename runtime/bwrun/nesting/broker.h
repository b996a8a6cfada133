// The broker side of nesting (protocol.h): run by the bwrun of an outermost sandbox, inside
// its supervision loop.
#pragma once

#include "cgroup.h"
#include "protocol.h"
#include "registry.h"

#include <bpf/libbpf.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bw::bwrun::nesting {

class Broker {
public:
    // `top` is the outermost sandbox's record, complete but for main_pid.
    explicit Broker(const rt::SandboxRecord& top);
    Broker(const Broker&) = delete;
    Broker& operator=(const Broker&) = delete;
    ~Broker();

    // The end the sandboxed program inherits (not close-on-exec); close it once it has.
    int child_end() const { return child_end_; }
    void close_child_end();
    // Readable when a request, a requester's end or a nested sandbox's event is waiting.
    int poll_fd() const { return epoll_; }
    // Serves whatever is waiting. Never throws: a refused request is answered with the reason.
    void service();
    // Ends every nested sandbox (bwrun's teardown, before the outermost sandbox ends).
    void end_all();

private:
    struct Nested {
        rt::SandboxRecord record;
        std::optional<rt::Cgroup> cgroup;
        int depth = 0;
        int reply = -1;
        int events = -1;
        ring_buffer* ring = nullptr;
    };

    void serve_request();
    void open_nested(Nested& n, int artifact_fd, int pidfd, const NestRequest& req);
    void end(Nested& n);
    void watch(int fd);

    rt::SandboxRecord top_;
    int socket_ = -1;
    int child_end_ = -1;
    int epoll_ = -1;
    std::vector<std::unique_ptr<Nested>> nested_;
};

} // namespace bw::bwrun::nesting
