#include "log/partition_recovery.h"

#include <algorithm>

#include "log/log_format.h"
#include "log/recovery_point.h"
#include "log/segment_reader.h"
#include "log/segment_scan.h"

namespace tokenfeed::log {

namespace f = format;
using Outcome = SegmentReader::Outcome;

namespace {

constexpr size_t kRecoveryBufferBytes = size_t{8} << 20;

std::string Num(uint64_t v) { return std::to_string(v); }

// Removes a segment file (and its index) that a crash left without a
// durable header while a new segment was being started.
Status RemoveUnstartedSegment(FileSystem* fs, const PartitionLayout& layout, Offset base) {
  TF_RETURN_IF_ERROR(fs->RemoveFile(layout.SegmentPath(base)));
  Status s = fs->RemoveFile(layout.IndexPath(base));
  if (!s.ok() && !s.IsNotFound()) return s;
  return fs->SyncDir(layout.dir);
}

Status RebuildSealedIndex(FileSystem* fs, const PartitionLayout& layout, Offset base, uint32_t interval) {
  TF_ASSIGN_OR_RETURN(auto reader, SegmentReader::Open(fs, layout.SegmentPath(base), base, kRecoveryBufferBytes));
  if (!reader->header_problem().empty()) {
    return Status::Corruption(layout.Label() + ": sealed segment '" + reader->path() + "': " +
                              reader->header_problem() + "; restore the partition from a copy");
  }
  std::vector<IndexEntry> entries;
  IndexCollector collect{interval, &entries};
  TF_ASSIGN_OR_RETURN(SegmentScan scan, ScanSegment(reader.get(), nullptr, std::nullopt, SegmentReader::Check::kRecords, &collect));
  // A damaged sealed segment still gets the index of its good part; readers
  // report the damage when they reach it.
  (void)scan;
  return WriteFileAtomically(fs, layout.IndexPath(base), SegmentIndex::Encode(base, entries));
}

struct TailVerdict {
  bool damage = false;
  std::string what;  // for a message: where and what is wrong
};

// Whether what ends the active segment's valid data at scan.position is a
// torn tail (cut without asking) or damage (the writer stops; the user
// chooses). The rule, docs/log_format.md "Torn tail or damage":
//  * with a recovery point for this segment (`synced`): anything wrong
//    before it is damage, since those bytes were synced; anything from it
//    on was never synced and is a torn tail, even with valid batches after
//    it (a power cut writes unsynced pages back in any order);
//  * without one: damage when a valid batch follows, else a torn tail.
Result<TailVerdict> JudgeTail(SegmentReader* reader, const SegmentScan& scan, uint64_t file_size,
                              std::optional<uint64_t> synced) {
  TailVerdict v;
  const std::string at = "at file position " + Num(scan.position) + " (offset " + ToString(scan.offset) + ")";
  if (synced) {
    if (scan.position >= *synced) return v;
    v.damage = true;
    v.what = (scan.position < file_size ? "has a damaged batch " + at + ": " + scan.problem
                                        : "ends " + at + ", before the end of the data that was synced") +
             "; the writer had synced this segment through position " + Num(*synced);
    return v;
  }
  if (scan.stop != Outcome::kDamaged) return v;
  TF_ASSIGN_OR_RETURN(std::optional<uint64_t> valid, reader->FindNextValidBatch(scan.position + 1));
  if (!valid) return v;
  v.damage = true;
  v.what = "has a damaged batch " + at + ": " + scan.problem + ", followed by a valid batch at position " +
           Num(*valid);
  return v;
}

// Copies bytes [from, to) of the segment to a new file beside it,
// "<segment>.damaged-<from>", synced with its directory entry, before
// recovery cuts them off: damage discarded on request is kept, not lost.
Result<std::string> Quarantine(FileSystem* fs, const PartitionLayout& layout, SegmentReader* reader, uint64_t from,
                               uint64_t to) {
  std::string path = reader->path() + ".damaged-" + Num(from);
  Result<std::unique_ptr<WritableFile>> file = fs->OpenWritable(path, FileSystem::WriteMode::kCreateNew);
  for (int n = 1; !file.ok() && file.status().code() == StatusCode::kAlreadyExists && n < 100; ++n) {
    path = reader->path() + ".damaged-" + Num(from) + "." + Num(n);
    file = fs->OpenWritable(path, FileSystem::WriteMode::kCreateNew);
  }
  const std::string context = layout.Label() + ": keeping the damaged bytes in '" + path + "'";
  if (!file.ok()) return file.status().WithContext(context);
  constexpr uint64_t kChunk = 4 << 20;
  for (uint64_t at = from; at < to; at += kChunk) {
    TF_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, reader->ReadPart(at, std::min(kChunk, to - at)));
    if (bytes.empty()) break;
    TF_RETURN_IF_ERROR((*file)->Append(bytes).WithContext(context));
  }
  TF_RETURN_IF_ERROR((*file)->Sync().WithContext(context));
  TF_RETURN_IF_ERROR((*file)->Close().WithContext(context));
  TF_RETURN_IF_ERROR(fs->SyncDir(layout.dir).WithContext(context));
  return path;
}

}  // namespace

