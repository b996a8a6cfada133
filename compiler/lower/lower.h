// Lowers a checked policy to the IR: sorted, deduplicated, numbered, with provenance.
#pragma once

#include "check/check.h"
#include "ir/ir.h"

namespace bw {

ir::Policy run_lower(const CheckedPolicy& policy, const SourceManager& sources);

} // namespace bw
