// The whole ir::Policy as bytes, so that an artifact carries the policy's meaning and
// `bwc query policy.o` answers from it exactly as from the .bwp.
#pragma once

#include "artifact/codec.h"
#include "ir/ir.h"

#include <span>
#include <variant>
#include <vector>

namespace bw::artifact {

std::vector<std::byte> encode_ir(const ir::Policy& policy);

// Refuses truncated input, trailing bytes, out-of-range enum values and access bits, and
// globs the evaluator could not match. Provenance::loc stays default: it pointed into
// sources that are gone.
std::variant<ir::Policy, Error> decode_ir(std::span<const std::byte> bytes);

} // namespace bw::artifact
