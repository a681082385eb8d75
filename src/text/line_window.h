// LineWindow: splits the uncompressed bytes of one file into LF-terminated
// lines inside one buffer that never grows past max_line_bytes + block_bytes
// (+ kPadding). A line longer than max_line_bytes is passed over by reading
// and discarding, so a 100 MB line costs no more memory than a short one.
// It knows nothing of JSON or documents. Lines are views into the buffer,
// valid until the next call to Next; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "text/byte_source.h"
#include "tokenfeed/status.h"

namespace tokenfeed::text {

struct Line {
  std::string_view text;           // bytes before the LF, one trailing CR removed; empty when too_long
  uint64_t offset = 0;             // uncompressed byte offset of the line's first byte
  uint64_t number = 0;             // 1-based line number
  uint64_t length = 0;             // bytes before the LF, CR included
  bool too_long = false;           // length > max_line_bytes: the bytes were skipped, text is empty
  bool ends_with_newline = false;  // false only for a last line without LF
  // The offset just past this line (and its LF): where the next line starts.
  uint64_t end_offset() const { return offset + length + (ends_with_newline ? 1 : 0); }
};

class LineWindow {
 public:
  // Bytes after the end of any line or span that may be read (not written):
  // what simdjson needs to parse a line where it lies.
  static constexpr size_t kPadding = 64;

  // `source` must outlive the window. block_bytes is the usual read size.
  LineWindow(ByteSource* source, size_t max_line_bytes, size_t block_bytes);

  // Starts at a line boundary recorded earlier (resume): `offset` must be 0 or
  // just past an LF (or just past a leading BOM) and `line_number` the number
  // of the line there. Call at most once, before the first Next. Plain files
  // seek; compressed ones are read up to `offset`, and their LFs are counted
  // to check line_number. Corruption when the file no longer matches.
  Status StartAt(uint64_t offset, uint64_t line_number);

  // The next line; false at the end of a complete stream. A UTF-8 byte order
  // mark at offset 0 is not part of line 1 (line 1 then starts at offset 3).
  Result<bool> Next(Line* line);

  // Keeps every byte from `offset` on in the window, so that Span can view
  // several lines as one piece (a paragraph, a whole file). `offset` is the
  // start of the line Next just returned. When the pinned bytes would pass
  // max_line_bytes the pin is dropped and pin_lost() turns true.
  void Pin(uint64_t offset);
  void Unpin();
  bool pinned() const { return pin_ != kNoPin; }
  bool pin_lost() const { return pin_lost_; }
  // The bytes [begin, end) of the stream; begin at or after the pin, end at
  // or before the end of the last line returned. Valid until the next Next.
  std::string_view Span(uint64_t begin, uint64_t end) const;

  // Memory held by the buffer now, for callers that check the bound.
  size_t allocated_bytes() const { return allocated_ + kPadding; }
  size_t max_allocation() const { return capacity_limit_ + kPadding; }

 private:
  static constexpr size_t kNoPin = static_cast<size_t>(-1);

  Status Fill();
  Status Reserve(size_t bytes);
  Status StripByteOrderMark();

  ByteSource* source_;
  size_t max_line_;
  size_t block_;
  size_t capacity_limit_;  // max_line_ + block_
  std::unique_ptr<char[]> buffer_;
  size_t allocated_ = 0;

  uint64_t base_ = 0;       // stream offset of buffer_[0]
  size_t line_start_ = 0;   // index where the next line begins
  size_t scan_ = 0;         // index from which to look for the next LF
  size_t end_ = 0;          // index just past the valid bytes
  uint64_t line_number_ = 1;
  bool eof_ = false;
  bool started_ = false;

  size_t pin_ = kNoPin;
  bool pin_lost_ = false;

  bool skipping_ = false;       // inside a too-long line
  uint64_t skip_offset_ = 0;    // where that line began
};

}  // namespace tokenfeed::text
