// bwrun --vm: on a kernel that cannot enforce policies, the same command runs again inside
// the VM runner (scripts/bwvm), which boots a kernel that can and returns its status.
#pragma once

#include "options.h"

#include <csignal>

namespace bw::bwrun {

// Replaces bwrun with `bwvm -- BWRUN ARGS...` (without --vm). Throws rt::Failure when bwvm
// is not found.
[[noreturn]] void rerun_in_vm(const Options& options, int argc, char** argv, const sigset_t& original_mask);

} // namespace bw::bwrun
