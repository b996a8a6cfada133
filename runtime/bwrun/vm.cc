#include "vm.h"

#include "failure.h"

#include <climits>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

namespace bw::bwrun {

namespace {

// The running binary, from the kernel rather than argv[0], which the caller chose.
std::string own_executable()
{
    char path[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0)
        bw::rt::fail_errno("cannot find bwrun's own executable (/proc/self/exe)");
    return std::string(path, static_cast<std::size_t>(n));
}

// In the build tree bwvm is at bin/../../scripts/bwvm; installed, under lib/bumblewrap.
std::string find_bwvm(const std::string& self)
{
    const std::string bin_dir = self.substr(0, self.rfind('/'));
    const std::vector<std::string> candidates = {bin_dir + "/../../scripts/bwvm", BW_INSTALL_LIBDIR "/bumblewrap/bwvm"};
    for (const auto& c : candidates) {
        if (access(c.c_str(), X_OK) == 0)
            return c;
    }
    throw bw::rt::Failure("--vm: cannot find the VM runner bwvm (looked for " + candidates[0] + " and " +
                          candidates[1] + "); install bumblewrap with it or run scripts/bwvm -- bwrun ... yourself");
}

} // namespace

void rerun_in_vm(const Options& o, int argc, char** argv, const sigset_t& original_mask)
{
    const std::string self = own_executable();
    const std::string bwvm = find_bwvm(self);
    std::vector<std::string> args = {bwvm, "--", self};
    for (int i = 1; i < argc; ++i) {
        if (i != o.vm_arg)
            args.emplace_back(argv[i]);
    }
    std::vector<char*> ptrs;
    for (auto& a : args)
        ptrs.push_back(a.data());
    ptrs.push_back(nullptr);
    std::fprintf(stderr, "bwrun: this kernel cannot enforce policies; running in the VM (%s)\n", bwvm.c_str());
    std::fflush(stderr);
    sigprocmask(SIG_SETMASK, &original_mask, nullptr);
    execv(bwvm.c_str(), ptrs.data());
    bw::rt::fail_errno("cannot run " + bwvm);
}

} // namespace bw::bwrun
