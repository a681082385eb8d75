// One record of a Kafka topic's token index (docs/kafka.md, "Token index"):
// for the offsets [first, end) of one partition of the data topic, which of
// them hold a record a read_committed reader sees, and how many token ids
// each of those records holds. Offsets in the range with no record listed
// hold none to read (transaction markers, aborted or compacted records).
// This file only encodes and checks the bytes; it never talks to Kafka
// (kafka_token_index.h reads and builds the index topic).
// Chunk bytes come from a broker and are untrusted: ParseIndexChunk checks
// every field and every record entry before anything is taken from them.
// Thread-safety: plain functions and values.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed::topic {

// Layout (little-endian): "TFKX", version u8 = 1, three zero bytes, data
// partition u32, record count u32, first offset u64, end offset u64, the
// records' token ids in all u64, then per record two unsigned LEB128
// varints: the offsets skipped since the previous record (or since
// `first`), and the record's token ids.
inline constexpr size_t kIndexChunkHeaderSize = 40;
// The most records one chunk may list (a writer cuts chunks at 4096).
inline constexpr uint32_t kMaxIndexChunkRecords = uint32_t{1} << 16;

struct IndexChunkEntry {
  uint64_t offset = 0;
  uint64_t tokens = 0;
};

// A parsed and checked chunk. `body` views the bytes it was parsed from.
struct IndexChunkView {
  uint32_t partition = 0;
  uint32_t records = 0;
  uint64_t first = 0;
  uint64_t end = 0;
  uint64_t tokens = 0;
  std::span<const uint8_t> body;
};

// The bytes of a chunk. `entries` must lie in [first, end), increasing, at
// most kMaxIndexChunkRecords of them (the writer keeps to this; checked).
Result<std::string> EncodeIndexChunk(uint32_t partition, uint64_t first, uint64_t end,
                                     std::span<const IndexChunkEntry> entries);

// Checks and parses a chunk: magic, version, reserved bytes, first < end,
// the record count (at most kMaxIndexChunkRecords and at most end - first),
// every entry's varints (no more than 10 bytes, no overflow) and offset
// (within [first, end), increasing), the token total, and no byte left
// over. Corruption for damaged bytes, Unsupported for a newer version; the
// message gives the reason and the byte position, the caller adds where
// the bytes came from.
Result<IndexChunkView> ParseIndexChunk(std::span<const uint8_t> bytes);

// Walks the entries of a chunk ParseIndexChunk accepted, in order.
class IndexChunkWalker {
 public:
  explicit IndexChunkWalker(const IndexChunkView& chunk)
      : at_(chunk.body.data()), end_(chunk.body.data() + chunk.body.size()), next_offset_(chunk.first) {}
  // The next entry; false after the last.
  bool Next(IndexChunkEntry* entry);

 private:
  const uint8_t* at_;
  const uint8_t* end_;
  uint64_t next_offset_;
};

}  // namespace tokenfeed::topic
