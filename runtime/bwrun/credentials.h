// Whose credentials the program runs with, decided before the sandbox starts and put in
// place in the child, between its placement in the cgroup and exec.
#pragma once

#include "options.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace bw::bwrun {

struct Credentials {
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;
    std::string shell; // from the passwd entry, for a run without PROGRAM
};

// What the user's options ask for, with the defaults: bwrun's own credentials, the
// invoking user's under sudo, and always the caller's when bwrun runs setuid (where asking
// for anyone else is refused). Throws rt::Failure for unknown users and refusals.
Credentials decide_credentials(const Options& options, bool setuid_mode);

// In the child: sets groups, gids and uids, and checks that they took (and that root cannot
// be regained). Returns what failed, or nullptr. Allocates nothing, as fits a child
// cloned from a process that may hold locks.
const char* drop_to(const Credentials& credentials);

} // namespace bw::bwrun
