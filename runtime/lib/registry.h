// The list of running sandboxes, one file each under /run/bumblewrap/sandboxes, written by
// bwrun and read by bwctl.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace bw::rt {

struct SandboxRecord {
    std::string name;
    std::string cgroup;        // cgroup directory
    std::uint64_t cgroup_id = 0;
    pid_t main_pid = 0;        // the program bwrun started
    pid_t supervisor_pid = 0;  // bwrun
    std::string policy;        // policy name
    std::string artifact;      // path of policy.o
    std::string pin_dir;       // the enforcer's pins, to lift the policy of an orphan
    std::int64_t started = 0;  // unix time
    // A nested sandbox (bwrun inside a sandbox): the enclosing sandbox's name, and the pin
    // folders of the enclosing sandboxes' programs, which decide its cgroup too.
    std::string parent;
    std::vector<std::string> aliases;
};

// Sandbox names become cgroup and file names: letters, digits, '.', '_', '-'; 1-64 bytes.
bool valid_sandbox_name(const std::string& name);
// The name of a sandbox that was not given one: the policy's name made valid (other
// characters become '-', cut to fit), then "-PID".
std::string default_sandbox_name(const std::string& policy_name, int pid);

// Fails if a live sandbox has the name. Call under StateLock.
void ensure_name_free(const std::string& name);
// Creates the record; fails if a live sandbox already has the name. Call under StateLock.
void register_sandbox(const SandboxRecord& record);
// Rewrites the record of a running sandbox (bwctl moved its policy). Call under StateLock.
void update_sandbox(const SandboxRecord& record);
// Removes the record, and the sandbox's live policy and log, if the record is still the one of
// this supervisor (after a supervisor died, a new sandbox may have taken the name).
void unregister_sandbox(const std::string& name, pid_t supervisor_pid);
// Where the sandbox's policy in force is kept (live_policy.h).
std::string live_policy_path(const std::string& name);
// Removes the sandbox's live policy and log (those of a sandbox that never registered).
void remove_sandbox_files(const std::string& name);
std::vector<SandboxRecord> list_sandboxes();
// The record of the sandbox named `name`, if there is one (an invalid name has none).
std::optional<SandboxRecord> find_sandbox(const std::string& name);
// Whether the supervising bwrun still runs.
bool supervisor_alive(const SandboxRecord& record);

} // namespace bw::rt
