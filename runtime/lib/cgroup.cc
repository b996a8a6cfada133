#include "cgroup.h"

#include "failure.h"
#include "paths.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace bw::rt {

std::string find_cgroup2_mount()
{
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        // "... mount-point options ... - fstype source super-options"
        const auto dash = line.find(" - ");
        if (dash == std::string::npos)
            continue;
        std::istringstream tail(line.substr(dash + 3));
        std::string fstype;
        tail >> fstype;
        if (fstype != "cgroup2")
            continue;
        std::istringstream head(line.substr(0, dash));
        std::string id, parent, devno, root, mount_point;
        head >> id >> parent >> devno >> root >> mount_point;
        return mount_point;
    }
    throw Failure("no cgroup2 filesystem is mounted; mount one (mount -t cgroup2 none /sys/fs/cgroup) "
                  "or run inside scripts/bwvm");
}

Cgroup Cgroup::create(const std::string& name)
{
    const std::string parent = find_cgroup2_mount() + "/" + kCgroupParent;
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST)
        fail_errno("cannot create cgroup " + parent);
    return make(parent + "/" + name, name, false);
}

Cgroup Cgroup::create_in(const std::string& parent, const std::string& name)
{
    return make(parent + "/" + name, name, true);
}

Cgroup Cgroup::make(const std::string& path, const std::string& name, bool nested)
{
    if (mkdir(path.c_str(), 0755) != 0) {
        if (errno == EEXIST)
            throw Failure("cgroup " + path + " already exists: a sandbox named `" + name +
                          "` is running or was not cleaned up (bwctl list shows it)");
        fail_errno("cannot create cgroup " + path);
    }
    const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st{};
    if (fd < 0 || fstat(fd, &st) != 0) {
        const int err = errno;
        rmdir(path.c_str());
        fail_errno("cannot open cgroup " + path, err);
    }
    // On cgroup2 the directory's inode number is the cgroup id.
    return Cgroup(path, fd, static_cast<std::uint64_t>(st.st_ino), nested);
}

std::optional<Cgroup> Cgroup::open_existing(const std::string& path, std::uint64_t id, bool nested)
{
    const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st{};
    if (fd < 0 || fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_ino) != id) {
        if (fd >= 0)
            close(fd);
        return std::nullopt;
    }
    return Cgroup(path, fd, id, nested);
}

Cgroup::Cgroup(Cgroup&& o) noexcept
    : path_(std::move(o.path_)), fd_(o.fd_), id_(o.id_), nested_(o.nested_), removed_(o.removed_)
{
    o.fd_ = -1;
    o.removed_ = true;
}

Cgroup::~Cgroup()
{
    if (fd_ >= 0)
        close(fd_);
    remove();
}

bool Cgroup::populated() const
{
    std::ifstream in(path_ + "/cgroup.events");
    std::string key, value;
    while (in >> key >> value) {
        if (key == "populated")
            return value != "0";
    }
    return false;
}

bool Cgroup::kill_all(std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool have_kill_file = true;
    while (populated()) {
        // cgroup.kill (5.14+) kills atomically, even processes forking meanwhile.
        if (have_kill_file) {
            std::ofstream kill_file(path_ + "/cgroup.kill");
            have_kill_file = static_cast<bool>(kill_file << "1" << std::flush);
        }
        if (!have_kill_file) {
            std::ifstream procs(path_ + "/cgroup.procs");
            pid_t pid = 0;
            while (procs >> pid)
                ::kill(pid, SIGKILL);
        }
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

bool Cgroup::remove()
{
    if (removed_)
        return true;
    // Another sandbox may have taken the name since (our supervisor died): never remove it.
    struct stat st{};
    const bool ours = stat(path_.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_ino) == id_;
    if (ours && rmdir(path_.c_str()) != 0 && errno != ENOENT)
        return false;
    removed_ = true;
    // The shared parent goes with the last sandbox; it stays while others use it. A nested
    // sandbox's parent is its enclosing sandbox's cgroup, which that sandbox removes.
    if (!nested_)
        rmdir(path_.substr(0, path_.rfind('/')).c_str());
    return true;
}

} // namespace bw::rt
