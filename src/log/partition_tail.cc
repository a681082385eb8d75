#include "log/partition_tail.h"

#include "log/batch_access.h"
#include "log/log_format.h"
#include "log/segment_reader.h"
#include "log/segment_scan.h"

namespace tokenfeed::log {

namespace f = format;

namespace {

constexpr size_t kTailBufferBytes = size_t{1} << 20;

struct SegmentEnd {
  Offset end_offset;
  std::optional<uint64_t> last_batch_position;
  std::string problem;
};

// Every batch counted is checked whole (records and data checksum), from the
// last index entry on: a batch whose header is fine but whose data is
// damaged is not counted.
Result<SegmentEnd> ScanEnd(FileSystem* fs, const PartitionLayout& layout, Offset base, SegmentReader* reader) {
  Result<SegmentIndex> index = SegmentIndex::Load(fs, layout.IndexPath(base), base);
  TF_ASSIGN_OR_RETURN(SegmentScan scan,
                      ScanSegment(reader, index.ok() ? &*index : nullptr, std::nullopt, SegmentReader::Check::kChecksum));
  SegmentEnd end{scan.offset, scan.last_batch_position, {}};
  // A batch still being written is incomplete, never damaged (its bytes are
  // all in the file only once written): damaged means a torn write that the
  // writer's next open cuts, or damage that it reports.
  if (scan.stop == SegmentReader::Outcome::kDamaged) {
    end.problem = "segment '" + reader->path() + "' holds bytes at file position " + std::to_string(scan.position) +
                  ", after offset " + ToString(scan.offset) + ", that are not a valid batch (" + scan.problem +
                  "); they are not counted. Opening a writer cuts them if they were never synced, or reports "
                  "damage";
  }
  return end;
}

}  // namespace

Result<PartitionTail> ReadPartitionTail(FileSystem* fs, const PartitionLayout& layout, bool with_sizes) {
  PartitionTail tail;
  TF_ASSIGN_OR_RETURN(tail.segments, ListSegments(fs, layout));
  if (tail.segments.empty()) {
    return Status::Corruption(layout.Label() + ": its directory '" + layout.dir +
                              "' holds no segment file; the partition is damaged");
  }
  std::unique_ptr<SegmentReader> reader;
  for (;;) {
    const Offset base = tail.segments.back();
    TF_ASSIGN_OR_RETURN(reader, SegmentReader::Open(fs, layout.SegmentPath(base), base, kTailBufferBytes));
    if (reader->header_problem().empty()) break;
    TF_ASSIGN_OR_RETURN(uint64_t size, reader->FileSize());
    if (size >= f::kSegmentHeaderSize || tail.segments.size() == 1) {
      return Status::Corruption(layout.Label() + ": segment '" + reader->path() + "': " + reader->header_problem());
    }
    tail.segments.pop_back();  // being started by the writer right now (or left so by a crash)
  }
  tail.start_offset = tail.segments.front();
  const Offset last = tail.segments.back();
  TF_ASSIGN_OR_RETURN(SegmentEnd end, ScanEnd(fs, layout, last, reader.get()));
  tail.end_offset = end.end_offset;
  tail.problem = std::move(end.problem);
  if (end.last_batch_position) {
    tail.last_batch = BatchLocation{last, *end.last_batch_position};
  } else if (tail.segments.size() >= 2) {
    const Offset prev = tail.segments[tail.segments.size() - 2];
    TF_ASSIGN_OR_RETURN(auto prev_reader, SegmentReader::Open(fs, layout.SegmentPath(prev), prev, kTailBufferBytes));
    TF_ASSIGN_OR_RETURN(SegmentEnd prev_end, ScanEnd(fs, layout, prev, prev_reader.get()));
    if (prev_end.last_batch_position) tail.last_batch = BatchLocation{prev, *prev_end.last_batch_position};
  }
  if (with_sizes) {
    for (Offset base : tail.segments) {
      TF_ASSIGN_OR_RETURN(FileInfo info, fs->Stat(layout.SegmentPath(base)));
      tail.bytes += info.size;
    }
  }
  return tail;
}

Result<StoredRecord> ReadLastRecordOfBatch(FileSystem* fs, const PartitionLayout& layout, const BatchLocation& where) {
  const std::string path = layout.SegmentPath(where.segment_base);
  TF_ASSIGN_OR_RETURN(auto reader, SegmentReader::Open(fs, path, where.segment_base, kTailBufferBytes));
  SegmentReader::Batch b;
  TF_ASSIGN_OR_RETURN(SegmentReader::Outcome o, reader->ReadAt(where.position, SegmentReader::Check::kChecksum, &b));
  if (o != SegmentReader::Outcome::kBatch) {
    return Status::Corruption(layout.Label() + ": the last batch, in segment '" + path + "' at file position " +
                              std::to_string(where.position) + ", does not read back: " + reader->problem());
  }
  const BatchView view = BatchViewAccess::Make(b.bytes, b.header, b.header.record_count - 1);
  const LogRecord record = *view.begin();
  return StoredRecord{record.offset, std::string(record.as_string_view())};
}

}  // namespace tokenfeed::log
