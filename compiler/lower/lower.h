// Lowers a checked policy to the IR: every rule table sorted by meaning (never by source
// order), duplicates merged (the first written keeps the provenance, a repeat is reported),
// and rules numbered.
#pragma once

#include "check/check.h"
#include "ir/ir.h"

namespace bw {

ir::Policy run_lower(CheckedPolicy checked, Diagnostics& diags);

} // namespace bw
