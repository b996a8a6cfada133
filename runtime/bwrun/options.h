// bwrun's command line: parsed strictly, every mistake named, exit status 2.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace bw::bwrun {

// bwrun's own failures, distinct from the program's statuses (as env(1) and timeout(1)).
inline constexpr int kExitFailure = 125;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCannotExec = 126;
inline constexpr int kExitNotFound = 127;

// One of --setenv, --unsetenv, --clearenv, applied in command-line order.
struct EnvRule {
    enum class Kind { Set, Unset, Clear } kind;
    std::string name;
    std::string value;
};

struct Options {
    std::string artifact;
    std::string name;
    bool quiet = false;
    std::optional<std::string> user; // --user NAME|UID
    std::optional<unsigned> uid;
    std::optional<unsigned> gid;
    std::string cwd;
    std::vector<EnvRule> env;
    std::string audit;
    std::string learn;   // --learn: where the learned policy goes (no artifact then)
    bool nesting = true; // the program gets the nesting broker's socket
    bool vm = false;
    int vm_arg = 0;            // argv index of --vm, which the re-run in the VM leaves out
    std::vector<char*> command; // null-terminated; only the null when no PROGRAM was given
};

void usage(std::FILE* out);

// nullopt when bwrun should exit with `exit_code` (after --help, --version or an error).
std::optional<Options> parse_args(int argc, char** argv, int& exit_code);

} // namespace bw::bwrun
