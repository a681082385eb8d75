// TopicMetadata: the small text file DIR/TOPIC/topic.meta that makes a
// directory a topic: format version, partition count, segment settings and
// who created it when, protected by a CRC32C line. Text, so that an operator
// can read it with cat; written once, atomically, when the topic is created.
// Only encoding and parsing live here; TopicDirectory does the I/O.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tokenfeed/status.h"

namespace tokenfeed::log {

struct TopicMetadata {
  uint32_t format_version = 0;
  uint32_t partitions = 0;
  uint64_t segment_bytes = 0;
  uint32_t index_interval_bytes = 0;
  int64_t created_unix_ms = 0;
  std::string created_by;  // one line, e.g. "pid 1234 on host h, tokenfeed 0.1.0"
};

std::string EncodeTopicMetadata(const TopicMetadata& m);
// `path` is for messages. Unsupported for a newer format_version (checked
// before the checksum, whose form a newer version may change); Corruption for
// a bad checksum, a missing or repeated key, an unknown key or a bad value.
Result<TopicMetadata> ParseTopicMetadata(std::string_view text, const std::string& path);

}  // namespace tokenfeed::log
