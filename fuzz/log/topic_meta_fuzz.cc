// Fuzzes the topic.meta parser (log/topic_metadata.h) on arbitrary text: it
// must return a value or an error, never crash or read outside the input, and
// what it accepts must survive a round trip (encode, parse again, same
// fields). Fuzzers rarely forge a CRC32C, so each input is also tried with its
// checksum line recomputed, to reach the value checks behind it. Aborts on a
// finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/crc32c.h"
#include "log/topic_metadata.h"

namespace {

void CheckOne(std::string_view text) {
  namespace lg = tokenfeed::log;
  auto parsed = lg::ParseTopicMetadata(text, "fuzz/topic.meta");
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) {
      std::fprintf(stderr, "topic_meta_fuzz: an error without a message\n");
      std::abort();
    }
    return;
  }
  const lg::TopicMetadata& m = *parsed;
  auto again = lg::ParseTopicMetadata(lg::EncodeTopicMetadata(m), "fuzz/topic.meta");
  if (!again.ok() || again->format_version != m.format_version || again->partitions != m.partitions ||
      again->segment_bytes != m.segment_bytes || again->index_interval_bytes != m.index_interval_bytes ||
      again->created_unix_ms != m.created_unix_ms || again->created_by != m.created_by) {
    std::fprintf(stderr, "topic_meta_fuzz: an accepted topic.meta does not survive encode and parse: %s\n",
                 again.ok() ? "fields differ" : again.status().ToString().c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckOne(text);
  // The same body with a correct checksum line in place of whatever follows
  // the last "crc32c=" (or appended when there is none).
  const size_t at = text.rfind("crc32c=");
  const std::string body(text.substr(0, at == std::string_view::npos ? text.size() : at));
  char line[32];
  std::snprintf(line, sizeof(line), "crc32c=%08x\n", tokenfeed::crc32c::Value(body));
  CheckOne(body + line);
  return 0;
}
