// The audit trail (bwrun --audit FILE): every denial and every access an audit rule
// recorded, as one JSON object per line, for machines. Built from the same event fields
// that describe_denial renders for people.
#pragma once

#include "artifact/artifact.h"
#include "bumblewrap.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace bw::rt {

// Who the denial belongs to: the same for every event of one sandbox.
struct AuditContext {
    std::string sandbox;
    const artifact::PolicyData* policy = nullptr;
};

// One line, without the newline: {"time":..., "sandbox":..., "policy":..., ...}.
// `unix_ns` is the time the event was read, in nanoseconds since the epoch; `exe` the
// process's executable as /proc showed it then (left out when empty).
std::string audit_json(const bw_event& event, const AuditContext& context, std::int64_t unix_ns,
                       const std::string& exe);

// A JSON string literal of valid UTF-8 text (see printable).
std::string quote(std::string_view s);
// RFC 3339 in UTC with microseconds: sorts as text, parses everywhere.
std::string timestamp(std::int64_t unix_ns);
// Text that may not be UTF-8 (a comm, a file name) with its invalid bytes as '?'.
std::string printable(std::string_view s);

} // namespace bw::rt
