// The machine-wide enforcement program: loaded and attached once, pinned under bpffs,
// shared by every sandbox of the same program build. Each sandbox adds its tables,
// keyed by its cgroup id, and removes them when it ends; the last one out unpins all.
#pragma once

#include "artifact/artifact.h"
#include "failure.h"

#include <array>
#include <cstdint>
#include <optional>
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

    // The generic program of top-level sandboxes, which every policy's live edits use,
    // loading and attaching it first if none runs. Call with the StateLock held.
    static Enforcer open_generic(const std::string& min_kernel);
    static std::string generic_pin_dir();

    // Puts a sandbox's tables in place; the sandbox entry goes in last, so the program
    // never sees half a policy. Returns the fd of the sandbox's denial ring buffer.
    int install(std::uint64_t cgroup_id, const MapTables& tables);
    void uninstall(std::uint64_t cgroup_id);

    // Whether each sandbox has tables of its own here (the generic program), so that its
    // policy can be replaced while it runs.
    bool replaceable() const { return tables_.net >= 0; }
    // The sandbox's entry: its policy's shape, tables key and version. nullopt when the
    // program holds no sandbox `cgroup_id`.
    std::optional<bw_sandbox> entry(std::uint64_t cgroup_id) const;
    // A new descriptor of the sandbox's denial ring buffer. Fails when it has none.
    int ring(std::uint64_t cgroup_id) const;
    // Replaces the policy of sandbox `cgroup_id`, and of the nested sandboxes it decides
    // through aliases, by `tables` as version `version`. The new tables go in under the
    // other tables key, then each entry is replaced whole, then the old tables go: every
    // access is decided by one version or the other. Call with the StateLock held.
    void replace(std::uint64_t cgroup_id, const MapTables& tables, std::uint32_t version);
    // Takes over sandbox `cgroup_id` from a specialised program that decides it by `from`
    // (its entry there) with ring buffer `ring`: the same policy, given as `tables`, so that
    // until the other program lets it go both decide alike.
    void adopt(std::uint64_t cgroup_id, const MapTables& tables, const bw_sandbox& from, int ring);
    // Decides cgroup `alias` (a nested sandbox's) as this program decides the sandbox
    // `existing`, denials going to that sandbox's ring buffer; uninstall(alias) ends it.
    void install_alias(std::uint64_t alias, std::uint64_t existing);
    // Unpins (and so detaches) everything when no sandbox is left. Call with the lock held.
    void unload_if_unused();

    const std::string& pin_dir() const { return pin_dir_; }
    // Events of the sandbox that its ring buffer had no room for.
    std::uint64_t dropped(std::uint64_t cgroup_id) const;

private:
    // The map backend's per-sandbox tables, keyed by tables key: the maps of arrays
    // (bw_trans, bw_accepts, bw_links, bw_net_rules, bw_devices) and bw_net; -1 for a
    // specialised program, whose tables are its own.
    struct SandboxTables {
        std::array<int, 5> outer{-1, -1, -1, -1, -1};
        int net = -1;
        int syscalls = -1;
    };
    static SandboxTables sandbox_tables(const std::string& pin_dir);

    Enforcer(std::string pin_dir, int sandboxes, SandboxTables tables, int events);

    // Puts the sandbox's entry, ring and (here) tables under their keys, entry last.
    void put_entry(std::uint64_t cgroup_id, const MapTables& tables, const bw_sandbox& sandbox, int ring);
    // The per-sandbox tables under one tables key (the map backend's). With `reuse`, the
    // slot's arrays that are big enough are refilled in place, and new ones get room to
    // grow; else it is a new slot.
    void put_tables(std::uint64_t key, const MapTables& tables, bool reuse);
    void drop_tables(std::uint64_t key);
    // Where a slot's array is pinned.
    std::string slot_pin(std::uint64_t key, const char* table) const;
    // Returns once no hook still runs on what it read before the call: a map-in-map update
    // waits for an RCU grace period (every program here is non-sleepable).
    void grace_period();

    std::string pin_dir_;
    int sandboxes_ = -1;
    SandboxTables tables_;
    int events_ = -1;
};

} // namespace bw::rt
