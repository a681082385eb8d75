// Fuzzes the decoder of raw Kafka messages that `tokenfeed serve` reads
// (serve::RawMessageDecoder) on arbitrary bytes, in each format and with a
// plain and a dotted JSON field: a message is decoded or rejected with a
// reason and a message, never crashes; decoded text is valid UTF-8 (invalid
// bytes were replaced) and in text format is the whole message when it was
// valid already. Aborts on a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

#include "serve/raw_message_decoder.h"
#include "simdjson.h"

namespace {

[[noreturn]] void Finding(const char* what) {
  std::fprintf(stderr, "raw_message_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sv = tokenfeed::serve;
  const std::span<const std::byte> value(reinterpret_cast<const std::byte*>(data), size);
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const bool valid_utf8 = simdjson::validate_utf8(bytes.data(), bytes.size());
  for (sv::RawFormat format : {sv::RawFormat::kAuto, sv::RawFormat::kJson, sv::RawFormat::kText}) {
    for (std::string_view field : {"text", "meta.body"}) {
      sv::RawMessageDecoder decoder(format, field);
      for (int twice = 0; twice < 2; ++twice) {  // the decoder's buffers are reused
        const sv::DecodedMessage m = decoder.Decode(value);
        if (!m.ok) {
          if (m.message.empty()) Finding("a rejected message without a reason");
          if (format == sv::RawFormat::kText) Finding("text format rejected a message");
          continue;
        }
        if (!simdjson::validate_utf8(m.text.data(), m.text.size())) Finding("decoded text is not valid UTF-8");
        if (m.repaired_utf8 == valid_utf8 && format == sv::RawFormat::kText) {
          Finding("repaired_utf8 does not say whether the message was invalid UTF-8");
        }
        if (format == sv::RawFormat::kText && valid_utf8 && m.text != bytes) Finding("text format changed valid text");
      }
    }
  }
  return 0;
}
