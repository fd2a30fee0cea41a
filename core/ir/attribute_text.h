// Reading attribute values that the IR keeps verbatim (HloAttribute): the verifier, collective
// groups, the library-call lowering and passes interpret the same texts the same way.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/hlo_instruction.h"

namespace hloscope {

// The first position at or after `pos` that is not white space.
size_t skipAttributeSpaces(std::string_view text, size_t pos);
// End (exclusive) of the balanced {[( block starting at text[pos]; quoted strings are skipped.
size_t balancedBlockEnd(std::string_view text, size_t pos);

// `{k="v",k2={...}}` (frontend_attributes) as (key, unquoted value) pairs.
std::vector<std::pair<std::string, std::string>> parseKeyValueBlock(std::string_view text);
// The value of `key` in the instruction's frontend_attributes; nullopt when absent.
std::optional<std::string> frontendAttribute(const HloInstruction& instruction,
                                             std::string_view key);

// The contents of a quoted string ("..." or '...', unescaped); other text unchanged.
std::string unquoteAttributeString(std::string_view text);

}  // namespace hloscope
