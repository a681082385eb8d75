// UTF-8 checks and repair shared by the text sources and the tokenizer.
// Repair follows the Unicode "maximal subpart" practice: each maximal
// invalid subsequence becomes one U+FFFD, which is what Python's
// bytes.decode("utf-8", errors="replace") and Rust's from_utf8_lossy produce.
// Pure functions: safe on any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tokenfeed {

// Byte offset of the first invalid UTF-8 sequence in `text`, or
// std::string_view::npos when the whole text is valid. Surrogates (U+D800..
// U+DFFF), overlong forms and code points above U+10FFFF are invalid.
size_t FindInvalidUtf8(std::string_view text);

inline bool IsValidUtf8(std::string_view text) { return FindInvalidUtf8(text) == std::string_view::npos; }

// Appends `text` to `out` with every maximal invalid subpart replaced by
// U+FFFD (EF BF BD). Returns the number of replacements made.
size_t AppendRepairedUtf8(std::string_view text, std::string* out);

// Appends the UTF-8 encoding of `cp` (which must be a scalar value).
void AppendUtf8(char32_t cp, std::string* out);

}  // namespace tokenfeed
