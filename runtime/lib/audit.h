// The audit trail (bwrun --audit FILE): every denial and every access an audit rule
// recorded, as one JSON object per line, for machines. Built from the same event fields
// that describe_denial renders for people.
#pragma once

#include "artifact/artifact.h"
#include "bumblewrap.h"

#include <cstdint>
#include <string>

namespace bw::rt {

// Who the denial belongs to: the same for every event of one sandbox.
struct AuditContext {
    std::string sandbox;
    const artifact::PolicyData* policy = nullptr;
};

// One line, without the newline: {"time":..., "sandbox":..., "policy":..., ...}.
// `unix_ns` is the time the event was read, in nanoseconds since the epoch.
std::string audit_json(const bw_event& event, const AuditContext& context, std::int64_t unix_ns);

} // namespace bw::rt
