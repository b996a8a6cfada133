// The machine-wide enforcement program: loaded and attached once, pinned under bpffs,
// shared by every sandbox of the same program build. Each sandbox adds its tables,
// keyed by its cgroup id, and removes them when it ends; the last one out unpins all.
#pragma once

#include "artifact/artifact.h"
#include "failure.h"

#include <cstdint>
#include <string>

namespace bw::rt {

// An exclusive lock over the shared state (/run/bumblewrap/lock), held while loading,
// registering, unregistering and unloading.
class StateLock {
public:
    StateLock();
    ~StateLock();
    StateLock(const StateLock&) = delete;
    StateLock& operator=(const StateLock&) = delete;

private:
    int fd_ = -1;
};

// This kernel cannot run the BPF LSM (not active, or loading LSM programs is refused):
// bwrun --vm then runs the sandbox in the VM runner instead.
class CannotEnforce : public Failure {
public:
    using Failure::Failure;
};

class Enforcer {
public:
    // Opens the pinned program for this artifact's build, loading and attaching it first
    // if no sandbox runs it yet. Call with the StateLock held.
    static Enforcer open(const artifact::Artifact& artifact);
    // The pinned program of a sandbox whose bwrun died, to lift its policy once its
    // cgroup is empty. Call with the StateLock held.
    static Enforcer reopen(const std::string& pin_dir);
    // The generic program that holds the policies of nested sandboxes `depth` levels deep
    // (1: inside a top-level sandbox), loading and attaching it first if none runs. A
    // nested sandbox's cgroup is decided by its own policy there and, through aliases, by
    // each enclosing sandbox's in theirs: every program must allow an access. Call with the
    // StateLock held; `min_kernel` names what the policy needs when the kernel refuses.
    static Enforcer open_nested(int depth, const std::string& min_kernel);
    Enforcer(Enforcer&&) noexcept;
    Enforcer& operator=(Enforcer&&) = delete;
    ~Enforcer();

    // Puts a sandbox's tables in place; the sandbox entry goes in last, so the program
    // never sees half a policy. Returns the fd of the sandbox's denial ring buffer.
    int install(std::uint64_t cgroup_id, const MapTables& tables);
    void uninstall(std::uint64_t cgroup_id);
    // Decides cgroup `alias` (a nested sandbox's) as this program decides the sandbox
    // `existing`, denials going to that sandbox's ring buffer; uninstall(alias) ends it.
    void install_alias(std::uint64_t alias, std::uint64_t existing);
    // Unpins (and so detaches) everything when no sandbox is left. Call with the lock held.
    void unload_if_unused();

    const std::string& pin_dir() const { return pin_dir_; }

private:
    // The map backend's outer maps of per-sandbox tables; -1 for a specialised program.
    struct SandboxTables {
        int trans = -1;
        int accepts = -1;
        int links = -1;
    };

    Enforcer(std::string pin_dir, int sandboxes, SandboxTables tables, int events);

    std::string pin_dir_;
    int sandboxes_ = -1;
    SandboxTables tables_;
    int events_ = -1;
};

} // namespace bw::rt
