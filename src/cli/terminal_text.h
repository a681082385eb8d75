// Text from a topic (decoded records, source paths, attributes) made safe to
// print on a terminal: control characters, which a terminal would obey
// (escape sequences that move the cursor, retitle the window or worse), are
// shown as escapes instead. It is not JSON escaping (--json output is JSON).
// Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>

namespace tokenfeed::cli {

// Appends `text` with every control character escaped: "\n", "\t", "\r",
// "\\", other C0 bytes and DEL as "\x1b", C1 characters (U+0080..U+009F) as
// "\u009b", and bytes that are not valid UTF-8 as "\xff". Everything else is
// copied as it is.
void AppendEscapedForTerminal(std::string_view text, std::string* out);

// The longest prefix of `text` of at most `max_bytes` that does not end
// inside a UTF-8 sequence.
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace tokenfeed::cli
