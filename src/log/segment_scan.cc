#include "log/segment_scan.h"

#include "log/log_format.h"

namespace tokenfeed::log {

namespace f = format;
using Outcome = SegmentReader::Outcome;

bool WantsIndexEntry(uint64_t position, uint64_t last_indexed_position, uint32_t interval_bytes) {
  return position - last_indexed_position >= interval_bytes;
}

Result<SegmentScan> ScanSegment(SegmentReader* reader, const SegmentIndex* index, std::optional<Offset> target,
                                SegmentReader::Check check, const IndexCollector* collect) {
  uint64_t last_indexed = f::kSegmentHeaderSize;
  uint64_t position = f::kSegmentHeaderSize;
  Offset offset = reader->base_offset();
  SegmentReader::Batch batch;
  if (index != nullptr) {
    const std::optional<IndexEntry> entry =
        target ? index->Find(*target) : (index->entries().empty() ? std::nullopt : std::optional(index->entries().back()));
    if (entry) {
      // The index is only a hint: use the entry only when a batch with that
      // base offset really starts there.
      TF_ASSIGN_OR_RETURN(Outcome o, reader->ReadAt(entry->position, check, &batch));
      if (o == Outcome::kBatch && batch.header.base_offset == entry->offset) {
        position = entry->position;
        offset = entry->offset;
      }
    }
  }
  SegmentScan scan;
  for (;;) {
    TF_ASSIGN_OR_RETURN(Outcome o, reader->ReadAt(position, check, &batch));
    if (o != Outcome::kBatch) {
      scan.stop = o;
      scan.problem = reader->problem();
      break;
    }
    if (batch.header.base_offset != offset) {
      scan.stop = Outcome::kDamaged;
      scan.problem = "the batch here starts at offset " + ToString(batch.header.base_offset) +
                     " but the data before it ends at offset " + ToString(offset) + " (offsets must be dense)";
      break;
    }
    if (target && *target < batch.header.end_offset()) {
      scan.found = true;
      scan.last_batch_position = position;
      break;
    }
    if (collect != nullptr && WantsIndexEntry(position, last_indexed, collect->interval_bytes)) {
      collect->entries->push_back({offset, position});
      last_indexed = position;
    }
    scan.last_batch_position = position;
    offset = batch.header.end_offset();
    position += batch.header.batch_length;
  }
  scan.position = position;
  scan.offset = offset;
  return scan;
}

}  // namespace tokenfeed::log
