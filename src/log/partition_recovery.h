// RecoverPartition: what a writer runs, holding the partition lock, before
// its first append. It reads the last segment once, checking every batch;
// cuts off a torn tail (a batch cut short, or failing its checksum with
// nothing valid after it) and syncs the cut; removes a segment file that a
// crash left without a durable header while starting it; checks that the
// last segment continues the one before it; and rebuilds missing or damaged
// index files of sealed segments. Damage followed by valid batches is not a
// torn write: it is refused with Corruption unless the caller asked to
// discard everything after it.
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
#include "tokenfeed/log.h"
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
