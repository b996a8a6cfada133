// bwrun installed setuid root and run by an ordinary user: the caller controls bwrun's
// environment, arguments and files, and bwrun loads code into the kernel. Everything the
// caller hands in is distrusted until checked.
#pragma once

#include <string>
#include <vector>

namespace bw::bwrun {

// Effective uid 0 from the setuid bit, real uid someone else's.
bool setuid_mode();

// Empties bwrun's own environment (PATH set to the system's) and returns the caller's, which
// only the program gets. Call first thing in main.
std::vector<std::string> take_environment(bool setuid_mode);

// The artifact is code for the kernel: refuses one the caller (or anyone but root) could
// have written, or that the caller cannot read. Returns a path to the checked file that no
// later rename can redirect (/proc/self/fd/N, kept open). Throws rt::Failure.
std::string open_trusted_artifact(const std::string& path);

} // namespace bw::bwrun
