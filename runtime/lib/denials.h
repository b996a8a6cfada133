// Renders denial events from the kernel for people: what, where, who, and which rule.
#pragma once

#include "artifact/artifact.h"
#include "bumblewrap.h"

#include <string>

namespace bw::rt {

std::string describe_denial(const bw_event& event, const artifact::PolicyData& policy);

} // namespace bw::rt
