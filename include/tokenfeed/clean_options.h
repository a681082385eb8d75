// CleanOptions: the cleaning rules the ingest applies to each document
// (control characters, line endings, trimming, length limits). Only the
// settings; the rules themselves are text::Cleaner (src/text/cleaner.h). A
// plain value type.
#pragma once

#include <cstdint>

namespace tokenfeed::text {

struct CleanOptions {
  // Drop C0 controls except TAB, LF and CR (so NUL, VT and FF go), DEL, and
  // the C1 controls U+0080..U+009F except U+0085 NEXT LINE, which Unicode
  // counts as a line separator and is kept, like U+2028 and U+2029.
  bool drop_controls = true;
  // CRLF and a lone CR become LF.
  bool normalize_newlines = true;
  // Remove Unicode White_Space (ASCII spaces and line breaks, NBSP, U+2000..
  // U+200A, U+3000, ...) at both ends.
  bool trim = true;
  // Limits on the cleaned text; 0 means none. Characters are code points.
  uint64_t min_chars = 0;
  uint64_t max_chars = 0;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
};

}  // namespace tokenfeed::text
