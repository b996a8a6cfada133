// bwrun --learn: runs the program with everything allowed and every access recorded (the
// recording policy's audit rule), then has bwc write the policy of what it did.
#pragma once

#include "artifact/artifact.h"
#include "bumblewrap.h"
#include "learn/learn.h"

#include <string>

namespace bw::bwrun {

// The generic program with the recording policy (compiler/learn).
artifact::Artifact learn_artifact();

class Recorder {
public:
    // An event of the sandbox: audit records are recorded (and go no further).
    bool record(const bw_event& event);
    learn::Recording& recording() { return recording_; }

private:
    learn::Recording recording_;
};

// Writes the recording to a temporary file and runs `bwc learn` (beside this bwrun) on it,
// writing `out`. Returns bwc's exit status.
int write_learned_policy(const learn::Recording& recording, const std::string& out, const std::string& name);

} // namespace bw::bwrun
