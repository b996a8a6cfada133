// A running sandbox's policy in force, kept in /run/bumblewrap/live/NAME: the IR, its
// version and its timed grants. bwrun writes version 0 when the sandbox starts; bwctl's
// edits and reloads write the next ones, and bwrun reads them to name the rules of live
// edits in its reports and to end grants that expire.
#pragma once

#include "diagnostics/diagnostics.h"
#include "ir/ir.h"
#include "registry.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bw::rt {

// Rules that one `bwctl allow|deny --for DURATION` added, and when they go.
struct Grant {
    std::vector<ir::RuleId> rules;
    std::int64_t expires = 0; // unix time
};

struct LivePolicy {
    std::uint32_t version = 0;
    std::string source; // what the policy was compiled from: the artifact bwrun or `reload` read
    std::string sha256; // of its main source file
    std::string change; // what made this version, for the audit trail ("" for version 0)
    // Ids from here on are unused by every version so far, so that a report names the
    // rule of its own version.
    ir::RuleId next_rule = 0;
    ir::Policy policy;
    std::vector<Grant> grants;
};

// Atomically (a temporary file renamed over the old one).
void write_live_policy(const std::string& name, const LivePolicy& live);
// nullopt when the sandbox has none; a Failure when it cannot be read.
std::optional<LivePolicy> read_live_policy(const std::string& name);

// Puts `next` (its version one past `current`'s) in force in the running sandbox `record`:
// compiles its tables, replaces the policy in the sandbox's program, and writes the live
// file. A sandbox that a specialised program decides moves to the generic one first, with
// its current policy, so that one program decides it at every instant (its record is
// updated). False, with the diagnostics, when the policy does not compile. Call under the
// StateLock.
bool put_in_force(SandboxRecord& record, const LivePolicy& current, const LivePolicy& next, Diagnostics& diags);

// Removes the grants that expired by `now` and their rules; returns those rules' ids.
std::vector<ir::RuleId> expire_grants(LivePolicy& live, std::int64_t now);

} // namespace bw::rt
