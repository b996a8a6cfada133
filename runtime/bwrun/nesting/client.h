// The requester side of nesting (protocol.h): bwrun run inside a sandbox.
#pragma once

#include "../spawn.h"

#include <csignal>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace bw::bwrun::nesting {

// The broker socket this process inherited, or -1 when `env` (bwrun's caller's) does not
// set BWRUN_BROKER. Throws rt::Failure when it is set but names no broker's socket.
int broker_socket(const std::vector<std::string>& env);

// `env` with BWRUN_BROKER naming `fd`, for the program: a bwrun it runs nests.
void set_broker_env(std::vector<std::string>& env, int fd);

// The name of the bumblewrap sandbox this process runs in, if it runs in one.
std::optional<std::string> enclosing_sandbox();

// The program, started as a child that waits, before exec, until it is in its nested
// sandbox: not one of its own instructions runs outside it.
class NestedStart {
public:
    NestedStart(const Launch& launch, const sigset_t& old_mask);
    NestedStart(const NestedStart&) = delete;
    NestedStart& operator=(const NestedStart&) = delete;
    // Without release(), the child exits unstarted and is reaped.
    ~NestedStart();

    pid_t pid() const { return pid_; }
    int pidfd() const { return pidfd_; }
    void release();

private:
    pid_t pid_ = -1;
    int pidfd_ = -1;
    int go_ = -1; // write end of the pipe the child waits on
};

struct Granted {
    int socket = -1;  // the broker's answers and the nested sandbox's events
    std::string name; // the nested sandbox's
};

// Asks the broker for a nested sandbox for `child` under the artifact at `artifact_path`.
// Throws rt::Failure with the broker's reason when it refuses.
Granted request(int broker, const std::string& name, const std::string& artifact_path, const NestedStart& child);

} // namespace bw::bwrun::nesting
