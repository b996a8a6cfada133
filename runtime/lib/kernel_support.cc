#include "kernel_support.h"

#include <fstream>

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

} // namespace bw::rt