Result<RecoveredPartition> RecoverPartition(FileSystem* fs, const PartitionLayout& layout,
                                            uint32_t index_interval_bytes, bool discard_after_damage) {
  RecoveredPartition out;
  TF_ASSIGN_OR_RETURN(out.segments, ListSegments(fs, layout));
  if (out.segments.empty()) {
    return Status::Corruption(layout.Label() + ": its directory '" + layout.dir +
                              "' holds no segment file, although creating a topic writes one; files were deleted. "
                              "Restore the partition from a copy, or delete and recreate the topic");
  }

  // 1. A crash while starting a new segment can leave its file without a
  // durable header. Such a file never held acknowledged data: the writer
  // syncs a new segment's header and directory entry before appending.
  std::unique_ptr<SegmentReader> reader;
  for (;;) {
    const Offset base = out.segments.back();
    TF_ASSIGN_OR_RETURN(reader, SegmentReader::Open(fs, layout.SegmentPath(base), base, kRecoveryBufferBytes));
    if (reader->header_problem().empty()) break;
    const std::string problem = reader->header_problem();
    if (out.segments.size() == 1) {
      return Status::Corruption(layout.Label() + ": segment '" + reader->path() + "': " + problem +
                                ". The first segment is written with the topic, so this is damage; restore the "
                                "partition from a copy");
    }
    TF_ASSIGN_OR_RETURN(std::optional<uint64_t> valid, reader->FindNextValidBatch(f::kSegmentHeaderSize));
    if (valid) {
      return Status::Corruption(layout.Label() + ": segment '" + reader->path() + "': " + problem +
                                ", yet it holds a valid batch at file position " + Num(*valid) +
                                "; refusing to remove it. Restore the partition from a copy");
    }
    TF_RETURN_IF_ERROR(RemoveUnstartedSegment(fs, layout, base).WithContext(layout.Label()));
    out.report.removed_segments.push_back(reader->path());
    out.segments.pop_back();
  }
  out.active_base = out.segments.back();
  TF_ASSIGN_OR_RETURN(std::optional<RecoveryPoint> point, LoadRecoveryPoint(fs, layout.RecoveryPointPath()));
  std::optional<uint64_t> synced;
  if (point && point->segment_base == out.active_base) synced = point->position;

  // 2. Read the whole active segment, checking every batch.
  IndexCollector collect{index_interval_bytes, &out.active_index};
  TF_ASSIGN_OR_RETURN(SegmentScan scan,
                      ScanSegment(reader.get(), nullptr, std::nullopt, SegmentReader::Check::kChecksum, &collect));
  TF_ASSIGN_OR_RETURN(uint64_t file_size, reader->FileSize());
  if (scan.stop != Outcome::kEnd || scan.position < file_size || (synced && scan.position < *synced)) {
    TF_ASSIGN_OR_RETURN(TailVerdict verdict, JudgeTail(reader.get(), scan, file_size, synced));
    if (verdict.damage) {
      const std::string what = "segment '" + reader->path() + "' " + verdict.what;
      if (!discard_after_damage) {
        return Status::Corruption(
            layout.Label() + ": " + what + ". That is damage, not a torn write, so the writer will not open. Keep a "
            "copy of the segment, then restore the partition from a copy, or let the writer set the damaged bytes "
            "aside and go on (tokenfeed ingest --discard-after-damage, WriterOptions::discard_after_damage; by "
            "hand: cp '" + reader->path() + "' '" +
            reader->path() + ".damaged' && truncate -s " + Num(scan.position) + " '" + reader->path() +
            "' && rm '" + layout.RecoveryPointPath() + "'), which loses every record from offset " +
            ToString(scan.offset) + " on (docs/log_format.md, \"Damage: what happens and how to choose\")");
      }
      if (scan.position < file_size) {
        TF_ASSIGN_OR_RETURN(out.report.quarantined_file,
                            Quarantine(fs, layout, reader.get(), scan.position, file_size));
      }
      out.report.damage = true;
      scan.problem = "discarded on request: " + what;
    }
    if (synced && scan.position < *synced) {
      // The recovery point must not claim more than the segment will hold
      // from now on, before the cut makes it so.
      RecoveryPointWriter lowered;
      TF_RETURN_IF_ERROR(lowered.Start(fs, layout.RecoveryPointPath(), {out.active_base, scan.position})
                             .WithContext(layout.Label()));
      lowered.Close();
    }
  }
  if (scan.position < file_size) {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                        fs->OpenWritable(reader->path(), FileSystem::WriteMode::kAppend));
    TF_RETURN_IF_ERROR(file->Truncate(scan.position).WithContext(layout.Label() + ": cutting a torn tail"));
    TF_RETURN_IF_ERROR(file->Sync().WithContext(layout.Label() + ": cutting a torn tail"));
    TF_RETURN_IF_ERROR(file->Close());
    reader->Invalidate();
    out.report.truncated_segment = reader->path();
    out.report.truncated_at_position = scan.position;
    out.report.truncated_bytes = file_size - scan.position;
    out.report.truncation_reason = scan.problem.empty() ? "bytes after the last batch" : scan.problem;
  }
  out.active_size = scan.position;
  out.end_offset = scan.offset;
  out.last_indexed_position = out.active_index.empty() ? f::kSegmentHeaderSize : out.active_index.back().position;
  if (scan.last_batch_position) out.last_batch = BatchLocation{out.active_base, *scan.last_batch_position};

  // 3. The active segment must continue the sealed one before it.
  if (out.segments.size() >= 2) {
    const Offset prev = out.segments[out.segments.size() - 2];
    TF_ASSIGN_OR_RETURN(auto prev_reader, SegmentReader::Open(fs, layout.SegmentPath(prev), prev, kRecoveryBufferBytes));
    if (!prev_reader->header_problem().empty()) {
      return Status::Corruption(layout.Label() + ": sealed segment '" + prev_reader->path() + "': " +
                                prev_reader->header_problem() + "; restore the partition from a copy");
    }
    Result<SegmentIndex> prev_index = SegmentIndex::Load(fs, layout.IndexPath(prev), prev);
    TF_ASSIGN_OR_RETURN(SegmentScan prev_scan, ScanSegment(prev_reader.get(), prev_index.ok() ? &*prev_index : nullptr,
                                                          std::nullopt, SegmentReader::Check::kChecksum));
    if (prev_scan.stop != Outcome::kEnd) {
      return Status::Corruption(layout.Label() + ": sealed segment '" + prev_reader->path() + "' is damaged at file position " +
                                Num(prev_scan.position) + " (offset " + ToString(prev_scan.offset) + "): " +
                                prev_scan.problem + ". Sealed segments were synced when sealed, so this is damage; "
                                "restore the partition from a copy");
    }
    if (prev_scan.offset != out.active_base) {
      return Status::Corruption(layout.Label() + ": sealed segment '" + prev_reader->path() + "' ends at offset " +
                                ToString(prev_scan.offset) + " but the next segment starts at offset " +
                                ToString(out.active_base) + ": records are missing or duplicated; restore the "
                                "partition from a copy");
    }
    if (!out.last_batch && prev_scan.last_batch_position) {
      out.last_batch = BatchLocation{prev, *prev_scan.last_batch_position};
    }
  }

  // 4. Sealed segments need a usable index file; rebuild any that is not.
  for (size_t i = 0; i + 1 < out.segments.size(); ++i) {
    const Offset base = out.segments[i];
    if (SegmentIndex::Load(fs, layout.IndexPath(base), base).ok()) continue;
    TF_RETURN_IF_ERROR(RebuildSealedIndex(fs, layout, base, index_interval_bytes).WithContext(layout.Label()));
    ++out.report.rebuilt_indexes;
  }
  return out;
}

}  // namespace tokenfeed::log
