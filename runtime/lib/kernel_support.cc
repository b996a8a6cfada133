#include "kernel_support.h"

#include "artifact/features.h"

#include <fstream>
#include <sys/utsname.h>

namespace bw::rt {

std::optional<std::string> active_lsms()
{
    std::ifstream in("/sys/kernel/security/lsm");
    std::string lsms;
    if (!in || !std::getline(in, lsms))
        return std::nullopt;
    return lsms;
}

std::string bpf_lsm_missing_message(const std::optional<std::string>& lsms)
{
    const std::string fix = lsms ? "lsm=" + *lsms + ",bpf" : "lsm=...,bpf (the active list plus bpf)";
    return "this kernel does not run BPF LSM programs; add `" + fix +
           "` to the kernel command line and reboot, or run inside the VM runner: scripts/bwvm -- bwrun ...";
}

std::string running_kernel(const std::string& min_kernel)
{
    utsname u{};
    if (uname(&u) != 0)
        return "this kernel";
    std::string out = std::string("Linux ") + u.release;
    if (artifact::kernel_older(u.release, min_kernel))
        out += ", older than " + min_kernel + ", which the program needs";
    return out;
}

} // namespace bw::rt
