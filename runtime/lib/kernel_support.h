// Whether this kernel can enforce bumblewrap policies, and what to tell the user if not.
#pragma once

#include <optional>
#include <string>

namespace bw::rt {

// The active LSMs from securityfs, when it is mounted.
std::optional<std::string> active_lsms();

// One line: what is missing, the fix, and the VM runner as the way round.
std::string bpf_lsm_missing_message(const std::optional<std::string>& lsms);

// "Linux 6.1.0-18-amd64" (uname's release), plus ", older than 5.17, which the program needs"
// when it is older than `min_kernel`.
std::string running_kernel(const std::string& min_kernel);

} // namespace bw::rt
