// bwrun's side of live edits. It learns each version of the policy that bwctl puts in
// force (the reporter names its rules and reports the change), ends timed grants when
// they expire, in its sandbox and in those nested in it (bwrun lives as long as they do,
// so no bwctl needs to), and reports events that the ring buffer had no room for.
#pragma once

#include "live_policy.h"
#include "supervise.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bw::bwrun {

class LiveWatch {
public:
    // Call once the sandbox's version 0 is written (rt::write_live_policy).
    LiveWatch(std::string name, DenialReporter& reporter);
    ~LiveWatch();
    LiveWatch(const LiveWatch&) = delete;
    LiveWatch& operator=(const LiveWatch&) = delete;

    // For supervise(): changes of the live policy file, and a tick a second.
    std::vector<EventSource> sources();
    // The count of dropped events, as of now.
    void check_dropped();

private:
    void on_change();
    void on_tick();
    // Learns what a sandbox's live policy file now holds.
    void reread(const std::string& name);
    void expire(const std::string& name, std::int64_t now);

    std::string name_;
    DenialReporter& reporter_;
    int inotify_ = -1;
    int timer_ = -1;
    // The sandboxes this bwrun supervises that have grants: when the first one ends.
    std::map<std::string, std::int64_t> expiries_;
};

} // namespace bw::bwrun
