// The sandbox's cgroup v2 directory: created before the program starts, killed and
// removed when it ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace bw::rt {

// The cgroup2 mount point (e.g. /sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid hosts).
std::string find_cgroup2_mount();

class Cgroup {
public:
    // Creates <cgroup2>/bumblewrap/<name>; fails if it exists.
    static Cgroup create(const std::string& name);
    // Creates a nested sandbox's cgroup, <parent>/<name>, inside its enclosing sandbox's.
    static Cgroup create_in(const std::string& parent, const std::string& name);
    // The cgroup of a sandbox whose bwrun died; nullopt when it is gone or is no longer
    // the cgroup with this id (a new sandbox took the name).
    static std::optional<Cgroup> open_existing(const std::string& path, std::uint64_t id, bool nested);
    Cgroup(Cgroup&&) noexcept;
    Cgroup& operator=(Cgroup&&) = delete;
    ~Cgroup();

    const std::string& path() const { return path_; }
    int fd() const { return fd_; } // for clone3(CLONE_INTO_CGROUP)
    std::uint64_t id() const { return id_; } // what bpf_get_current_cgroup_id() returns inside

    // Kills every process left inside and waits until the cgroup is empty; false if
    // processes remain after `timeout`.
    bool kill_all(std::chrono::milliseconds timeout);
    // Removes the directory, if it is still this cgroup; false while processes remain.
    bool remove();

private:
    Cgroup(std::string path, int fd, std::uint64_t id, bool nested)
        : path_(std::move(path)), fd_(fd), id_(id), nested_(nested)
    {
    }
    static Cgroup make(const std::string& path, const std::string& name, bool nested);
    bool populated() const;

    std::string path_;
    int fd_ = -1;
    std::uint64_t id_ = 0;
    bool nested_ = false;
    bool removed_ = false;
};

} // namespace bw::rt
