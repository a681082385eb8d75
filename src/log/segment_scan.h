// ScanSegment: walks the batches of one segment forward, starting from the
// best index entry, to find the batch that holds an offset (seek) or the end
// of the valid data (end offset, last record, recovery of sealed segments).
// It checks that offsets are dense; it does not decide what a damaged or
// incomplete tail means (the caller does: for a reader at the tail it is "not
// yet visible", for a sealed segment it is corruption).
// Not thread-safe: it drives one SegmentReader.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "log/segment_index.h"
#include "log/segment_reader.h"
#include "tokenfeed/ids.h"
#include "tokenfeed/status.h"

namespace tokenfeed::log {

struct SegmentScan {
  // With a target: found is true when the batch at `position` holds it.
  bool found = false;
  uint64_t position = 0;  // the found batch, or where the valid data ends
  Offset offset;          // base offset of the found batch, or the end offset
  std::optional<uint64_t> last_batch_position;  // the last complete batch seen
  // Why the scan stopped when nothing was found: kEnd, kIncomplete or kDamaged.
  SegmentReader::Outcome stop = SegmentReader::Outcome::kEnd;
  std::string problem;
};

// Collects index entries while scanning, one per `interval_bytes` of data.
struct IndexCollector {
  uint32_t interval_bytes = 0;
  std::vector<IndexEntry>* entries = nullptr;
};

// The index rule shared by the writer and every rebuild: a batch at
// `position` gets an entry when it starts at least `interval_bytes` after the
// last indexed batch (or after the segment header).
bool WantsIndexEntry(uint64_t position, uint64_t last_indexed_position, uint32_t interval_bytes);

// `index` may be null (no usable index). Without a target the scan runs to
// the end of the valid data. A collector needs index == null (a full scan).
Result<SegmentScan> ScanSegment(SegmentReader* reader, const SegmentIndex* index, std::optional<Offset> target,
                                SegmentReader::Check check, const IndexCollector* collect = nullptr);

}  // namespace tokenfeed::log
