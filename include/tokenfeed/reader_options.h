// ReaderOptions: how corpus files are read into documents — their format
// (JSONL, text or Parquet, or by name), how text splits into documents, the JSON
// field, the UTF-8 policy and the size limits — with the parsers of the
// command-line spellings. Only the settings; the reader is
// text::DocumentReader (src/text/). A plain value type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tokenfeed/status.h"
#include "tokenfeed/utf8_policy.h"

namespace tokenfeed::text {

enum class InputFormat : uint8_t {
  kAuto,     // by extension after removing .gz/.zst: .jsonl and .json are JSONL, .parquet is Parquet,
             // .arrow and .feather Arrow IPC, anything else is text (the ingest refuses another binary
             // format's extension: docs/ingest.md)
  kJsonl,    // one JSON object per line, the text at ReaderOptions::json_field
  kText,     // plain text, split by ReaderOptions::text_mode
  kParquet,  // one document per row of a Parquet file, the text in the column ReaderOptions::json_field
             // (only in a build with Parquet support: text::TableTextColumn::Available)
  kArrow,    // one document per row of an Arrow IPC file (Feather v2), as for Parquet
};

enum class TextMode : uint8_t {
  kLine,       // each non-blank line is a document
  kParagraph,  // each run of non-blank lines (ended by a blank line or the end) is a document
  kFile,       // the whole file is one document
};

// Parse the command-line spellings: "auto"/"jsonl"/"text"/"parquet"/"arrow", "line"/"paragraph"/
// "file" (the UTF-8 policy: ParseUtf8Policy, tokenfeed/utf8_policy.h).
// InvalidArgument listing the choices otherwise.
Result<InputFormat> ParseInputFormat(std::string_view name);
Result<TextMode> ParseTextMode(std::string_view name);

struct ReaderOptions {
  InputFormat format = InputFormat::kAuto;
  TextMode text_mode = TextMode::kLine;
  // A key or a dotted path of keys; for Parquet and Arrow a column name (dots allowed)
  // or a dotted path into struct columns.
  std::string json_field = "text";
  Utf8Policy utf8 = Utf8Policy::kReplace;
  // The largest document, counted in raw bytes of the file (a JSONL line with
  // its escapes; a text line, paragraph or file with its line breaks). A
  // longer one is rejected as too_long and skipped without being held in
  // memory: the reader's buffer is at most this plus read_block_bytes.
  size_t max_document_bytes = 64u << 20;
  size_t read_block_bytes = 1u << 20;
};

}  // namespace tokenfeed::text
