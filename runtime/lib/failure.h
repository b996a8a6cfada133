// Runtime failures: each names what failed and what to do. Thrown inside the runtime
// library and printed by the tools' main() as one line, never as a trace.
#pragma once

#include <stdexcept>
#include <string>

namespace bw::rt {

class Failure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// "what: strerror(errno)"
[[noreturn]] void fail_errno(const std::string& what);
[[noreturn]] void fail_errno(const std::string& what, int err);

} // namespace bw::rt
