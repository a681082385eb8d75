// RecoverPartition: what a writer runs, holding the partition lock, before
// its first append. It reads the last segment once, checking every batch,
// and judges what ends its valid data by the recovery point
// (recovery_point.h; docs/log_format.md "Torn tail or damage"): a torn tail
// (bytes after the last sync) is cut off and the cut synced; damage (bytes
// that had been synced) is refused with Corruption, or, when the caller asks
// to discard it, copied to "<segment>.damaged-<position>" and then cut. It
// also removes a segment file that a crash left without a durable header
// while starting it, checks that the last segment continues the one before
// it, and rebuilds missing or damaged index files of sealed segments.
// It does not read sealed segments beyond the previous segment's tail:
// readers find damage there when they reach it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/file_system.h"
#include "log/partition_layout.h"
#include "log/segment_index.h"
#include "tokenfeed/ids.h"
#include "log/log.h"
#include "tokenfeed/status.h"

namespace tokenfeed::log {

struct BatchLocation {
  Offset segment_base;
  uint64_t position;
};

struct RecoveredPartition {
  std::vector<Offset> segments;
  Offset active_base;     // the last segment, where appends go
  uint64_t active_size = 0;  // its size after any cut
  Offset end_offset;
  std::vector<IndexEntry> active_index;  // rebuilt from the scan; not yet on disk
  uint64_t last_indexed_position = 0;
  std::optional<BatchLocation> last_batch;
  RecoveryReport report;
};

Result<RecoveredPartition> RecoverPartition(FileSystem* fs, const PartitionLayout& layout,
                                            uint32_t index_interval_bytes, bool discard_after_damage);

}  // namespace tokenfeed::log
