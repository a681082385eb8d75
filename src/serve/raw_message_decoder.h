// RawMessageDecoder: the document text inside one raw Kafka message, as the
// streaming service (preprocess_service.h) reads it: a JSON object with the
// text at a field (or dotted path), or the whole message as plain text.
// Invalid UTF-8 is replaced with U+FFFD first (as the ingest's default
// --utf8 replace does). It does not clean or tokenize. Owns a JSON parser and
// a scratch buffer: one per thread; a result's text is valid until the next call.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "text/json_text_field.h"
#include "tokenfeed/drop_reason.h"
#include "tokenfeed/status.h"

namespace tokenfeed::serve {

// kAuto: a message whose first non-blank byte is '{' is JSON (and a reject
// when it does not parse), any other message is plain text.
enum class RawFormat { kAuto, kJson, kText };
Result<RawFormat> ParseRawFormat(std::string_view name);  // "auto", "json", "text"

struct DecodedMessage {
  bool ok = false;
  std::string_view text;       // when ok
  text::DropReason reason{};   // when not: kBadJson, kMissingField or kNotAString
  std::string message;         // when not: what is wrong
  bool repaired_utf8 = false;  // invalid UTF-8 was replaced
};

class RawMessageDecoder {
 public:
  RawMessageDecoder(RawFormat format, std::string_view json_field);

  DecodedMessage Decode(std::span<const std::byte> value);

 private:
  RawFormat format_;
  text::JsonTextField json_;
  std::string buffer_;  // repaired UTF-8 with simdjson's padding after it
};

}  // namespace tokenfeed::serve
