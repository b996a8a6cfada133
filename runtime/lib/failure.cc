#include "failure.h"

#include <cerrno>
#include <cstring>

namespace bw::rt {

void fail_errno(const std::string& what)
{
    fail_errno(what, errno);
}

void fail_errno(const std::string& what, int err)
{
    throw Failure(what + ": " + std::strerror(err));
}

} // namespace bw::rt
