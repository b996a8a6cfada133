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

// Installed, bwvm is under PREFIX/lib/bumblewrap, PREFIX being bwrun's own (a .deb installs
// to /usr whatever prefix the build was given), else the build's; in the build tree it is
// at bin/../../scripts/bwvm.
std::string find_bwvm(const std::string& self)
{
    const std::string bin_dir = self.substr(0, self.rfind('/'));
    const std::string prefix = bin_dir.substr(0, bin_dir.rfind('/'));
    const std::vector<std::string> candidates = {prefix + "/lib/bumblewrap/bwvm", bin_dir + "/../../scripts/bwvm",
                                                 BW_INSTALL_LIBDIR "/bumblewrap/bwvm"};
    std::string looked;
    for (const auto& c : candidates) {
        if (access(c.c_str(), X_OK) == 0)
            return c;
        looked += (looked.empty() ? "" : ", ") + c;
    }
    throw bw::rt::Failure("--vm: cannot find the VM runner bwvm (looked for " + looked +
                          "); install bumblewrap with it or run scripts/bwvm -- bwrun ... yourself");
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
