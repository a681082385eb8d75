// One record of the summary of a Kafka topic's token index (docs/kafka.md,
// "Token index"): for the offsets [first, end) of one partition of the data
// topic, how many records a read_committed reader sees, and how many token
// ids they hold, in each group of `group` offsets -- the groups being the
// slices of [first, end) cut at the multiples of `group` (absolute offsets,
// so that one group's offsets may lie in two summaries). A summary answers
// "records and ids before offset o" exactly where o is a multiple of
// `group` or a summary's first or end, and nowhere else; the per-record
// chunks (kafka_index_chunk.h) answer every offset. A loader's block
// boundaries are such offsets, so every rank reads the summary (about 1/20
// of the chunks' bytes) instead of the chunks.
// This file only encodes and checks the bytes; it never talks to Kafka
// (kafka_token_index.h reads and builds the index topics).
// Summary bytes come from a broker and are untrusted: ParseIndexSummary
// checks every field and every group entry before anything is taken from
// them.
// Thread-safety: plain functions and values.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "tokenfeed/status.h"
#include "topic/kafka_index_chunk.h"

namespace tokenfeed::topic {

// Layout (little-endian): "TFKS", version u8 = 1, three zero bytes, data
// partition u32, group u32, record count u32, count of groups listed u32,
// first offset u64, end offset u64, the records' token ids in all u64; then
// per group that holds a record, in offset order, three unsigned LEB128
// varints (shortest form): the groups passed over since the one listed
// before (or since the first group), the group's records (1 to the
// group's offsets), and its token ids. Group k (from 0) covers offsets
// [max(first, (first / group + k) * group), min(end, (first / group + k + 1) * group)).
inline constexpr size_t kIndexSummaryHeaderSize = 48;
// The group a build writes unless told otherwise (TokenIndexBuildOptions).
inline constexpr uint32_t kIndexSummaryGroup = 64;
// The largest group a summary may have.
inline constexpr uint32_t kMaxIndexSummaryGroup = uint32_t{1} << 20;

// One listed group: offsets [first, end) hold `records` records (at least
// one) holding `tokens` token ids.
struct IndexSummaryGroup {
  uint64_t first = 0;
  uint64_t end = 0;
  uint64_t records = 0;
  uint64_t tokens = 0;
};

// A parsed and checked summary. `body` views the bytes it was parsed from.
struct IndexSummaryView {
  uint32_t partition = 0;
  uint32_t group = 0;
  uint32_t records = 0;
  uint32_t groups = 0;  // groups listed (those holding a record)
  uint64_t first = 0;
  uint64_t end = 0;
  uint64_t tokens = 0;
  std::span<const uint8_t> body;
};

// The summary of the records `entries` (offsets in [first, end),
// increasing, at most kMaxIndexChunkRecords: the entries of one chunk),
// with groups of `group` offsets (1 to kMaxIndexSummaryGroup).
// InvalidArgument otherwise.
Result<std::string> EncodeIndexSummary(uint32_t partition, uint32_t group, uint64_t first, uint64_t end,
                                       std::span<const IndexChunkEntry> entries);

// Checks and parses a summary: magic, version, reserved bytes, the group (1
// to kMaxIndexSummaryGroup), first < end, the record count (at most
// kMaxIndexChunkRecords and end - first), the count of groups (at most the
// records), every entry's varints (at most 10 bytes, shortest form, no
// overflow), each group within [first, end) and after the one before, its
// records (1 to its offsets), the records' and ids' totals against the
// header, and no byte left over. Corruption for damaged bytes, Unsupported
// for a newer version; the message gives the reason and the byte position,
// the caller adds where the bytes came from.
Result<IndexSummaryView> ParseIndexSummary(std::span<const uint8_t> bytes);

// Walks the listed groups of a summary ParseIndexSummary accepted, in order.
class IndexSummaryWalker {
 public:
  explicit IndexSummaryWalker(const IndexSummaryView& summary);
  // The next listed group; false after the last.
  bool Next(IndexSummaryGroup* group);

 private:
  const uint8_t* at_;
  const uint8_t* end_;
  uint64_t first_;      // the summary's first offset
  uint64_t last_;       // its end offset
  uint64_t group_;      // offsets a group
  uint64_t next_slot_;  // the slot (from 0) the next entry's skip counts from
};

}  // namespace tokenfeed::topic
