// Utf8Policy: what the document stage, the tokenizer and the readers do with
// bytes that are not valid UTF-8, and its one parser for the spellings the
// command line and Python take. A plain value type.
#pragma once

#include <cstdint>
#include <string_view>

#include "tokenfeed/status.h"

namespace tokenfeed {

enum class Utf8Policy : uint8_t {
  kReplace,  // each maximal invalid subpart becomes U+FFFD (Python's errors="replace")
  kReject,   // the text is refused (a reader rejects the document as invalid_utf8), naming the first bad byte
};

// "replace" or "reject"; InvalidArgument naming the spelling and the choices otherwise.
Result<Utf8Policy> ParseUtf8Policy(std::string_view name);

}  // namespace tokenfeed
