// Where the runtime keeps its state. All of it is root-only (0700).
#pragma once

namespace bw::rt {

inline constexpr const char* kStateDir = "/run/bumblewrap";
inline constexpr const char* kRegistryDir = "/run/bumblewrap/sandboxes";
inline constexpr const char* kLiveDir = "/run/bumblewrap/live"; // each sandbox's policy in force
inline constexpr const char* kLogDir = "/run/bumblewrap/log";   // each sandbox's events
inline constexpr const char* kLockFile = "/run/bumblewrap/lock";
inline constexpr const char* kPinRoot = "/sys/fs/bpf/bumblewrap";
inline constexpr const char* kCgroupParent = "bumblewrap"; // under the cgroup2 mount

} // namespace bw::rt
