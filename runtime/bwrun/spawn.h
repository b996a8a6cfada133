// Starting the program: directly inside the sandbox's cgroup (clone3 with
// CLONE_INTO_CGROUP: not one instruction runs unconfined), then, in the child, its
// credentials, working directory and environment, then exec.
#pragma once

#include "cgroup.h"
#include "credentials.h"
#include "options.h"

#include "artifact/artifact.h"

#include <csignal>
#include <linux/filter.h>
#include <string>
#include <sys/types.h>
#include <vector>

namespace bw::bwrun {

// Everything the child needs, prepared before the clone so that the child only makes
// system calls.
struct Launch {
    Credentials credentials;
    std::string cwd;                 // empty: bwrun's
    std::vector<std::string> env;    // NAME=VALUE
    std::vector<std::string> argv;   // PROGRAM and ARGS
    mode_t umask = 022;              // the caller's
    std::vector<sock_filter> seccomp; // the policy's filter for this architecture; empty: none
    // Whether the child sets its credentials: bwrun runs as root. A nested bwrun run by a
    // user leaves them, and sets no_new_privs for the filter instead.
    bool change_credentials = true;
};

// The artifact's seccomp filter for the architecture bwrun runs on; empty when the policy has no syscall rule.
// Fails when the policy has rules but no filter for this architecture.
std::vector<sock_filter> native_seccomp_filter(const artifact::PolicyData& policy);

// The program's environment: the caller's with the --setenv/--unsetenv/--clearenv rules applied in order.
std::vector<std::string> apply_env_rules(std::vector<std::string> env, const std::vector<EnvRule>& rules);

// PROGRAM and ARGS, or the user's shell: $SHELL of the program's environment, else the
// passwd entry's, else /bin/sh.
std::vector<std::string> program_argv(const Options& options, const Launch& launch);

// In the child, once it is in its sandbox: restores `old_mask`, installs the seccomp filter while it still has
// root's CAP_SYS_ADMIN (so without no_new_privs), drops to the program's credentials and execs.
[[noreturn]] void exec_program(const Launch& launch, const sigset_t& old_mask);

// Starts the program inside the cgroup (exec_program); returns the child's pid and sets `pidfd`.
pid_t spawn_in_cgroup(const rt::Cgroup& cgroup, const Launch& launch, const sigset_t& old_mask, int& pidfd);

} // namespace bw::bwrun
