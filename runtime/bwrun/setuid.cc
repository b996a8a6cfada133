#include "setuid.h"

#include "failure.h"

#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

extern char** environ;

namespace bw::bwrun {

bool setuid_mode()
{
    return geteuid() == 0 && getuid() != 0;
}

std::vector<std::string> take_environment(bool setuid)
{
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e)
        env.emplace_back(*e);
    if (setuid) {
        // Nothing of the caller's (LIBBPF_LOG, TMPDIR, locale, ...) steers privileged code.
        clearenv();
        setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
    }
    return env;
}

namespace {

std::string describe_owner(const struct stat& st)
{
    return fmt::format("owner uid {}, mode {:04o}", st.st_uid, st.st_mode & 07777);
}

bool root_only_writable(const struct stat& st)
{
    return st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

} // namespace

std::string open_trusted_artifact(const std::string& path)
{
    // access() checks with the real uid: the caller's.
    if (access(path.c_str(), R_OK) != 0)
        rt::fail_errno("cannot read " + path);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        rt::fail_errno("cannot open " + path);
    // From here on the file is this inode, whatever happens to the path.
    const std::string by_fd = fmt::format("/proc/self/fd/{}", fd);
    char real[PATH_MAX];
    if (realpath(by_fd.c_str(), real) == nullptr)
        rt::fail_errno("cannot resolve " + path);
    const std::string file = real;
    const std::string dir = file.substr(0, std::max<std::size_t>(1, file.rfind('/')));
    struct stat fst{}, dst{};
    if (fstat(fd, &fst) != 0 || stat(dir.c_str(), &dst) != 0)
        rt::fail_errno("cannot inspect " + file);
    const auto refuse = [&](const std::string& what, const struct stat& st) {
        throw rt::Failure(fmt::format("refusing {} ({}): bwrun runs setuid root and loads the policy into the "
                                      "kernel, so the artifact and its folder must be owned by root and not "
                                      "writable by group or others; ask an administrator to install it (e.g. "
                                      "under /usr/lib/bumblewrap/policies)",
                                      what, describe_owner(st)));
    };
    if (!S_ISREG(fst.st_mode))
        throw rt::Failure(file + " is not a regular file");
    if (!root_only_writable(fst))
        refuse(file, fst);
    if (!root_only_writable(dst))
        refuse("folder " + dir, dst);
    return by_fd;
}

} // namespace bw::bwrun
