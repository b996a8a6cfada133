// Ending a sandbox, by its bwrun, by its watchdog when bwrun was killed, or by whoever
// finds an orphan (a record whose supervisor is dead). The order is what keeps it fail
// closed: processes are killed first, and the policy is lifted only from an empty cgroup.
#pragma once

#include "cgroup.h"
#include "enforcer.h"
#include "registry.h"

#include <chrono>
#include <vector>
#include <string>

namespace bw::rt {

// How long processes get to die after cgroup.kill before we give up and leave them
// confined.
inline constexpr std::chrono::seconds kKillTimeout{10};

// How long a program stays attached after its last sandbox ended, so that the next
// sandbox skips loading it. Detaching is the slow part of a sandbox's life: each hook's
// link waits for an RCU-tasks grace period, so it happens after bwrun has returned.
inline constexpr std::chrono::seconds kLinger{10};

// Kills what runs in the cgroup and, once it is empty, removes the sandbox's entry, its
// cgroup and its record; the program stays (see unload_if_unused). Takes the StateLock
// for that unless the caller holds it. False (everything left in place, still enforced) when
// processes survive SIGKILL.
bool end_sandbox(Enforcer& enforcer, Cgroup& cgroup, const std::string& name, pid_t supervisor_pid,
                 bool lock_held);

// The same from what a sandbox's record holds, for one whose bwrun died and for a nested
// one: needs no handle of bwrun's. Its program may already be unpinned, its cgroup gone.
// The sandboxes nested in it end with it. Unloads its program if no sandbox is left there.
// Where the registry holds a newer copy of the record (a live edit moved the policy), that
// copy says which programs to lift it from.
bool end_recorded_sandbox(const SandboxRecord& record, bool lock_held);

// Unpins (and so detaches) the program pinned at pin_dir if no sandbox uses it and none
// ended in the last `linger`, under the StateLock. Nothing to do when it is already gone.
void unload_if_unused(const std::string& pin_dir, std::chrono::seconds linger);

// Ends every registered sandbox whose bwrun is dead. Call with the StateLock held.
// Returns the names of orphans that could not be ended.
std::vector<std::string> collect_orphans();

} // namespace bw::rt
