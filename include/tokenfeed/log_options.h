// The embedded log's settings that callers of the topic API choose
// (tokenfeed/topic.h, WriterConfig): a new topic's shape, how a writer syncs
// and what it does with damage, how a reader buffers and checks. The log
// itself (its writers, readers and files) is internal to the log component.
// Plain value types.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tokenfeed::log {

struct TopicOptions {
  uint32_t partitions = 1;
  // A partition starts a new segment file when the next batch would grow
  // the current one beyond this (a larger batch gets a segment of its own).
  uint64_t segment_bytes = uint64_t{256} << 20;
  // One sparse-index entry per this many bytes of batches.
  uint32_t index_interval_bytes = 64 << 10;
};

enum class FsyncPolicy { kEachBatch, kInterval, kNone };

struct WriterOptions {
  FsyncPolicy fsync = FsyncPolicy::kEachBatch;
  uint32_t fsync_interval_ms = 1000;               // kInterval only
  uint64_t fsync_interval_bytes = uint64_t{64} << 20;  // kInterval only
  // When the last segment holds damage (a batch that fails its checks below
  // the point the writer had synced, or one followed by valid batches; see
  // docs/log_format.md) the writer refuses to open. Set this to open anyway:
  // the bytes from the damaged batch on are copied to a file beside the
  // segment ("<segment>.damaged-<position>", synced), then cut off, losing
  // every record from there on (the recovery report says where they are).
  bool discard_after_damage = false;
};

struct ReaderOptions {
  // The active (last) segment is read with pread into a buffer of this size,
  // grown to fit a larger batch; sealed segments are memory-mapped and read
  // in place, without a buffer.
  size_t buffer_bytes = size_t{8} << 20;
  // Checks each batch's CRC32C (the header checksum is always checked): a
  // batch of a sealed segment the first time this reader reads it, a batch
  // of the active segment at every read.
  bool verify_checksums = true;
};

}  // namespace tokenfeed::log
