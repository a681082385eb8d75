// Plain value types shared by the Kafka clients: a partition's position
// (PartitionOffset), its low/high watermarks, and the logical offsets
// "beginning" and "end". No behaviour, no librdkafka types; copy freely.
#pragma once

#include <cstdint>
#include <string>

namespace tokenfeed::kafka {

// Logical start positions, resolved by the broker when a partition is
// assigned; the same numbers librdkafka uses.
inline constexpr int64_t kOffsetBeginning = -2;
inline constexpr int64_t kOffsetEnd = -1;
// The producer lets librdkafka's partitioner choose.
inline constexpr int32_t kAnyPartition = -1;

struct PartitionOffset {
  int32_t partition = 0;
  int64_t offset = kOffsetBeginning;  // the next record to read, or a logical offset
  friend bool operator==(const PartitionOffset&, const PartitionOffset&) = default;
};

struct TopicPartitionOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  friend bool operator==(const TopicPartitionOffset&, const TopicPartitionOffset&) = default;
};

// `low` is the first offset still stored, `high` the offset the next record
// will get (so a partition holds high - low records, fewer when compacted or
// when transaction markers occupy offsets).
struct Watermarks {
  int64_t low = 0;
  int64_t high = 0;
  friend bool operator==(const Watermarks&, const Watermarks&) = default;
};

}  // namespace tokenfeed::kafka
