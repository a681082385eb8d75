// Binary input: recognising a corpus file that is not text, so that it is
// refused before anything is read from it instead of becoming records. A file
// is refused only on clear evidence: a known binary format (its magic bytes,
// or with InputFormat::kAuto its extension), a UTF-16/32 byte-order mark, a
// NUL byte, or many control bytes in its first kBinaryCheckBytes after
// decompression. Invalid UTF-8 alone is not evidence (text in a legacy 8-bit
// encoding is text; the UTF-8 policy decides what becomes of it). It looks at
// the start of a file only, so binary bytes further in are not caught here.
// ClassifyInput is pure; CheckTextInputs reads files and keeps no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/document_reader.h"
#include "text/source_set.h"
#include "tokenfeed/status.h"

namespace tokenfeed::text {

// How much of each file (after decompression) is examined.
inline constexpr size_t kBinaryCheckBytes = 64 * 1024;

// What the start of a file shows, to ClassifyInput.
struct InputSample {
  std::string_view path;  // its extension is examined when check_name is set
  bool check_name = false;
  // The first bytes of the stream after decompression (up to
  // kBinaryCheckBytes; fewer when the file is shorter).
  std::string_view head;
  bool decompressed = false;  // the file was gzip or zstd
  // The file's last bytes when it is not compressed; nullopt when unknown.
  std::optional<std::string_view> tail;
};

// Why a file is not read as text.
struct NotText {
  std::string what;      // "a Parquet file", "a PNG image", "binary data", "UTF-16 text"
  std::string evidence;  // "PAR1 at the start and the end of the file", "a NUL byte at byte offset 517"
  std::string advice;    // what the user can do instead
  // Where the evidence is, in the uncompressed stream (0 for a name).
  uint64_t offset = 0;

  // "'PATH': WHAT (EVIDENCE); ADVICE", one line.
  std::string Message(std::string_view path) const;
};

// nullopt when the sample is text as far as its start shows.
std::optional<NotText> ClassifyInput(const InputSample& sample);

// Examines the start of every file of `sources` (the name too when `format`
// is kAuto). InvalidArgument naming each file that is not text, with its
// evidence, when any is; Unsupported naming the first Parquet or Arrow file
// when the Arrow plugin was built but does not load (TableTextColumn::Usable);
// OK otherwise. A file that cannot be opened or
// decompressed is left to the DocumentReader, which reports such problems
// with their position: only positive evidence of binary content refuses.
Status CheckTextInputs(const SourceSet& sources, InputFormat format);

// The same for one file: the reason it is not text, or nullopt.
std::optional<NotText> CheckTextInput(const std::string& path, bool check_name);

}  // namespace tokenfeed::text
